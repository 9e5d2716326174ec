import { acquireLease } from '@kb/eventsourcing';
import type { Clock } from '@kb/platform';
import type { Store } from '@kb/store';

/**
 * The seam between the delivery worker and whatever lease the platform offers.
 * Today: the store lease of @kb/eventsourcing (renewed on every acquire); the
 * heartbeat lease being built elsewhere can replace it here alone.
 */
export interface WorkerLease {
  /** True while this owner holds the lease (acquiring or renewing it). */
  hold(): Promise<boolean>;
}

export function createStoreWorkerLease(options: { store: Store; name: string; owner: string; ttlMs: number; clock: Clock }): WorkerLease {
  return { hold: () => acquireLease(options.store, options.name, options.owner, options.ttlMs, options.clock) };
}
