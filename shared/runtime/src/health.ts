import type { Store } from '@kb/store';
import type { EventBus } from '@kb/bus';

export type DependencyCheck = () => Promise<unknown>;

export interface Readiness {
  ready: boolean;
  /** 'ok' or why the dependency did not answer, per dependency. */
  checks: Record<string, string>;
}

/** Runs every check at once, each bounded by `timeoutMs`; ready when all answered. */
export async function checkDependencies(checks: Record<string, DependencyCheck>, timeoutMs = 2000): Promise<Readiness> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, err instanceof Error ? err.message : String(err)] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: results.every(([, r]) => r === 'ok'), checks: Object.fromEntries(results) };
}

/**
 * A service's dependencies as checks: its store, its bus, its consumers (each in its
 * consumer group's current generation, so events are being handled, not waiting
 * out a rebalance), its outbox relay (`events`: what it commits reaches the bus)
 * and (the knowledge base) its search index.
 */
export function dependencyChecks(deps: {
  store: Store;
  bus: EventBus;
  relay?: { check(): Promise<void> };
  index?: { countChunks(org_id: string): Promise<number> };
}): Record<string, DependencyCheck> {
  const checks: Record<string, DependencyCheck> = {
    store: () => deps.store.count('health_checks'),
    bus: () => deps.bus.ping?.() ?? Promise.resolve(),
  };
  const bus = deps.bus;
  if (bus.checkConsumers) checks.consumers = () => bus.checkConsumers!();
  const relay = deps.relay;
  if (relay) checks.events = () => relay.check();
  const index = deps.index;
  if (index) checks.index = () => index.countChunks('00000000-0000-0000-0000-000000000000');
  return checks;
}
