import { describe, it } from 'vitest';

/**
 * A suite that runs, or, when `skipReason` is a string, is reported as skipped with that
 * reason beside it (vitest prints a dynamic skip's note; a static `skip: true` has none).
 * Its hooks do not run when skipped, so a missing server is never started.
 */
export function describeOrSkip(title: string, skipReason: string | false | undefined, suite: () => void | Promise<void>): void {
  if (skipReason) describe(title, () => skippedTest('runs here', skipReason));
  else describe(title, suite);
}

/** One test reported as skipped, with the reason. */
export function skippedTest(title: string, reason: string): void {
  it(title, (context) => context.skip(reason));
}
