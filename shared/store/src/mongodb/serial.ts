/**
 * Runs async operations one at a time, in call order. The driver does not
 * support parallel operations inside one transaction (the first command starts
 * it on the server), so a transaction's operations go through one of these even
 * when the caller uses Promise.all.
 */
export function createSerialQueue(): <T>(op: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(op: () => Promise<T>): Promise<T> => {
    const run = tail.then(op);
    tail = run.catch(() => undefined);
    return run;
  };
}
