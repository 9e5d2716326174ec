/**
 * Sentence vectors from a transformer's last hidden state, [batch, seq, dim]
 * flattened row-major: mean of the token vectors under the attention mask
 * (sentence-transformers' MiniLM) or the [CLS] vector (BGE), L2-normalised.
 */
export type Pooling = 'mean' | 'cls';

export function poolHidden(
  hidden: Float32Array,
  mask: ArrayLike<number | bigint>,
  dims: { batch: number; seq: number; dim: number },
  pooling: Pooling,
): number[][] {
  const { batch, seq, dim } = dims;
  if (hidden.length !== batch * seq * dim) throw new Error(`hidden state of ${hidden.length} values is not ${batch}x${seq}x${dim}`);
  const out: number[][] = [];
  for (let b = 0; b < batch; b++) {
    const v = new Array<number>(dim).fill(0);
    if (pooling === 'cls') {
      const base = b * seq * dim;
      for (let d = 0; d < dim; d++) v[d] = hidden[base + d]!;
    } else {
      let n = 0;
      for (let t = 0; t < seq; t++) {
        if (Number(mask[b * seq + t]) === 0) continue;
        n++;
        const base = (b * seq + t) * dim;
        for (let d = 0; d < dim; d++) v[d]! += hidden[base + d]!;
      }
      if (n > 0) for (let d = 0; d < dim; d++) v[d]! /= n;
    }
    out.push(l2normalize(v));
  }
  return out;
}

export function l2normalize(v: number[]): number[] {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  return norm === 0 ? v : v.map((x) => x / norm);
}

/** Pads token-id rows to the longest one: ids, attention mask and token types as int64, row-major. */
export function padBatch(rows: number[][], padId: number): { ids: BigInt64Array; mask: BigInt64Array; types: BigInt64Array; seq: number } {
  const seq = Math.max(1, ...rows.map((r) => r.length));
  const ids = new BigInt64Array(rows.length * seq).fill(BigInt(padId));
  const mask = new BigInt64Array(rows.length * seq);
  rows.forEach((r, b) =>
    r.forEach((id, t) => {
      ids[b * seq + t] = BigInt(id);
      mask[b * seq + t] = 1n;
    }),
  );
  return { ids, mask, types: new BigInt64Array(rows.length * seq), seq };
}
