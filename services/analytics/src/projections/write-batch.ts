import type { StoreTransaction } from '@kb/store';
import { ALL_PARTS, mergeCountDoc, mergeOutcomeDoc, mergeSourceDoc, rowDeltas, type BatchParts, type CountBatch } from './count-rows.js';
import { countRowStore } from './prompt-cells.js';
import { foldOpenDay, leavesOutOpenDay } from './open-day.js';
import {
  COUNT_EXTENTS,
  DAILY_SOURCES,
  PROMPT_OUTCOMES,
  type CountExtentDoc,
  type PromptOutcomeDoc,
  type SourceDoc,
} from './collections.js';

/** What the count rows are read from and written to: a transaction, or a worker's overlay on a snapshot of it (row-overlay.ts). */
export type RowStore = Pick<StoreTransaction, 'get' | 'put' | 'delete'>;

/**
 * Reads each row the batch touches once, adds the batch to it and writes it
 * once; widens each organization's extent (written only when it grows). An
 * extent created now marks the tag rows complete unless `legacy` says the
 * organization had answers before. `parts` names the rows to write: the count
 * rows, or the source and outcome rows with the extents (each reads the
 * extents as stored, so the two may run apart, on one starting state).
 */
export async function writeBatch(
  tx: RowStore,
  days: CountBatch,
  legacy: (orgId: string) => boolean = () => false,
  parts: BatchParts = ALL_PARTS,
): Promise<void> {
  const batch = rowDeltas(days, parts);
  const extents = new Map<string, { doc: CountExtentDoc; changed: boolean }>();
  for (const [orgId, e] of batch.extents) {
    const stored = await tx.get<CountExtentDoc>(COUNT_EXTENTS, orgId);
    const doc: CountExtentDoc = stored ?? {
      id: orgId,
      org_id: orgId,
      months: [],
      models: [],
      locations: [],
      tag_rows: !legacy(orgId),
      ...(!legacy(orgId) && { prompt_cells: true, open_days: true }),
    };
    const union = (have: string[], add: Set<string>) =>
      add.size && [...add].some((x) => !have.includes(x)) ? [...new Set([...have, ...add])].sort() : have;
    const next = {
      ...doc,
      months: union(doc.months, e.months),
      models: union(doc.models, e.models),
      locations: union(doc.locations, e.locations),
    };
    extents.set(orgId, {
      doc: next,
      changed: !stored || next.months !== doc.months || next.models !== doc.models || next.locations !== doc.locations,
    });
  }
  const extentOf = (orgId: string) => extents.get(orgId)?.doc;
  if (parts.counts) {
    const counts = countRowStore(tx, (orgId) => extentOf(orgId)?.prompt_cells === true);
    for (const [id, d] of batch.counts)
      if (counts.holdsCell(d.key)) await counts.addToCell(d.key, d.counts);
      else await counts.put(d.key, mergeCountDoc(id, await counts.get(d.key), d));
    await counts.flush();
  }
  if (!parts.sources) return;
  // Roll-up month rows that leave out the open day are added to by foldOpenDay, after the day rows.
  for (const [id, d] of batch.sources)
    if (!leavesOutOpenDay(d.key, extentOf(d.key.org_id)))
      await tx.put(DAILY_SOURCES, mergeSourceDoc(id, await tx.get<SourceDoc>(DAILY_SOURCES, id), d));
  for (const [id, d] of batch.outcomes)
    if (!leavesOutOpenDay(d.key, extentOf(d.key.org_id)))
      await tx.put(PROMPT_OUTCOMES, mergeOutcomeDoc(id, await tx.get<PromptOutcomeDoc>(PROMPT_OUTCOMES, id), d));
  for (const x of extents.values()) {
    if (!x.doc.open_days) continue;
    const next = await foldOpenDay(tx, x.doc, batch.sources.values(), batch.outcomes.values());
    if (next !== x.doc) Object.assign(x, { doc: next, changed: true });
  }
  for (const x of extents.values()) if (x.changed) await tx.put(COUNT_EXTENTS, x.doc);
}
