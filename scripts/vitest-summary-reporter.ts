import type { Reporter, TestModule } from 'vitest/node';

/**
 * Vitest prints its summary, then the coverage report: this repeats the summary's counts
 * after the coverage report, so `npm test` still ends with passed, failed and skipped.
 * Without coverage (or when tests fail, where no coverage is reported) vitest's own
 * summary is already the last line and this prints nothing.
 */
export default class SummaryLastReporter implements Reporter {
  private line = '';

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') count.passed++;
        else if (state === 'failed') count.failed++;
        else count.skipped++;
      }
    }
    const total = count.passed + count.failed + count.skipped;
    this.line = `Tests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped (${total}) in ${modules.length} files`;
  }

  // Called by vitest once the coverage report is written (the hook its own UI reporters use).
  onFinishedReportCoverage(): void {
    if (this.line) console.log(`\n${this.line}`);
  }
}
