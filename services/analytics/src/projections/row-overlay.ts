import type { DocLike } from '@kb/store';

/** One write for the transaction to make: a document's JSON text, or null to delete it. */
export type RowWrite = [collection: string, id: string, json: string | null];

/** What the overlay reads through to: a snapshot of the transaction's starting state. */
export interface RowSource {
  get<T extends DocLike>(collection: string, id: string): T | undefined;
  /** Whether the document exists (without parsing it). */
  has(collection: string, id: string): boolean;
}

export interface RowOverlayOptions {
  /**
   * Called with the writes made since the last piece once there are this many
   * (`pieceSize`), so the transaction can make them while the overlay's user
   * goes on; `take` gives the rest.
   */
  onPiece?: (writes: RowWrite[]) => void;
  pieceSize?: number;
}

/**
 * A row store over a read-only view (a snapshot of the transaction's starting
 * state) that keeps its writes as JSON text instead of making them: the count
 * rows are merged in a worker thread this way, and the transaction then makes
 * the writes it is handed, in order (a later piece may write a document again).
 * Reads see the writes made so far, each as a fresh copy, as the store's own
 * reads would.
 */
export function rowOverlay(source: RowSource, options: RowOverlayOptions = {}) {
  const written = new Map<string, Map<string, string | null>>();
  /** The writes since the last piece: the last one per document, in the order each document was first written since. */
  let fresh = new Map<string, RowWrite>();
  const pieceSize = options.onPiece ? Math.max(1, options.pieceSize ?? 500) : Infinity;

  const take = (): RowWrite[] => {
    const out = [...fresh.values()];
    fresh = new Map();
    return out;
  };
  const write = (collection: string, id: string, json: string | null) => {
    let m = written.get(collection);
    if (!m) written.set(collection, (m = new Map()));
    m.set(id, json);
    const key = `${collection}\u0000${id}`;
    const w = fresh.get(key);
    if (w) w[2] = json;
    else fresh.set(key, [collection, id, json]);
    if (fresh.size >= pieceSize) options.onPiece!(take());
  };

  return {
    async get<T extends DocLike>(collection: string, id: string): Promise<T | undefined> {
      const m = written.get(collection);
      if (m?.has(id)) {
        const json = m.get(id)!;
        return json === null ? undefined : (JSON.parse(json) as T);
      }
      return source.get<T>(collection, id);
    },
    async put<T extends DocLike>(collection: string, doc: T): Promise<void> {
      write(collection, doc.id, JSON.stringify(doc));
    },
    async delete(collection: string, id: string): Promise<boolean> {
      const m = written.get(collection);
      const existed = m?.has(id) ? m.get(id) !== null : source.has(collection, id);
      write(collection, id, null);
      return existed;
    },
    /** The writes not yet handed on (every write, when no piece was): the last per document, in the order each was first written since. */
    take,
  };
}
