/** The ingest benchmark's corpus: copies of the twelve format samples under test/fixtures/formats. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, SAMPLES } from '../format-samples.js';

export { SAMPLES };

export interface CorpusFile {
  name: string;
  bytes: Buffer;
}

/** A copy of a sample with different bytes (so dedupe does not skip it) and the same content. */
export function variant(name: string, n: number): Buffer {
  const bytes = readFileSync(join(fixturesDir, name));
  const tag = `variant ${n}`;
  if (name.endsWith('.json')) return Buffer.from(JSON.stringify({ ...JSON.parse(bytes.toString()), variant: tag }));
  if (/\.(xml|html)$/.test(name)) return Buffer.concat([bytes, Buffer.from(`\n<!-- ${tag} -->\n`)]);
  if (/\.(txt|csv)$/.test(name)) return Buffer.concat([bytes, Buffer.from(`${tag}\n`)]);
  // Binary containers tolerate trailing bytes (PDF after %%EOF, zip after its directory, OLE2 after its sectors).
  return Buffer.concat([bytes, Buffer.from(`\n% ${tag}\n`)]);
}

/** `rounds` copies of every sample, named `<prefix>-<round>.<ext>`, variants `first`, `first + 1`, ... */
export function corpus(prefix: string, first: number, rounds: number): CorpusFile[] {
  return Array.from({ length: rounds }, (_, n) =>
    SAMPLES.map((name) => ({ name: name.replace('sample', `${prefix}-${n}`), bytes: variant(name, first + n) })),
  ).flat();
}
