/** A FIFO async mutex: better-sqlite3 is synchronous, but our transactions span awaits. */
export function createMutex() {
  let tail: Promise<void> = Promise.resolve();
  return {
    async run<T>(fn: () => Promise<T>): Promise<T> {
      const previous = tail;
      let release!: () => void;
      tail = new Promise<void>((resolve) => (release = resolve));
      await previous;
      try {
        return await fn();
      } finally {
        release();
      }
    },
  };
}
