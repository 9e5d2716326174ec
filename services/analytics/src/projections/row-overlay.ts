import type { DocLike } from '@kb/store';

/** One write for the transaction to make: a document's JSON text, or null to delete it. */
export type RowWrite = [collection: string, id: string, json: string | null];

/**
 * A row store over a read-only view (a snapshot of the transaction's starting
 * state) that keeps its writes as JSON text instead of making them: the count
 * rows are merged in a worker thread this way, and the transaction then writes
 * what `writes()` lists. Reads see the writes made so far, each as a fresh
 * copy, as the store's own reads would.
 */
export function rowOverlay(read: <T extends DocLike>(collection: string, id: string) => T | undefined) {
  const written = new Map<string, Map<string, string | null>>();
  const of = (collection: string) => {
    let m = written.get(collection);
    if (!m) written.set(collection, (m = new Map()));
    return m;
  };
  return {
    async get<T extends DocLike>(collection: string, id: string): Promise<T | undefined> {
      const m = written.get(collection);
      if (m?.has(id)) {
        const json = m.get(id)!;
        return json === null ? undefined : (JSON.parse(json) as T);
      }
      return read<T>(collection, id);
    },
    async put<T extends DocLike>(collection: string, doc: T): Promise<void> {
      of(collection).set(doc.id, JSON.stringify(doc));
    },
    async delete(collection: string, id: string): Promise<boolean> {
      const existed = (await this.get(collection, id)) !== undefined;
      of(collection).set(id, null);
      return existed;
    },
    /** Every document written or deleted, last write per id, in the order each id was first written. */
    writes(): RowWrite[] {
      const out: RowWrite[] = [];
      for (const [collection, m] of written) for (const [id, json] of m) out.push([collection, id, json]);
      return out;
    },
  };
}
