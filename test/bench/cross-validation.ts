import { createHash } from 'node:crypto';

/**
 * Held-out evaluation for tuning on one split: a fixed share of the queries is
 * held out (never looked at by any choice), the rest is cut into k folds, and
 * each setting is chosen on k - 1 folds and scored on the fold left out.
 */

const bucket = (salt: string, id: string, n: number) => createHash('sha1').update(`${salt}:${id}`).digest().readUInt32BE(0) % n;

/** Stable split of query ids: about `share` of them held out, the rest in k folds. */
export function splitQueries(ids: string[], options: { heldOutShare: number; folds: number }) {
  const heldOutBuckets = Math.round(1 / options.heldOutShare);
  const heldOut: string[] = [];
  const folds: string[][] = Array.from({ length: options.folds }, () => []);
  for (const id of ids) {
    if (bucket('held-out', id, heldOutBuckets) === 0) heldOut.push(id);
    else folds[bucket('fold', id, options.folds)]!.push(id);
  }
  return { heldOut, folds };
}

export const meanOver = (scores: Map<string, number>, ids: string[]) =>
  ids.length === 0 ? 0 : ids.reduce((s, id) => s + (scores.get(id) ?? 0), 0) / ids.length;

/** The setting with the best mean score on these queries (the first one on ties: list settings simplest first). */
export function bestSetting<S>(perSetting: { setting: S; scores: Map<string, number> }[], ids: string[]) {
  let best = perSetting[0]!;
  let bestScore = meanOver(best.scores, ids);
  for (const entry of perSetting.slice(1)) {
    const score = meanOver(entry.scores, ids);
    if (score > bestScore + 1e-12) {
      best = entry;
      bestScore = score;
    }
  }
  return { ...best, score: bestScore };
}

/** For each fold: the setting chosen on the other folds and its score on this one. */
export function crossValidate<S>(perSetting: { setting: S; scores: Map<string, number> }[], folds: string[][]) {
  return folds.map((fold, i) => {
    const train = folds.flatMap((f, j) => (j === i ? [] : f));
    const chosen = bestSetting(perSetting, train);
    return {
      fold: i,
      queries: fold.length,
      setting: chosen.setting,
      trainScore: chosen.score,
      heldOutScore: meanOver(chosen.scores, fold),
    };
  });
}
