import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const main = join(root, 'services/all-in-one/src/main.ts');

export interface AllInOneProcess {
  child: ChildProcess;
  exited: Promise<void>;
  /** The base URL once the process prints its ready line (within 90 s). */
  url: Promise<string>;
}

/**
 * `npm start`'s entry point as a real OS process on a data directory, for tests
 * that kill it (-9) and start it again on the same data: what a crash does.
 */
export function startAllInOneProcess(dataDir: string, env: Record<string, string> = {}): AllInOneProcess {
  // Keyword search unless the test asks for embeddings, as in the in-process harness (these tests crash and restart
  // the process; computing vectors in the background would only slow them on a loaded machine).
  const keywordOnly: Record<string, string> =
    env.EMBEDDINGS === undefined && env.EMBEDDINGS_URL === undefined ? { EMBEDDINGS: 'none' } : {};
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...keywordOnly, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = (async () => {
    const startAt = Date.now();
    for (;;) {
      const found = /ready at (http:\/\/[^\s]+)\/api\/v1/.exec(out)?.[1];
      if (found) return found;
      if (Date.now() - startAt > 90_000) throw new Error(`no ready line:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return { child, exited, url };
}
