import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The SciFact train split (BEIR layout) read from ../shared/data; it is never
 * copied into the repository. SCIFACT_DIR overrides the location.
 */
export const scifactDir = process.env.SCIFACT_DIR ?? join(import.meta.dirname, '../../../shared/data/ir/scifact-train');

export interface ScifactDoc {
  _id: string;
  title: string;
  text: string;
}
export interface ScifactQuery {
  _id: string;
  text: string;
}

const jsonl = <T>(file: string): T[] =>
  readFileSync(join(scifactDir, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);

export function loadScifact() {
  const corpus = jsonl<ScifactDoc>('corpus.jsonl');
  const queries = jsonl<ScifactQuery>('queries.jsonl');
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(join(scifactDir, 'qrels/train.tsv'), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.trim().split('\t');
    if (!q || !d) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  return { corpus, queries: queries.filter((q) => qrels.has(q._id)), qrels };
}

/** nDCG@k with binary/graded gains, as in BEIR (pytrec_eval). */
export function ndcgAt(k: number, ranked: string[], relevant: Map<string, number>): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    const g = relevant.get(id) ?? 0;
    if (g > 0) dcg += (2 ** g - 1) / Math.log2(i + 2);
  });
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, k);
  let idcg = 0;
  ideal.forEach((g, i) => (idcg += (2 ** g - 1) / Math.log2(i + 2)));
  return idcg === 0 ? 0 : dcg / idcg;
}

export function recallAt(k: number, ranked: string[], relevant: Map<string, number>): number {
  const top = new Set(ranked.slice(0, k));
  let hit = 0;
  for (const id of relevant.keys()) if (top.has(id)) hit++;
  return relevant.size === 0 ? 0 : hit / relevant.size;
}

/** Distinct document ids in rank order (several chunks of one document count once). */
export function distinctInOrder(ids: string[]): string[] {
  return [...new Set(ids)];
}
