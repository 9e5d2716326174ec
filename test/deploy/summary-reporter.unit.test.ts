import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { TestModule } from 'vitest/node';
import { skippedGroups } from '../../scripts/vitest-summary-reporter.js';

/** A module of tests as vitest's reporter API shows it: each test under its chain of suites. */
function moduleOf(file: string, tests: { suites: string[]; state: string; note?: string }[]): TestModule {
  const module = { type: 'module', moduleId: `/repo/${file}` } as Record<string, unknown>;
  const cases = tests.map((t) => {
    let parent: Record<string, unknown> = module;
    for (const name of t.suites) parent = { type: 'suite', name, parent };
    return { parent, module, options: { mode: 'skip' }, result: () => ({ state: t.state, note: t.note }) };
  });
  module.children = { allTests: () => cases };
  return module as unknown as TestModule;
}

describe('the summary names each skipped group and why', () => {
  it('groups skipped tests by file and outermost suite, with the reason each gave', () => {
    const groups = skippedGroups(
      [
        moduleOf('test/e2e/multiprocess.e2e.test.ts', [
          { suites: ['on Kafka', 'restarts'], state: 'skipped', note: 'KAFKA_BROKERS is not set' },
          { suites: ['on Kafka'], state: 'skipped', note: 'KAFKA_BROKERS is not set' },
        ]),
        moduleOf('test/e2e/console.e2e.test.ts', [
          { suites: ['the console in Chromium'], state: 'skipped', note: 'no chromium on PATH' },
          { suites: ['the console in Chromium'], state: 'passed' },
        ]),
        moduleOf('shared/a.unit.test.ts', [{ suites: [], state: 'passed' }]),
      ],
      '/repo',
    );
    assert.deepEqual(groups, [
      { group: 'test/e2e/multiprocess.e2e.test.ts (on Kafka)', reason: 'KAFKA_BROKERS is not set', count: 2 },
      { group: 'test/e2e/console.e2e.test.ts (the console in Chromium)', reason: 'no chromium on PATH', count: 1 },
    ]);
  });

  it('says how a test without a note was skipped', () => {
    const [group] = skippedGroups([moduleOf('x.unit.test.ts', [{ suites: [], state: 'skipped' }])], '/repo');
    assert.deepEqual(group, { group: 'x.unit.test.ts', reason: 'skipped (skip)', count: 1 });
  });
});
