import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { TestSystem } from '../e2e/harness.js';
import type { ScifactDoc } from './scifact.js';

/**
 * Ingest of SciFact abstracts through POST /org/kb/raw, timed to the two moments a
 * user sees: every abstract searchable by its words (the embedded index holds its
 * content item) and, with embeddings, by its meaning (every chunk has its vector).
 * The system runs in this process, so the difference of CPU seconds between a
 * default and a keyword-only ingest is the cost of the vectors.
 */
export interface IngestTiming {
  docs: number;
  chunks: number;
  acceptedMs: number;
  keywordMs: number;
  /** Absent for a keyword-only system. */
  semanticMs?: number;
  /** CPU seconds of the process from the first upload to the last readiness awaited. */
  cpuSeconds: number;
}

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function indexCounts(t: TestSystem): { contents: number; chunks: number; withVectors: number } {
  const db = new Database(join(t.dataDir, 'knowledge-base-search.db'), { readonly: true, fileMustExist: false });
  try {
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      contents: count('SELECT count(*) AS n FROM contents'),
      chunks: count('SELECT count(*) AS n FROM chunks'),
      withVectors: count('SELECT count(*) AS n FROM chunks WHERE embedding IS NOT NULL'),
    };
  } catch {
    return { contents: 0, chunks: 0, withVectors: 0 }; // not created yet
  } finally {
    db.close();
  }
}

/** Ingests every abstract (16 clients) and waits for keyword and, when asked, semantic readiness; the content ids by SciFact id. */
export async function ingestScifact(
  t: TestSystem,
  corpus: ScifactDoc[],
  label: string,
  semantic: boolean,
): Promise<{ docOf: Map<string, string>; timing: IngestTiming }> {
  const docOf = new Map<string, string>();
  const cpuOf = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const cpuAtStart = cpuOf();
  const started = performance.now();
  await pool(corpus, 16, async (doc) => {
    const body = { title: doc.title || doc._id, text: doc.text };
    let res = await t.api('POST', '/org/kb/raw', { body });
    for (let attempt = 1; (res.status === 503 || res.status === 429) && attempt < 10; attempt++) {
      await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      res = await t.api('POST', '/org/kb/raw', { body });
    }
    // SciFact has a few abstracts with the same text: the later one is a duplicate (422) unless both arrive at once.
    if (res.status === 422 && res.body?.error?.code === 'duplicate') return;
    if (res.status !== 202) throw new Error(`ingest of ${doc._id} answered ${res.status}: ${res.text}`);
    docOf.set(res.body.content_id ?? res.body.id, doc._id);
  });
  const accepted = docOf.size;
  const acceptedMs = performance.now() - started;
  let keywordMs: number | undefined;
  for (;;) {
    const n = indexCounts(t);
    const now = performance.now();
    if (keywordMs === undefined && n.contents >= accepted) keywordMs = now - started;
    process.stdout.write(
      `\r${label}: searchable by words ${n.contents}/${accepted}` + (semantic ? `, chunks with vectors ${n.withVectors}/${n.chunks}` : ''),
    );
    if (keywordMs !== undefined && (!semantic || n.withVectors >= n.chunks)) {
      const timing: IngestTiming = {
        docs: accepted,
        chunks: n.chunks,
        acceptedMs,
        keywordMs,
        cpuSeconds: cpuOf() - cpuAtStart,
        ...(semantic && { semanticMs: now - started }),
      };
      process.stdout.write('\n');
      return { docOf, timing };
    }
    await new Promise((r) => setTimeout(r, keywordMs === undefined ? 100 : 1000));
  }
}

/** The comparison of a keyword-only ingest and the default's, as printed by the benches. */
export function printIngestComparison(keywordOnly: IngestTiming, hybrid: IngestTiming): void {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const rate = (ms: number) => `${((keywordOnly.docs * 1000) / ms).toFixed(1)} docs/s`;
  console.log(
    `\n| ingest of ${keywordOnly.docs} abstracts (${hybrid.chunks} chunks), same run | accepted | searchable by words | searchable by meaning |`,
  );
  console.log('|---|---|---|---|');
  console.log(
    `| keyword only (EMBEDDINGS=none) | ${s(keywordOnly.acceptedMs)} | ${s(keywordOnly.keywordMs)} (${rate(keywordOnly.keywordMs)}) | - |`,
  );
  console.log(
    `| default (hybrid) | ${s(hybrid.acceptedMs)} | ${s(hybrid.keywordMs)} (${rate(hybrid.keywordMs)}) | ${s(hybrid.semanticMs!)} (${rate(hybrid.semanticMs!)}) |`,
  );
  const vectorPhase = hybrid.semanticMs! - hybrid.keywordMs;
  console.log(
    `time to searchable by words, default / keyword only: ${(hybrid.keywordMs / keywordOnly.keywordMs).toFixed(2)}x (target <= 1.1x)`,
  );
  console.log(
    `vectors: every abstract searchable by meaning ${s(vectorPhase)} after the last was searchable by words; ` +
      `semantic-ready throughput ${rate(hybrid.semanticMs!)} from the first upload; the vectors cost ` +
      `${(hybrid.cpuSeconds - keywordOnly.cpuSeconds).toFixed(0)} CPU-seconds more than keyword only: ` +
      `${(hybrid.docs / Math.max(1e-9, hybrid.cpuSeconds - keywordOnly.cpuSeconds)).toFixed(1)} docs/s per core`,
  );
}
