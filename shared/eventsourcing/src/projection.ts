import type { StoreTransaction, StoredEvent } from '@kb/store';
import { asStreamEvents, type Stored } from './decider.js';

/**
 * A read model fed by this service's own events. It is updated in the append's
 * transaction and can be rebuilt by replay, so `apply` must depend only on the
 * event and the read model itself (never on the clock or randomness).
 */
export interface Projection {
  name: string;
  /** Collections this projection owns; dropped before a rebuild. */
  collections: string[];
  /** Indexes to declare on start. */
  indexes?: { collection: string; fields: string[] }[];
  /** `switch (event.type)` narrows `event.data` to the catalogue's payload for that type. */
  apply(tx: StoreTransaction, event: Stored): Promise<void>;
  /**
   * Writes what `apply` kept in memory for this transaction (a projection that
   * batches its document writes). Called once before the transaction commits:
   * at the end of a command transaction and of each rebuild page.
   */
  flush?(tx: StoreTransaction): Promise<void>;
  /**
   * Forgets what `apply` kept for a transaction that failed before its flush:
   * an adapter may hand the next transaction the same StoreTransaction object.
   */
  discard?(tx: StoreTransaction): void;
}

export async function applyProjections(projections: Projection[], tx: StoreTransaction, events: StoredEvent[]): Promise<void> {
  // Typed once here: every stored event was validated against the catalogue on append.
  for (const event of asStreamEvents(events)) {
    for (const projection of projections) await projection.apply(tx, event);
  }
}

/** Lets every projection write what it batched in this transaction (see Projection.flush). */
export async function flushProjections(projections: Projection[], tx: StoreTransaction): Promise<void> {
  for (const projection of projections) await projection.flush?.(tx);
}

/** Lets every projection drop what it kept for a transaction that failed (see Projection.discard). */
export function discardProjections(projections: Projection[], tx: StoreTransaction): void {
  for (const projection of projections) projection.discard?.(tx);
}
