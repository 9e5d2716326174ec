import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '@kb/platform';
import { developmentDefaults, startSystem, type RunningSystem } from '@kb/all-in-one';

export const API_KEY = developmentDefaults.BOOTSTRAP_API_KEY;

export interface TestSystem {
  url: string;
  dataDir: string;
  system: RunningSystem;
  /** Restart on the same data directory (a new process would see the same), with some settings changed if given. */
  restart(env?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
  api: ApiClient;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export type ApiClient = <T = any>(
  method: string,
  path: string,
  options?: { body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> },
) => Promise<ApiResponse<T>>;

/** The whole system on random ports and a fresh data directory, driven over HTTP only. */
export async function startTestSystem(env: Record<string, string> = {}, options: { logger?: Logger } = {}): Promise<TestSystem> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kb-e2e-'));
  // Keyword search unless a test asks for embeddings: computing vectors in every e2e would cost CPU for nothing.
  const keywordOnly = env.EMBEDDINGS === undefined && env.EMBEDDINGS_URL === undefined ? { EMBEDDINGS: 'none' } : {};
  const fullEnv = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...keywordOnly, ...env };
  const logger = options.logger ?? silentLogger();
  let system = await startSystem({ env: fullEnv, logger });
  const handle: TestSystem = {
    get url() {
      return system.url;
    },
    dataDir,
    get system() {
      return system;
    },
    async restart(env = {}) {
      await system.stop();
      Object.assign(fullEnv, env);
      system = await startSystem({ env: fullEnv, logger });
    },
    async stop() {
      await system.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    api: async (method, path, options = {}) => {
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      const key = options.key === undefined ? API_KEY : options.key;
      if (key !== null) headers['x-api-key'] = key;
      let body: string | undefined;
      if (options.rawBody !== undefined) body = options.rawBody;
      else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${system.url}/api/v1${path}`, { method, headers, ...(body !== undefined && { body }) });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('application/json') && text) parsed = JSON.parse(text);
      return { status: res.status, headers: res.headers, body: parsed as any, text };
    },
  };
  return handle;
}
