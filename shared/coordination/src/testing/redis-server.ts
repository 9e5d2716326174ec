import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/**
 * A Redis for tests: our own redis-server on a random port in a temp dir when
 * the binary is on PATH, else the one REDIS_URL names, else a skip reason.
 */
export async function startTestRedis(): Promise<TestRedis | { skip: string }> {
  if (spawnSync('redis-server', ['--version']).status === 0) {
    const dir = mkdtempSync(join(tmpdir(), 'kb-redis-'));
    const port = await freePort();
    const child: ChildProcess = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    for (let i = 0; i < 100 && !(await canConnect(port)); i++) await new Promise((r) => setTimeout(r, 50));
    return {
      url: `redis://127.0.0.1:${port}`,
      async stop() {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} };
  return { skip: 'skipped: no redis-server on PATH and no REDIS_URL' };
}
