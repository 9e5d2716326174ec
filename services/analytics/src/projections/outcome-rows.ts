/**
 * The stored form of a prompt-outcome row: the prompt ids, sorted, and beside
 * them each prompt's answers, won and lost. A row holds every prompt of the
 * organization, and the prompts report reads one per month of its window: as
 * an object with a key per prompt (each value an array) a year of 1,000
 * prompts took 6 to 8 ms to parse; as columns, about 2. Sorted ids make a row
 * the same whatever order its answers were folded in, and let two rows be
 * added in one pass.
 */
export type OutcomeColumns = [prompt_ids: string[], answers: number[], won: number[], lost: number[]];

/** Rows folded before this form keep `prompts`, an object of [answers, won, lost] per prompt id; both are read. */
export type LegacyOutcomes = { prompts: Record<string, [number, number, number]> };
export type StoredOutcomes = { outcomes: OutcomeColumns } | LegacyOutcomes;

const isLegacy = (doc: StoredOutcomes): doc is LegacyOutcomes => !('outcomes' in doc);

/** Columns from [answers, won, lost] per prompt id (a batch's delta or a row of the earlier form). */
export function outcomeColumnsOf(prompts: Record<string, readonly number[]>): OutcomeColumns {
  const ids = Object.keys(prompts).sort();
  const at = (i: number) => ids.map((id) => prompts[id]![i]!);
  return [ids, at(0), at(1), at(2)];
}

/** The stored row's columns, whichever form it has. */
export const columnsOf = (doc: StoredOutcomes): OutcomeColumns => (isLegacy(doc) ? outcomeColumnsOf(doc.prompts) : doc.outcomes);

/** a + b in one pass over both sorted id lists. */
export function addOutcomeColumns(a: OutcomeColumns, b: OutcomeColumns): OutcomeColumns {
  const [ak, an, aw, al] = a;
  const [bk, bn, bw, bl] = b;
  if (bk.length === 0) return a;
  if (ak.length === 0) return b;
  const out: OutcomeColumns = [[], [], [], []];
  const push = (k: string, n: number, w: number, l: number) => {
    out[0].push(k);
    out[1].push(n);
    out[2].push(w);
    out[3].push(l);
  };
  let i = 0;
  let j = 0;
  while (i < ak.length || j < bk.length) {
    if (j >= bk.length || (i < ak.length && ak[i]! < bk[j]!)) {
      push(ak[i]!, an[i]!, aw[i]!, al[i]!);
      i++;
    } else if (i >= ak.length || bk[j]! < ak[i]!) {
      push(bk[j]!, bn[j]!, bw[j]!, bl[j]!);
      j++;
    } else {
      push(ak[i]!, an[i]! + bn[j]!, aw[i]! + bw[j]!, al[i]! + bl[j]!);
      i++;
      j++;
    }
  }
  return out;
}

/** [answers, won, lost] per prompt summed over stored rows of either form. */
export function sumOutcomeRows(docs: readonly StoredOutcomes[]): Map<string, [number, number, number]> {
  const out = new Map<string, [number, number, number]>();
  for (const doc of docs) {
    const [ids, n, w, l] = columnsOf(doc);
    for (let i = 0; i < ids.length; i++) {
      const cur = out.get(ids[i]!);
      if (cur) {
        cur[0] += n[i]!;
        cur[1] += w[i]!;
        cur[2] += l[i]!;
      } else out.set(ids[i]!, [n[i]!, w[i]!, l[i]!]);
    }
  }
  return out;
}
