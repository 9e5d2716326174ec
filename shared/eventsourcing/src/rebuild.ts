import type { Store } from '@kb/store';
import { applyProjections, discardProjections, flushProjections, type Projection } from './projection.js';

export interface RebuildProgress {
  events: number;
  position: number;
}

/**
 * Drops the projections' collections and replays the whole event store through
 * them, a page per transaction. Run it with the service stopped: readers would
 * see a partial read model meanwhile.
 */
export async function rebuildReadModels(
  store: Store,
  projections: Projection[],
  options: { pageSize?: number; onProgress?: (p: RebuildProgress) => void } = {},
): Promise<RebuildProgress> {
  const pageSize = options.pageSize ?? 500;
  await store.dropCollections(projections.flatMap((p) => p.collections));
  const progress: RebuildProgress = { events: 0, position: 0 };
  for (;;) {
    const page = await store.readAll(progress.position, pageSize);
    if (page.length === 0) break;
    await store.transaction(async (tx) => {
      try {
        await applyProjections(projections, tx, page);
        await flushProjections(projections, tx);
      } catch (err) {
        discardProjections(projections, tx);
        throw err;
      }
    });
    progress.events += page.length;
    progress.position = page[page.length - 1]!.position;
    options.onProgress?.({ ...progress });
  }
  return progress;
}

/** Every document of the projections' collections, for comparing before and after a rebuild. */
export async function snapshotReadModels(store: Store, projections: Projection[]): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  for (const c of projections.flatMap((p) => p.collections)) snapshot[c] = await store.find(c, { sort: [{ field: 'id', order: 'asc' }] });
  return snapshot;
}
