#!/usr/bin/env node
// Builds the web console (web/console/dist) when it is missing or older than its
// sources, so `npm start` always serves the current console without a manual step.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

const dir = new URL('../web/console/', import.meta.url).pathname;
const newest = (path) =>
  statSync(path).isDirectory() ? Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n)))) : statSync(path).mtimeMs;
const built = join(dir, 'dist', 'index.html');
const sources = Math.max(newest(join(dir, 'src')), newest(join(dir, 'index.html')), newest(join(dir, 'vite.config.ts')));
if (existsSync(built) && statSync(built).mtimeMs >= sources) process.exit(0);
process.stdout.write('Building the web console…\n');
execFileSync(process.execPath, [join(dir, '..', '..', 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], {
  cwd: dir,
  stdio: 'inherit',
});
