import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';

/** One group of skipped tests: a file's outermost suite (or the file), with the reason its tests gave. */
export interface SkippedGroup {
  group: string;
  reason: string;
  count: number;
}

/** The file and outermost describe of a test: what a reader recognizes as "the Kafka suite" or "the console's browser tests". */
function groupOf(test: TestCase, root: string): string {
  let suite: TestCase['parent'] = test.parent;
  let outermost: string | undefined;
  while (suite.type === 'suite') {
    outermost = suite.name;
    suite = suite.parent;
  }
  const file = relative(root, test.module.moduleId);
  return outermost ? `${file} (${outermost})` : file;
}

/** Groups the skipped tests by where they live and why they skipped, in the order met. */
export function skippedGroups(modules: ReadonlyArray<TestModule>, root: string): SkippedGroup[] {
  const groups = new Map<string, SkippedGroup>();
  for (const module of modules) {
    for (const test of module.children.allTests()) {
      const result = test.result();
      if (result.state !== 'skipped') continue;
      const group = groupOf(test, root);
      const reason = result.note ?? `skipped (${test.options.mode})`;
      const key = `${group}\n${reason}`;
      const known = groups.get(key);
      if (known) known.count++;
      else groups.set(key, { group, reason, count: 1 });
    }
  }
  return [...groups.values()];
}

/**
 * Vitest prints its summary, then the coverage report: this prints the summary's counts last
 * (after the coverage report when there is one), each group of skipped tests with the reason
 * it gave (a missing server, browser or model), so a run that skips says what and why.
 */
export default class SummaryLastReporter implements Reporter {
  private lines: string[] = [];
  private root = process.cwd();
  private coverage = false;

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    this.coverage = vitest.config.coverage.enabled;
  }

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
    const skipped = skippedGroups(modules, this.root);
    this.lines = [
      ...(skipped.length > 0
        ? ['Skipped:', ...skipped.map((g) => `  ${g.group}: ${g.count} ${g.count === 1 ? 'test' : 'tests'}, ${g.reason}`)]
        : []),
      `Tests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped (${total}) in ${modules.length} files`,
    ];
    // Without coverage nothing follows vitest's own summary: print now.
    if (!this.coverage) this.print();
  }

  // Called by vitest once the coverage report is written (the hook its own UI reporters use).
  onFinishedReportCoverage(): void {
    this.print();
  }

  private print(): void {
    if (this.lines.length > 0) console.log(`\n${this.lines.join('\n')}`);
    this.lines = [];
  }
}
