import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  type WriteStream,
} from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { developmentDefaults } from '@kb/all-in-one';
import {
  SERVICES as STACK_SERVICES,
  SHARED_SETTINGS,
  STATELESS_FRONTS,
  entryOf,
  grpcVariable,
  serviceEnv,
  type ServiceSpec as StackServiceSpec,
} from '../../scripts/stack/services.js';
import type { ApiClient } from './harness.js';

/**
 * The distributed runtime on one machine: every service its own OS process
 * (its own main.ts, its own DATA_DIR, embedded store and index), the bus on a
 * real Kafka broker. A test-owned TCP balancer stands in front of each gRPC
 * service (as a Kubernetes Service would), so replicas can come and go behind
 * one address the gateway knows.
 */

export const root = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceSpec extends StackServiceSpec {
  /** Its standalone entry point. */
  entry: string;
}

export { STATELESS_FRONTS, SHARED_SETTINGS, grpcVariable };

/**
 * The suite's settings on top of the stack's (scripts/stack/services.ts): one extraction worker,
 * and a job leased by a killed worker taken again when its lease ends, after 15 s.
 */
const SUITE_SETTINGS: Record<string, Record<string, string>> = {
  ingest: { INGEST_WORKERS: '1', INGEST_TIMEOUT_MS: '10000', INGEST_LEASE_MS: '15000' },
};

/** Every service of the distributed runtime that takes part in the bus: the stack's, from their sources. */
export const SERVICES: ServiceSpec[] = STACK_SERVICES.map((spec) => ({
  ...spec,
  entry: entryOf(spec.name, 'source'),
  ...((spec.env || SUITE_SETTINGS[spec.name]) && { env: { ...spec.env, ...SUITE_SETTINGS[spec.name] } }),
}));

export const API_KEY = developmentDefaults.BOOTSTRAP_API_KEY;

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Where the processes of one run write their output as it comes (so nothing is lost when a test
 * or the runner dies): test/artifacts/multiprocess/<time>-<pid>/<service>.<replica>.log, one
 * file per replica across its restarts. Kept when a test failed, removed after a clean run.
 */
export class RunLogs {
  readonly dir = join(root, 'test/artifacts/multiprocess', `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`);
  private readonly files = new Set<string>();
  failed = false;

  constructor() {
    mkdirSync(this.dir, { recursive: true });
  }

  /** A stream appending to a process's log, after a line that marks this start. */
  open(name: string, pid: number | undefined): WriteStream {
    const file = join(this.dir, `${name}.log`);
    this.files.add(file);
    appendFileSync(file, `=== ${new Date().toISOString()} ${name} started as pid ${pid}\n`);
    return createWriteStream(file, { flags: 'a' });
  }

  /** Adds a file written elsewhere (the broker's log) to what a failure keeps. */
  attach(name: string, path: string): void {
    if (!existsSync(path)) return;
    const file = join(this.dir, name);
    copyFileSync(path, file);
    this.files.add(file);
  }

  /** Where each log file ends now, to read what is written after (see `linesSince`). */
  mark(): Map<string, number> {
    return new Map([...this.files].filter((f) => existsSync(f)).map((f) => [f, statSync(f).size]));
  }

  /** The lines each log got since `mark` (a file that did not exist then: all of it), by file name. */
  linesSince(mark: Map<string, number>): Map<string, string[]> {
    const result = new Map<string, string[]>();
    for (const file of this.files) {
      if (!existsSync(file)) continue;
      const text = readFileSync(file)
        .subarray(mark.get(file) ?? 0)
        .toString('utf8');
      result.set(basename(file), text.split('\n').filter(Boolean));
    }
    return result;
  }

  /** Marks the run failed and prints the last lines of every process's log, and where the whole logs are. */
  reportFailure(what: string, lines = 40): void {
    this.failed = true;
    const parts = [`${what}: the processes' logs are in ${this.dir}`];
    for (const file of this.files) {
      if (!existsSync(file)) continue;
      const tail = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      parts.push(`--- last ${lines} lines of ${file}\n${tail}`);
    }
    console.error(parts.join('\n'));
  }

  /** Removes the logs unless a failure was reported. */
  close(): void {
    if (!this.failed) rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Polls `check` until it returns a value. Without `progress` it gives up after `timeoutMs`; with
 * it, after `timeoutMs` in which `progress()` did not change (so a slow machine that is still
 * working gets the time it needs, and a stuck system fails as soon as it is seen stuck).
 */
export async function waitUntil<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 60_000,
  progress?: () => unknown,
): Promise<T> {
  const started = Date.now();
  let deadline = started + timeoutMs;
  let last = progress?.();
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (progress) {
      const now = progress();
      if (JSON.stringify(now) !== JSON.stringify(last)) {
        last = now;
        deadline = Date.now() + timeoutMs;
      }
    }
    if (Date.now() > deadline) {
      const idle = progress ? `no progress for ${timeoutMs} ms (after ${Date.now() - started} ms)` : `timed out after ${timeoutMs} ms`;
      throw new Error(`${idle} waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** CPU seconds a process has used so far (Linux /proc; 0 when it is gone or elsewhere). */
export function cpuSeconds(pid: number): number {
  try {
    // Fields after the command name: state is the 3rd, utime the 14th and stime the 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A single-node Kafka broker of the test's own (scripts/kafka.sh), so it can be restarted. */
export class KafkaBroker {
  readonly runDir = mkdtempSync(join(tmpdir(), 'kb-kafka-'));
  brokers = '';
  /** The running broker's output (scripts/kafka.sh starts it writing there). */
  get logFile(): string {
    return join(this.runDir, 'broker.log.start');
  }

  private script(command: 'start' | 'stop'): string {
    const result = spawnSync(join(root, 'scripts/kafka.sh'), [command], {
      env: { ...process.env, KAFKA_RUN_DIR: this.runDir },
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (result.status !== 0) throw new Error(`scripts/kafka.sh ${command} failed: ${result.stderr}`);
    return result.stdout.trim();
  }

  start(): string {
    this.brokers = this.script('start');
    return this.brokers;
  }

  stop(): void {
    this.script('stop');
  }

  destroy(): void {
    try {
      this.stop();
    } finally {
      rmSync(this.runDir, { recursive: true, force: true });
    }
  }
}

/** Forwards each connection to the first upstream that accepts it (a dead replica is skipped). */
class Balancer {
  readonly upstreams: number[] = [];
  private next = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async listen(port: number): Promise<Balancer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const balancer = new Balancer(server, port);
    server.on('connection', (client) => balancer.forward(client));
    return balancer;
  }

  private forward(client: Socket, tried = 0): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (this.upstreams.length === 0 || tried >= this.upstreams.length) {
      client.destroy();
      return;
    }
    const port = this.upstreams[this.next++ % this.upstreams.length]!;
    const upstream = connect(port, '127.0.0.1');
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    let connected = false;
    upstream.on('connect', () => {
      connected = true;
      client.pipe(upstream).pipe(client);
    });
    upstream.on('error', () => {
      upstream.destroy();
      if (connected) client.destroy();
      else this.forward(client, tried + 1);
    });
    client.on('close', () => upstream.destroy());
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export interface ServiceProcess {
  name: string;
  /** Which replica of the service (0 for the first). */
  replica: number;
  child: ChildProcess;
  pid: number;
  port: number;
  dataDir: string;
  exited: Promise<number | null>;
  /** Its latest output (up to 200 kB). */
  output(): string;
  /** Bytes it has written so far. */
  written(): number;
}

export interface MultiProcessSystem {
  url: string;
  /** Every process's output, on disk as it comes. */
  logs: RunLogs;
  api: ApiClient;
  processes: ServiceProcess[];
  /** The running process of a service (its first live replica unless one is named). */
  process(name: string, replica?: number): ServiceProcess;
  /** kill -9: no shutdown hook runs. */
  kill(name: string, replica?: number): Promise<void>;
  /** SIGTERM (graceful shutdown); resolves with the exit code. */
  terminate(name: string, replica?: number): Promise<number | null>;
  /** Start (again) a replica on the same data folder and port. */
  start(name: string, replica?: number): Promise<ServiceProcess>;
  /**
   * Starts a process of a service that is not part of the system (its own name, data folder
   * and settings, e.g. a second gateway with other settings), wired to the system's services.
   */
  startExtra(spec: ServiceSpec): Promise<ServiceProcess>;
  /**
   * Changes while the system works (each CPU second its processes use, each line they write):
   * `progress` for waitUntil, so a busy machine is waited for and a stuck system is not.
   */
  progress(): unknown;
  /** SIGTERM to all; the logs are removed unless a failure was reported. */
  stop(): Promise<void>;
}

/**
 * Starts every service of `services` as its own process against `brokers`.
 * Replicas of one service share its data folder (as they would share a
 * database) and sit behind one balancer address.
 */
export async function startMultiProcessSystem(options: {
  brokers: string;
  services?: ServiceSpec[];
  env?: Record<string, string>;
  /** Where process output goes (default: a new run folder under test/artifacts). */
  logs?: RunLogs;
}): Promise<MultiProcessSystem> {
  const services = options.services ?? SERVICES;
  const logs = options.logs ?? new RunLogs();
  const base = mkdtempSync(join(tmpdir(), 'kb-multi-'));
  // Keyword search unless a suite asks for embeddings, as in the single-process harness: these suites
  // count exactly which documents a word finds, and hybrid search also ranks documents near in meaning.
  const keywordOnly: Record<string, string> =
    options.env?.EMBEDDINGS === undefined && options.env?.EMBEDDINGS_URL === undefined ? { EMBEDDINGS: 'none' } : {};
  const shared: Record<string, string> = {
    LOG_LEVEL: 'info',
    KAFKA_BROKERS: options.brokers,
    INTERNAL_TOKEN: randomBytes(24).toString('hex'),
    ...keywordOnly,
    ...options.env,
  };
  const balancers = new Map<string, Balancer>();
  const ports = new Map<string, number>();
  for (const spec of services) {
    if (spec.kind === 'grpc') balancers.set(spec.name, await Balancer.listen(await freePort()));
  }
  const processes: ServiceProcess[] = [];
  const extras: ServiceSpec[] = [];
  const specOf = (name: string) => {
    const spec = services.find((s) => s.name === name) ?? extras.find((s) => s.name === name);
    if (!spec) throw new Error(`no service ${name}`);
    return spec;
  };

  /**
   * A process's first start picks a free port; another process (a Kafka client's outgoing
   * connection, say) can take it before the service binds it, so a first start that finds its
   * port in use tries again on another. A restart keeps its port.
   */
  const launch = async (spec: ServiceSpec, replica: number): Promise<ServiceProcess> => {
    const key = `${spec.name}#${replica}`;
    if (ports.has(key)) return launchOn(spec, replica, ports.get(key)!);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        return await launchOn(spec, replica, port);
      } catch (err) {
        if (attempt >= 3 || !/EADDRINUSE/.test((err as Error).message)) throw err;
      }
    }
  };

  const launchOn = async (spec: ServiceSpec, replica: number, port: number): Promise<ServiceProcess> => {
    const key = `${spec.name}#${replica}`;
    const dataDir = join(base, spec.name);
    mkdirSync(dataDir, { recursive: true });
    const addresses = new Map([...balancers].map(([name, balancer]) => [name, `127.0.0.1:${balancer.port}`]));
    const env = serviceEnv(spec, { shared, dataDir, host: '127.0.0.1', port, addresses });
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', spec.entry], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let written = 0;
    const file = logs.open(`${spec.name}.${replica}`, child.pid);
    const keep = (d: Buffer) => {
      file.write(d);
      written += d.length;
      output = (output + d.toString()).slice(-200_000);
    };
    child.on('exit', (code, signal) => file.end(`=== exited with ${signal ?? code}\n`));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const started: ServiceProcess = {
      name: spec.name,
      replica,
      child,
      pid: child.pid!,
      port,
      dataDir,
      exited,
      output: () => output,
      written: () => written,
    };
    await Promise.race([
      // However slow the machine: it fails once the process has neither used a CPU second nor written a line for 60 s.
      waitUntil(
        () => /"msg":"[a-z-]+ listening"/.test(output) || undefined,
        `${key} to listen`,
        60_000,
        () => [Math.floor(cpuSeconds(child.pid!)), written],
      ),
      exited.then((code) => {
        throw new Error(`${key} exited with ${code}:\n${output.slice(-3000)}`);
      }),
    ]).catch((err: Error) => {
      child.kill('SIGKILL');
      throw err;
    });
    ports.set(key, port);
    const index = processes.findIndex((p) => p.name === spec.name && p.replica === replica);
    if (index >= 0) processes.splice(index, 1, started);
    else processes.push(started);
    if (spec.kind === 'grpc') {
      const upstreams = balancers.get(spec.name)!.upstreams;
      if (!upstreams.includes(port)) upstreams.push(port);
    }
    return started;
  };

  const gatewayPort = async () => processes.find((p) => specOf(p.name).kind === 'http')!.port;
  try {
    // Consumers first, the gateway (which needs the gRPC addresses) last.
    const launched = await Promise.allSettled(services.filter((s) => s.kind === 'grpc').map((spec) => launch(spec, 0)));
    const failed = launched.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    for (const spec of services.filter((s) => s.kind === 'http')) await launch(spec, 0);
  } catch (err) {
    logs.reportFailure(`the system did not start (${(err as Error).message.split('\n')[0]})`);
    for (const p of processes) p.child.kill('SIGKILL');
    for (const b of balancers.values()) await b.close();
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
  const url = `http://127.0.0.1:${await gatewayPort()}`;
  const alive = (p: ServiceProcess) => p.child.exitCode === null && p.child.signalCode === null;

  const system: MultiProcessSystem = {
    url,
    logs,
    processes,
    process(name, replica) {
      const found = processes.find((p) => p.name === name && (replica === undefined ? alive(p) : p.replica === replica));
      if (!found) throw new Error(`no running process for ${name}${replica === undefined ? '' : `#${replica}`}`);
      return found;
    },
    async kill(name, replica) {
      const target = system.process(name, replica);
      target.child.kill('SIGKILL');
      await target.exited;
    },
    async terminate(name, replica) {
      const target = system.process(name, replica);
      target.child.kill('SIGTERM');
      return target.exited;
    },
    start: (name, replica = 0) => launch(specOf(name), replica),
    startExtra(spec) {
      if (services.some((s) => s.name === spec.name)) throw new Error(`${spec.name} is a service of the system`);
      if (!extras.includes(spec)) extras.push(spec);
      return launch(spec, 0);
    },
    progress: () => [
      Math.floor(processes.filter(alive).reduce((sum, p) => sum + cpuSeconds(p.pid), 0)),
      processes.reduce((sum, p) => sum + p.written(), 0),
    ],
    async stop() {
      // SIGTERM: graceful shutdown (in-flight work finished, offsets committed).
      const running = processes.filter(alive);
      for (const p of running) p.child.kill('SIGTERM');
      await Promise.all(
        running.map((p) =>
          Promise.race([p.exited, new Promise((r) => setTimeout(r, 20_000))]).then(() => {
            if (alive(p)) p.child.kill('SIGKILL');
          }),
        ),
      );
      for (const b of balancers.values()) await b.close();
      rmSync(base, { recursive: true, force: true });
      logs.close();
    },
    api: async (method, path, opts = {}) => {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      const key = opts.key === undefined ? API_KEY : opts.key;
      if (key !== null) headers['x-api-key'] = key;
      let body: string | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${url}/api/v1${path}`, { method, headers, ...(body !== undefined && { body }) });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('application/json') && text) parsed = JSON.parse(text);
      return { status: res.status, headers: res.headers, body: parsed as any, text };
    },
  };
  return system;
}

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP span kind: 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
}

/** A local OTLP/HTTP (JSON) receiver: the processes' OTEL_EXPORTER_OTLP_ENDPOINT in a test. */
export async function startOtlpReceiver(): Promise<{ endpoint: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const { createServer: createHttpServer } = await import('node:http');
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && (req.headers['content-type'] ?? '').includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number }[] }[];
  }[];
}
