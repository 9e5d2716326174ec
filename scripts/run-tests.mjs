#!/usr/bin/env node
// Runs the test tiers with node's own test runner (TypeScript through tsx, sources
// resolved through the "source" export condition, so no build is needed).
// Usage: node scripts/run-tests.mjs [tier ...]   tiers: unit contract int e2e integration
// With no tier, runs them all. Extra file paths may be given instead of tiers.
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const tiers = {
  unit: /\.unit\.test\.ts$/,
  contract: /\.contract\.test\.ts$/,
  int: /\.int\.test\.ts$/,
  e2e: /^test\/e2e\/.*\.test\.ts$/,
  integration: /^test\/integration\/.*\.test\.ts$/,
};

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(relative(root, path));
  }
  return out;
}

const args = process.argv.slice(2);
const wanted = args.filter((a) => a in tiers);
const explicit = args.filter((a) => !(a in tiers) && existsSync(join(root, a)));
const files = walk(root).filter((f) => (wanted.length ? wanted : explicit.length ? [] : Object.keys(tiers)).some((t) => tiers[t].test(f)));
files.push(...explicit);
if (files.length === 0) {
  console.error('no test files found for', args.join(' ') || 'all tiers');
  process.exit(1);
}

const child = spawn(
  process.execPath,
  [
    '--conditions=source',
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
    ...files.sort(),
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' } },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
