import type { Clock } from '@kb/platform';
import type { Store } from '@kb/store';

const LEASES = '_leases';

interface Lease {
  id: string;
  owner: string;
  expires_at: number;
}

/**
 * A time-bound lease in the store: among replicas of a service, one holds it at a
 * time (the outbox relay, schedulers). Renewed on every acquire by its owner.
 */
export async function acquireLease(store: Store, name: string, owner: string, ttlMs: number, clock: Clock): Promise<boolean> {
  return store.transaction(async (tx) => {
    const now = clock.now().getTime();
    const current = await tx.get<Lease>(LEASES, name);
    if (current && current.owner !== owner && current.expires_at > now) return false;
    await tx.put(LEASES, { id: name, owner, expires_at: now + ttlMs });
    return true;
  });
}

/** Gives the lease up at once if `owner` still holds it (instead of letting it run out). */
export async function releaseLease(store: Store, name: string, owner: string): Promise<void> {
  await store.transaction(async (tx) => {
    const current = await tx.get<Lease>(LEASES, name);
    if (current?.owner === owner) await tx.delete(LEASES, name);
  });
}
