/**
 * The whole distributed runtime on one machine: a Kafka broker (scripts/kafka.sh)
 * and every service as its own process, with the variables each one needs, each
 * started after waiting for the ones before it to listen, the gateway last and
 * awaited until /health/ready says ready.
 *
 *   npm run stack -- start    start (from the build: run `npm run build` first; STACK_FROM=source runs the sources)
 *   npm run stack -- status   each process, and the gateway's readiness
 *   npm run stack -- stop     SIGTERM every service (the gateway first), then the broker it started
 *
 * Environment: STACK_DIR (data, logs, pids; default .data/stack), STACK_FROM (dist or
 * source; default dist), PORT (gateway, default 8080, as `npm start`), STACK_GRPC_PORT
 * (first gRPC port, default 50051; one per service after it), KAFKA_BROKERS (an existing
 * broker instead of starting one), INTERNAL_TOKEN (default: made once and kept in
 * STACK_DIR), PUBLIC_URL (the address hosted pages link to; default the gateway's),
 * LOG_LEVEL, OTEL_EXPORTER_OTLP_ENDPOINT, and any variable of a service (passed on).
 *
 * The gateway serves what `npm start` serves at the same address: the API, the web console
 * at / (web/console/dist, built by `npm run build`), /mcp and the hosted pages.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICES, entryOf, gatewayPort, nodeArgsOf, publicSettings, serviceEnv, type ServiceSpec } from './stack/services.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = resolve(root, process.env.STACK_DIR ?? '.data/stack');
const pidFile = (name: string) => join(dir, 'pids', `${name}.pid`);
const logFile = (name: string) => join(dir, 'logs', `${name}.log`);
const kafkaRunDir = join(dir, 'kafka');
const HOST = '127.0.0.1';

const say = (line: string) => process.stdout.write(`stack: ${line}\n`);

function pidOf(name: string): number | undefined {
  if (!existsSync(pidFile(name))) return undefined;
  const pid = Number(readFileSync(pidFile(name), 'utf8'));
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** A secret made once and kept in the stack folder, unless the environment gives one. */
function secret(name: string): string {
  if (process.env[name]) return process.env[name]!;
  const file = join(dir, name.toLowerCase());
  if (!existsSync(file)) writeFileSync(file, randomBytes(24).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

function kafka(command: 'start' | 'stop'): string {
  const result = spawnSync(join(root, 'scripts/kafka.sh'), [command], {
    env: { ...process.env, KAFKA_RUN_DIR: kafkaRunDir },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`scripts/kafka.sh ${command} failed`);
  return result.stdout.trim();
}

const tail = (file: string, lines = 30) =>
  existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '';

/** Waits until `done` holds; fails when `failed` names a reason or nothing was written to `log` for `idleMs`. */
async function waitFor(
  what: string,
  done: () => Promise<boolean> | boolean,
  failed: () => string | undefined,
  log: string,
  idleMs = 120_000,
) {
  let size = -1;
  let lastProgress = Date.now();
  for (;;) {
    if (await done()) return;
    const reason = failed();
    if (reason) throw new Error(`${what}: ${reason}\n${tail(log)}`);
    const now = existsSync(log) ? statSync(log).size : 0;
    if (now !== size) {
      size = now;
      lastProgress = Date.now();
    }
    if (Date.now() - lastProgress > idleMs) throw new Error(`${what}: nothing happened for ${idleMs / 1000} s\n${tail(log)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function start(): Promise<void> {
  const from = process.env.STACK_FROM === 'source' ? 'source' : 'dist';
  const missing = SERVICES.filter((s) => !existsSync(join(root, entryOf(s.name, from))));
  if (missing.length > 0) throw new Error(`no ${entryOf(missing[0]!.name, from)}: run \`npm run build\` first, or STACK_FROM=source`);
  const running = SERVICES.filter((s) => pidOf(s.name));
  if (running.length > 0) throw new Error(`already running: ${running.map((s) => s.name).join(', ')} (npm run stack -- stop)`);
  for (const sub of ['pids', 'logs', 'data']) mkdirSync(join(dir, sub), { recursive: true });
  // From the sources, the console is built here when missing or stale, as `npm start` does (`npm run build` builds it otherwise).
  if (from === 'source') spawnSync(process.execPath, [join(root, 'scripts/build-console.mjs')], { stdio: 'inherit' });

  let brokers = process.env.KAFKA_BROKERS;
  if (!brokers) {
    say(`starting a Kafka broker (scripts/kafka.sh, KAFKA_RUN_DIR=${kafkaRunDir})`);
    brokers = kafka('start');
    writeFileSync(join(dir, 'kafka-started'), brokers);
  }
  const grpcBase = Number(process.env.STACK_GRPC_PORT ?? 50051);
  const port = gatewayPort(process.env);
  const ports = new Map(SERVICES.map((s, i) => [s.name, s.kind === 'grpc' ? grpcBase + i : port]));
  const addresses = new Map(SERVICES.filter((s) => s.kind === 'grpc').map((s) => [s.name, `${HOST}:${ports.get(s.name)}`]));
  // Every process gets what the caller's environment says (a service's own variables included), then the stack's.
  const shared: Record<string, string> = {
    ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<string, string>),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    KAFKA_BROKERS: brokers,
    INTERNAL_TOKEN: secret('INTERNAL_TOKEN'),
    ...publicSettings(process.env, { host: HOST, port, consoleDir: join(root, 'web/console/dist') }),
  };

  const launch = (spec: ServiceSpec) => {
    const dataDir = join(dir, 'data', spec.name);
    mkdirSync(dataDir, { recursive: true });
    const env = { ...serviceEnv(spec, { shared, dataDir, host: HOST, port: ports.get(spec.name)!, addresses }), ...ownOverrides(spec) };
    const out = openSync(logFile(spec.name), 'a');
    const child = spawn(process.execPath, nodeArgsOf(spec.name, from), { cwd: root, env, stdio: ['ignore', out, out], detached: true });
    closeSync(out);
    child.unref();
    writeFileSync(pidFile(spec.name), String(child.pid));
    say(`${spec.name} started as pid ${child.pid} (log ${logFile(spec.name)})`);
    return spec;
  };
  const listening = (spec: ServiceSpec) =>
    waitFor(
      `${spec.name} did not start`,
      () => new RegExp(`"msg":"${spec.name} listening"`).test(readFileSync(logFile(spec.name), 'utf8')),
      () => (pidOf(spec.name) ? undefined : 'it exited'),
      logFile(spec.name),
    );

  try {
    const grpc = SERVICES.filter((s) => s.kind === 'grpc');
    await Promise.all(grpc.map(launch).map(listening));
    for (const spec of SERVICES.filter((s) => s.kind === 'http')) await listening(launch(spec));
    const url = `http://${HOST}:${ports.get('gateway')}`;
    say('waiting for the gateway to be ready (every service serving, every consumer group joined)');
    await waitFor(
      'the gateway did not get ready',
      async () => (await fetch(`${url}/health/ready`).catch(() => undefined))?.status === 200,
      () => SERVICES.map((s) => (pidOf(s.name) ? undefined : `${s.name} exited`)).find(Boolean),
      logFile('gateway'),
    );
    const gateway = SERVICES.find((s) => s.name === 'gateway')!;
    if (!existsSync(join(root, 'web/console/dist/index.html')))
      say('no web console (web/console/dist is missing: `npm run build` builds it); the API, /mcp and the hosted pages are served');
    say(
      `ready at ${url}/api/v1, the console at ${url}/ and MCP at ${url}/mcp (API key ${{ ...gateway.env, ...ownOverrides(gateway) }.BOOTSTRAP_API_KEY}; logs in ${join(dir, 'logs')})`,
    );
    if (!process.env.INTERNAL_TOKEN)
      say(`readiness with reasons: curl -H "x-internal-token: $(cat ${join(dir, 'internal_token')})" ${url}/health/ready`);
  } catch (err) {
    say((err as Error).message);
    await stop();
    process.exitCode = 1;
  }
}

/** A service's own variables given in the environment win over the stack's development values (BOOTSTRAP_*, PUBLISHING_SECRET_KEY). */
function ownOverrides(spec: ServiceSpec): Record<string, string> {
  return Object.fromEntries(Object.keys(spec.env ?? {}).flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
}

async function stop(): Promise<void> {
  // The gateway first (it stops taking requests), then the others; each finishes its work (SIGTERM).
  for (const spec of [...SERVICES].reverse()) {
    const pid = pidOf(spec.name);
    rmSync(pidFile(spec.name), { force: true });
    if (!pid) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && isAlive(pid)) await new Promise((r) => setTimeout(r, 200));
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    say(`${spec.name} stopped`);
  }
  if (existsSync(join(dir, 'kafka-started'))) {
    kafka('stop');
    rmSync(join(dir, 'kafka-started'));
    say('Kafka broker stopped');
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function status(): Promise<void> {
  for (const spec of SERVICES) say(`${spec.name}: ${pidOf(spec.name) ? `running (pid ${pidOf(spec.name)})` : 'stopped'}`);
  const res = await fetch(`http://${HOST}:${gatewayPort(process.env)}/health/ready`).catch(() => undefined);
  say(`gateway readiness: ${res ? `${res.status} ${await res.text()}` : 'no answer'}`);
}

const command = process.argv[2];
if (command === 'start') await start();
else if (command === 'stop') await stop();
else if (command === 'status') await status();
else {
  process.stderr.write('usage: npm run stack -- start|status|stop\n');
  process.exitCode = 2;
}
