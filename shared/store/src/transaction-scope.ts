import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which stores' transactions the current async context runs inside, kept for
 * every store of the process in one AsyncLocalStorage. Node 20 copies the value
 * of each AsyncLocalStorage in use onto every promise the process creates; one
 * per store made that six copies per promise under `npm start` (megamorphic
 * stores on every promise, a few percent of the main thread during ingest).
 */
const inside = new AsyncLocalStorage<ReadonlySet<object>>();

/** One store's view: whether its transaction is open in this async context, and how to open one. */
export function transactionScope() {
  const token = {};
  return {
    active: (): boolean => inside.getStore()?.has(token) ?? false,
    run<T>(fn: () => T): T {
      const within = new Set(inside.getStore());
      within.add(token);
      return inside.run(within, fn);
    },
  };
}
