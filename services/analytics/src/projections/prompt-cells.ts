import type { StoreTransaction } from '@kb/store';
import { dict, emptyCounts, mergeCounts, type Counts } from '../domain/counts.js';
import { TIERS } from '../domain/sources.js';
import {
  ALL,
  DAILY_COUNTS,
  PROMPT_COUNTS,
  TAG_ROW_PREFIX,
  countRowId,
  jsonStrings,
  type CountDoc,
  type CountRowKey,
  type PromptCountsDoc,
} from './collections.js';

/**
 * A prompt's own count rows live as cells of one document per prompt and
 * period (PROMPT_COUNTS): its (model, location) rows and their roll-ups over
 * models and locations, up to 24 with 5 models and 3 locations. In a daily
 * import every answer of a prompt lands in the same cells document, so a
 * prompt-day costs two documents (the day and its month) instead of 48 rows
 * read and written one by one. The roll-ups over every prompt and the tag rows
 * stay rows of their own in DAILY_COUNTS (each is shared by many prompts).
 *
 * Organizations whose extent was created before cells existed keep every row
 * in DAILY_COUNTS (`prompt_cells` absent) until `rebuild-read-models analytics`.
 */
export const inCells = (key: Pick<CountRowKey, 'prompt_id'>): boolean => key.prompt_id !== ALL && !key.prompt_id.startsWith(TAG_ROW_PREFIX);

export const cellsDocId = (key: Pick<CountRowKey, 'org_id' | 'day' | 'prompt_id'>): string =>
  jsonStrings([key.org_id, key.day, key.prompt_id]);

export const cellName = (key: Pick<CountRowKey, 'model' | 'location'>): string => jsonStrings([key.model, key.location]);

/**
 * A cell as stored: the scalar counts in CELL_FIGURES order, then the
 * per-brand mentions. As a Counts object every cell named its fifteen fields
 * (about 400 bytes; a cells document holds up to 24 cells and is read and
 * written once a day per prompt, the month's every day), packed about 80.
 * Cells stored as objects before are still read (unpackCell).
 */
export type PackedCell = [...figures: number[], brands: Record<string, number>];

const CELL_FIGURES: ((c: Counts) => number)[] = [
  (c) => c.answer_count,
  (c) => c.cited_run_count,
  (c) => c.cited_total,
  (c) => c.mentioned_run_count,
  ...TIERS.map((t) => (c: Counts) => c.tier_runs[t]),
  ...TIERS.map((t) => (c: Counts) => c.tier_citations[t]),
  (c) => c.mention_total,
  (c) => c.brand_mention_total,
  (c) => c.tracked_mention_total,
  (c) => c.won_count,
  (c) => c.lost_count,
];

export function packCell(c: Counts): PackedCell {
  const out: PackedCell = CELL_FIGURES.map((f) => f(c)) as unknown as PackedCell;
  out.push(c.brand_mentions);
  return out;
}

/** A stored cell as Counts (a new object for a packed cell; an object cell as it is). */
export function unpackCell(cell: PackedCell | Counts): Counts {
  if (!Array.isArray(cell)) return cell;
  const n = (i: number) => cell[i] as number;
  const tiers = (from: number) => Object.fromEntries(TIERS.map((t, i) => [t, n(from + i)])) as Counts['tier_runs'];
  const at = 4 + 2 * TIERS.length;
  return {
    answer_count: n(0),
    cited_run_count: n(1),
    cited_total: n(2),
    mentioned_run_count: n(3),
    tier_runs: tiers(4),
    tier_citations: tiers(4 + TIERS.length),
    mention_total: n(at),
    brand_mention_total: n(at + 1),
    tracked_mention_total: n(at + 2),
    won_count: n(at + 3),
    lost_count: n(at + 4),
    brand_mentions: Object.assign(dict<number>(), cell[cell.length - 1] as Record<string, number>),
  };
}

/** The row a cell holds, with its id and key as a DAILY_COUNTS row carries them. */
export const rowOfCell = (key: CountRowKey, cell: Counts): CountDoc => ({ id: countRowId(key), ...key, ...cell });

/** A row's counts without its id and key (what a cell keeps). */
export function cellOfRow(row: CountDoc): Counts {
  const { id: _id, org_id: _org, day: _day, prompt_id: _prompt, model: _model, location: _location, ...cell } = row;
  return cell;
}

/** A cell of a cells document (read by a report), as a row. */
export function cellRow(doc: PromptCountsDoc | undefined, key: CountRowKey): CountDoc | undefined {
  const cell = doc?.cells[cellName(key)];
  return cell && rowOfCell(key, unpackCell(cell));
}

type Tx = Pick<StoreTransaction, 'get' | 'put' | 'delete'>;

/**
 * Count rows by key inside a transaction, wherever their organization keeps
 * them: a cells document is read once, changed in memory and written once at
 * `flush`; every other row goes straight to DAILY_COUNTS.
 */
export function countRowStore(tx: Tx, usesCells: (orgId: string) => boolean) {
  const docs = new Map<string, PromptCountsDoc | null>();
  const dirty = new Set<string>();
  const cellsDoc = async (key: CountRowKey): Promise<PromptCountsDoc | null> => {
    const id = cellsDocId(key);
    let doc = docs.get(id);
    if (doc === undefined) docs.set(id, (doc = (await tx.get<PromptCountsDoc>(PROMPT_COUNTS, id)) ?? null));
    return doc;
  };
  const cellsFor = (key: CountRowKey) => inCells(key) && usesCells(key.org_id);
  return {
    async get(key: CountRowKey): Promise<CountDoc | undefined> {
      if (!cellsFor(key)) return tx.get<CountDoc>(DAILY_COUNTS, countRowId(key));
      return cellRow((await cellsDoc(key)) ?? undefined, key);
    },
    /** Whether the row of this key is a cell (see addToCell). */
    holdsCell: cellsFor,
    /**
     * Adds a delta to a cell in place (a new cell starts from zero): what
     * mergeCountDoc does to a row, without making the cell a row and back. A
     * cell never keeps per-day maps (keepsDays is false for a prompt's rows).
     */
    async addToCell(key: CountRowKey, delta: Counts): Promise<void> {
      const id = cellsDocId(key);
      let doc = await cellsDoc(key);
      if (!doc) docs.set(id, (doc = { id, org_id: key.org_id, day: key.day, prompt_id: key.prompt_id, cells: {} }));
      const name = cellName(key);
      const cell = doc.cells[name];
      doc.cells[name] = packCell(mergeCounts(cell ? unpackCell(cell) : emptyCounts(), delta));
      dirty.add(id);
    },
    async put(key: CountRowKey, row: CountDoc): Promise<void> {
      if (!cellsFor(key)) return tx.put(DAILY_COUNTS, row);
      const id = cellsDocId(key);
      let doc = await cellsDoc(key);
      if (!doc) docs.set(id, (doc = { id, org_id: key.org_id, day: key.day, prompt_id: key.prompt_id, cells: {} }));
      doc.cells[cellName(key)] = packCell(cellOfRow(row));
      dirty.add(id);
    },
    async delete(key: CountRowKey): Promise<void> {
      if (!cellsFor(key)) return void (await tx.delete(DAILY_COUNTS, countRowId(key)));
      const doc = await cellsDoc(key);
      if (!doc || !(cellName(key) in doc.cells)) return;
      delete doc.cells[cellName(key)];
      dirty.add(doc.id);
    },
    /** Writes every cells document changed since the last flush (one without cells is deleted). */
    async flush(): Promise<void> {
      for (const id of dirty) {
        const doc = docs.get(id)!;
        await (Object.keys(doc.cells).length > 0 ? tx.put(PROMPT_COUNTS, doc) : tx.delete(PROMPT_COUNTS, id));
      }
      dirty.clear();
    },
  };
}

export type CountRowStore = ReturnType<typeof countRowStore>;
