import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { describeOrSkip } from '@kb/testing';
import {
  documentationFiles,
  fencedBlocks,
  headingAnchors,
  isExternal,
  linksOf,
  parseHttpExample,
  readDoc,
  REPO_ROOT,
  runnableKind,
} from '../docs/markdown.js';
import { FIRST_RUN, SECOND_RUN, freePort, missingTools, runShell } from './docs-runner.js';

/**
 * The documentation cannot drift from the code: every example marked runnable in README.md and
 * docs/*.md runs against `npm start`'s entry point on a random port and a fresh data directory,
 * in the order of its page, then once more on the same data (a reader runs an example again),
 * and every relative link and anchor between the pages resolves.
 */

const files = documentationFiles();
const DOCUMENTED_URL = /http:\/\/(?:127\.0\.0\.1|localhost):8080/g;
/** Longest a page's examples may take together (they wait for extraction and generation runs). */
const PAGE_TIMEOUT_MS = 90_000;

describe('links between the documents', () => {
  for (const file of files) {
    it(`${file}: every relative link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const { target, line } of linksOf(readDoc(file))) {
        if (isExternal(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const linked = path === '' ? file : normalize(join(dirname(file), path));
        if (!existsSync(join(REPO_ROOT, linked))) {
          broken.push(`${file}:${line}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && linked.endsWith('.md') && !headingAnchors(readDoc(linked)).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${linked})`);
        }
      }
      assert.deepEqual(broken, []);
    });
  }

  it('the README links to every page under docs/', () => {
    const linked = new Set(linksOf(readDoc('README.md')).map((l) => l.target.split('#')[0]));
    const missing = files.filter((f) => f.startsWith('docs/') && !linked.has(f));
    assert.deepEqual(missing, []);
  });
});

interface Server {
  child: ChildProcess;
  url: string;
  log: () => string;
}

async function startServer(dataDir: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--max-semi-space-size=32', '--import', 'tsx', join(REPO_ROOT, 'services/all-in-one/src/main.ts')],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const started = Date.now();
  for (;;) {
    const url = /ready at (http:\/\/\S+)\/api\/v1/.exec(out)?.[1];
    if (url) return { child, url, log: () => out };
    const code = await Promise.race([exited, new Promise((r) => setTimeout(r, 100, 'running'))]);
    if (code !== 'running') throw new Error(`npm start's entry point exited (${String(code)}):\n${out}`);
    if (Date.now() - started > 120_000) throw new Error(`no ready line:\n${out}`);
  }
}

const tail = (text: string, chars = 6000) => (text.length > chars ? `…${text.slice(-chars)}` : text);

describeOrSkip('runnable examples of the documentation, against npm start', missingTools(), () => {
  let server: Server;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'kb-docs-'));
    server = await startServer(dataDir);
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      const exited = new Promise((resolve) => server.child.on('exit', resolve));
      server.child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds runnable examples, the README first walk among them', () => {
    const readme = fencedBlocks(readDoc('README.md')).filter((b) => runnableKind(b));
    assert.ok(readme.length > 0, 'README.md has a runnable example');
    const counted = files.reduce((n, f) => n + fencedBlocks(readDoc(f)).filter((b) => runnableKind(b)).length, 0);
    assert.ok(counted >= 10, `${counted} runnable examples`);
  });

  for (const file of files) {
    const blocks = fencedBlocks(readDoc(file)).filter((b) => runnableKind(b));
    if (blocks.length === 0) continue;

    for (const [run, prelude] of [
      ['succeed', FIRST_RUN],
      ['succeed again on the same data', SECOND_RUN],
    ] as const) {
      it(
        `${file}: its examples ${run}`,
        async () => {
          const here = (code: string) => code.replace(DOCUMENTED_URL, server.url);
          let script = prelude;
          for (const block of blocks) {
            if (runnableKind(block) === 'shell') {
              script += `echo ${JSON.stringify(`--- ${file}:${block.line}`)} >&2\n${here(block.code)}\n`;
              continue;
            }
            // An http example runs between the shell blocks around it, so run what came before it first.
            if (script !== prelude) {
              const before = await runShell(script, PAGE_TIMEOUT_MS);
              assert.ok(
                before.code === 0,
                `${file} up to line ${block.line} failed:\n${tail(before.output)}\n--- server log:\n${tail(server.log(), 3000)}`,
              );
              script = prelude;
            }
            const request = parseHttpExample(here(block.code));
            const res = await fetch(`${server.url}${request.path}`, {
              method: request.method,
              headers: request.headers,
              ...(request.body !== undefined && { body: request.body }),
            });
            const text = await res.text();
            assert.ok(res.ok, `${file}:${block.line}: ${request.method} ${request.path} answered ${res.status}: ${text}`);
          }
          if (script === prelude) return;
          const result = await runShell(script, PAGE_TIMEOUT_MS);
          assert.ok(
            result.code === 0,
            `${file}: ${result.timedOut ? `not done within ${PAGE_TIMEOUT_MS} ms` : `exit code ${result.code}`}\n${tail(result.output)}\n--- server log:\n${tail(server.log(), 3000)}`,
          );
        },
        PAGE_TIMEOUT_MS + 30_000,
      );
    }
  }
});
