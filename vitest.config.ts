import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Alias } from 'vite';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// Every test tier is a vitest project, named as before (DESIGN section 9):
//   npm test                         all tiers with coverage (v8), then the summary line
//   npx vitest run --project unit    one tier; name files to run only those
//   npx vitest --project unit        watch mode while developing
// Workspace packages resolve to their TypeScript sources (their "source" export
// condition), so nothing is built first. Only ours: some published packages also
// carry a "source" condition pointing at .ts files node cannot load.
function workspaceSources(): Alias[] {
  const aliases: Alias[] = [];
  for (const group of ['shared', 'services', 'web']) {
    for (const dir of readdirSync(group)) {
      const manifest = join(group, dir, 'package.json');
      if (!existsSync(manifest)) continue;
      const { name, exports } = JSON.parse(readFileSync(manifest, 'utf8')) as {
        name: string;
        exports?: Record<string, { source?: string }>;
      };
      for (const [subpath, target] of Object.entries(exports ?? {})) {
        if (typeof target !== 'object' || !target.source) continue;
        const specifier = subpath === '.' ? name : `${name}/${subpath.slice(2)}`;
        aliases.push({ find: new RegExp(`^${specifier.replace(/[/.]/g, '\\$&')}$`), replacement: resolve(group, dir, target.source) });
      }
    }
  }
  return aliases;
}

const tier = (name: string, include: string[]): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, include, exclude: ['**/node_modules/**', '**/dist/**'] },
});

export default defineConfig({
  resolve: { alias: workspaceSources() },
  test: {
    projects: [
      tier('unit', ['{shared,services,test}/**/*.unit.test.ts']),
      tier('contract', ['{shared,services,test}/**/*.contract.test.ts']),
      tier('int', ['{shared,services,test}/**/*.int.test.ts']),
      tier('e2e', ['test/e2e/**/*.test.ts']),
      tier('integration', ['test/integration/**/*.test.ts']),
      'web/console',
    ],
    // One process per test file, as node's runner did: servers, SQLite files and
    // process-wide state (signals, env) stay per file.
    pool: 'forks',
    maxWorkers: Number(process.env.TEST_CONCURRENCY ?? 2),
    // Integration and e2e tests start real servers; a hung one still ends the run.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    passWithNoTests: true,
    // `npm test` (and CI) list every test, so skip reasons show; the last line is the summary.
    reporters: [
      process.env.CI || process.env.npm_lifecycle_event === 'test' ? 'verbose' : 'default',
      './scripts/vitest-summary-reporter.ts',
    ],
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
    coverage: {
      provider: 'v8',
      include: ['shared/*/src/**/*.ts', 'services/*/src/**/*.ts'],
      exclude: ['**/*.test.ts', '**/testing/**'],
      reporter: ['text-summary', 'lcov'],
      reportsDirectory: 'coverage',
    },
  },
});
