import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EmbeddingPurpose, Embeddings } from '@kb/ai';

/**
 * An embedding model with its vectors kept on disk between benchmark runs
 * (.cache/, ignored by git): the second run of a benchmark over a corpus costs
 * no inference. Keyed by model, purpose and text.
 */
export function diskCachedEmbeddings(inner: Embeddings & { dimensions: number }, file: string): Embeddings {
  const dim = inner.dimensions;
  const cache = new Map<string, number[]>();
  if (existsSync(file)) {
    const buf = readFileSync(file);
    let o = 0;
    while (o + 4 <= buf.length) {
      const kl = buf.readUInt32LE(o);
      o += 4;
      const key = buf.subarray(o, o + kl).toString('utf8');
      o += kl;
      if (o + dim * 4 > buf.length) break;
      cache.set(key, Array.from(new Float32Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + dim * 4))));
      o += dim * 4;
    }
  } else mkdirSync(dirname(file), { recursive: true });
  const keyOf = (purpose: EmbeddingPurpose, t: string) =>
    createHash('sha1').update(`${inner.model}\u0000${purpose}\u0000${t}`).digest('hex');
  return {
    model: inner.model,
    async embed(texts, purpose = 'document') {
      const need = [...new Set(texts.filter((t) => !cache.has(keyOf(purpose, t))))];
      if (need.length > 0) {
        const got = await inner.embed(need, purpose);
        const parts: Buffer[] = [];
        need.forEach((t, i) => {
          const key = keyOf(purpose, t);
          cache.set(key, got[i]!);
          const k = Buffer.from(key);
          const h = Buffer.alloc(4);
          h.writeUInt32LE(k.length);
          parts.push(h, k, Buffer.from(Float32Array.from(got[i]!).buffer));
        });
        appendFileSync(file, Buffer.concat(parts));
      }
      return texts.map((t) => cache.get(keyOf(purpose, t))!);
    },
  };
}
