const fnv = (word: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
};

/**
 * Hashed word 3-shingles of a text: two chunks sharing most of them say the same
 * thing. Long texts keep a fixed 1-in-4 sample of them (chosen by hash, so both
 * texts sample the same shingles), which estimates the Jaccard overlap well at a
 * quarter of the cost.
 */
function shingles(text: string): Set<number> {
  const w = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(fnv);
  const all: number[] = [];
  if (w.length < 3) all.push(fnv(w.join(' ')));
  for (let i = 0; i + 3 <= w.length; i++) all.push((Math.imul(w[i]!, 31) ^ Math.imul(w[i + 1]!, 17) ^ w[i + 2]!) >>> 0);
  const sampled = all.filter((h) => (h & 3) === 0);
  return new Set(sampled.length >= 16 ? sampled : all);
}

/**
 * Keeps the first (best-ranked) of each group of near-duplicate chunks (shingle
 * Jaccard at or above the threshold), e.g. the same paragraph in two uploaded
 * files; stops once `limit` distinct hits are kept. An inverted index of the
 * kept hits' shingles makes each comparison cost the new hit's size only.
 */
export function collapseNearDuplicates<T>(
  hits: T[],
  textOf: (hit: T) => string,
  options: { threshold?: number; limit?: number } = {},
): { kept: T[]; examined: number } {
  const threshold = options.threshold ?? 0.85;
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const kept: T[] = [];
  const sizes: number[] = [];
  const owners = new Map<number, number[]>();
  let examined = 0;
  for (const hit of hits) {
    if (kept.length >= limit) break;
    examined++;
    const sh = shingles(textOf(hit));
    const shared = new Map<number, number>();
    for (const s of sh) for (const k of owners.get(s) ?? []) shared.set(k, (shared.get(k) ?? 0) + 1);
    let duplicate = false;
    for (const [k, n] of shared) {
      if (n / (sh.size + sizes[k]! - n) >= threshold) {
        duplicate = true;
        break;
      }
    }
    if (duplicate) continue;
    const id = kept.length;
    kept.push(hit);
    sizes.push(sh.size);
    for (const s of sh) {
      const list = owners.get(s);
      if (list) list.push(id);
      else owners.set(s, [id]);
    }
  }
  return { kept, examined };
}
