/**
 * Reciprocal rank fusion (Cormack et al. 2009): each list contributes
 * 1 / (k + rank) per item; k = 60 is the customary constant.
 */
export function reciprocalRankFusion<T>(lists: T[][], keyOf: (item: T) => string, k = 60): { item: T; score: number }[] {
  const fused = new Map<string, { item: T; score: number }>();
  for (const list of lists) {
    list.forEach((item, rank) => {
      const key = keyOf(item);
      const entry = fused.get(key) ?? { item, score: 0 };
      entry.score += 1 / (k + rank + 1);
      fused.set(key, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * How lexical (BM25) and dense (cosine) candidates are merged:
 * - rrf: weighted reciprocal rank, 2 (1 - w) / (k + rank_bm25) + 2 w / (k + rank_dense)
 *   (w = 0.5 is plain RRF);
 * - convex: each list's scores min-max scaled to [0, 1] over its candidates (0
 *   when absent from a list), then (1 - w) bm25 + w dense.
 * w is the dense weight. The defaults of the search index were chosen by k-fold
 * cross-validation on SciFact train queries (test/bench/search-relevance.bench.ts).
 */
export type FusionOptions = { method: 'rrf'; k: number; denseWeight: number } | { method: 'convex'; denseWeight: number };

/** Chosen by 5-fold cross-validation on SciFact train queries with bge-small-en-v1.5 (every fold's choice made without it: 0.6, 0.6, 0.6, 0.6, 0.7). */
export const DEFAULT_FUSION: FusionOptions = { method: 'convex', denseWeight: 0.6 };

export function fuseRanked<T>(
  lexical: { item: T; score: number }[],
  dense: { item: T; score: number }[],
  keyOf: (item: T) => string,
  options: FusionOptions = DEFAULT_FUSION,
): { item: T; score: number }[] {
  const w = Math.min(1, Math.max(0, options.denseWeight));
  const fused = new Map<string, { item: T; score: number }>();
  const add = (list: { item: T; score: number }[], weight: number, contribution: (i: number) => number) =>
    list.forEach((entry, i) => {
      const key = keyOf(entry.item);
      const e = fused.get(key) ?? { item: entry.item, score: 0 };
      e.score += weight * contribution(i);
      fused.set(key, e);
    });
  if (options.method === 'rrf') {
    const rr = (i: number) => 1 / (options.k + i + 1);
    add(lexical, 2 * (1 - w), rr);
    add(dense, 2 * w, rr);
  } else {
    const scaled = (list: { score: number }[]) => {
      let lo = Infinity;
      let hi = -Infinity;
      for (const e of list) {
        lo = Math.min(lo, e.score);
        hi = Math.max(hi, e.score);
      }
      return (i: number) => (hi > lo ? (list[i]!.score - lo) / (hi - lo) : 1);
    };
    add(lexical, 1 - w, scaled(lexical));
    add(dense, w, scaled(dense));
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
}
