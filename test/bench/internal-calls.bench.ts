/**
 * What one internal gRPC call costs a gateway route, against two baselines
 * measured in the same run, 16 clients at a time over HTTP keep-alive:
 *   - a bare fastify route answering the same JSON as GET /org/me (no auth, no store),
 *   - GET /org/me: the gateway answering by itself (auth, store read),
 *   - GET /categories/{id}: auth plus one gRPC call to the knowledge base,
 *   - GET /categories: auth plus one gRPC call that lists (10 of 50 categories, with the total);
 * the two gRPC routes once over the in-process transport (`npm start`: every
 * service in this process) and once over HTTP/2 on loopback (RPC_IN_PROCESS=false,
 * what a call to another process pays, here with both ends on this event loop).
 *
 *   npm run bench:rpc            (REQUESTS=n per route, default 4000;
 *                                 PROFILE=dir writes a CPU profile of each measured route there)
 */
import Fastify from 'fastify';
import { Agent, request } from 'node:http';
import { writeFileSync, mkdirSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { setInProcessCalls } from '@kb/rpc';
import { API_KEY, startTestSystem } from '../e2e/harness.js';

const REQUESTS = Number(process.env.REQUESTS ?? 4000);
const CLIENTS = 16;

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
}

async function measure(name: string, origin: string, path: string, headers: Record<string, string>): Promise<Row> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const send = () =>
    new Promise<void>((resolve, reject) => {
      request(`${origin}${path}`, { headers, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${path}: ${res.statusCode}`))));
      })
        .on('error', reject)
        .end();
    });
  for (let i = 0; i < 300; i++) await send(); // warm-up
  const lat: number[] = [];
  let next = 0;
  const profiler = process.env.PROFILE ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next++ < REQUESTS) {
        const t0 = performance.now();
        await send();
        lat.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    mkdirSync(process.env.PROFILE!, { recursive: true });
    writeFileSync(`${process.env.PROFILE}/${name.replace(/\W+/g, '_')}.cpuprofile`, JSON.stringify(profile));
    profiler.disconnect();
  }
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { name, rps: lat.length / seconds, p50: lat[Math.floor(lat.length / 2)]!, p99: lat[Math.floor(lat.length * 0.99)]! };
}

const t = await startTestSystem();
const bare = Fastify();
try {
  for (let i = 0; i < 50; i++) await t.api('POST', '/categories', { body: { name: `Category ${i}`, description: 'Benchmark category' } });
  const one = (await t.api('GET', '/categories?limit=1')).body[0].category_id as string;
  const me = (await t.api('GET', '/org/me')).body as unknown;
  bare.get('/me', async () => me);
  const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });
  const auth = { 'x-api-key': API_KEY };
  const rows = [
    await measure('bare fastify route, same JSON', bareUrl, '/me', {}),
    await measure('GET /org/me (gateway only)', t.url, '/api/v1/org/me', auth),
    await measure('GET /categories/{id} (one gRPC call, in-process)', t.url, `/api/v1/categories/${one}`, auth),
    await measure('GET /categories (one gRPC call, a page of 10, in-process)', t.url, '/api/v1/categories', auth),
  ];
  setInProcessCalls(false);
  rows.push(
    await measure('GET /categories/{id} (one gRPC call, HTTP/2)', t.url, `/api/v1/categories/${one}`, auth),
    await measure('GET /categories (one gRPC call, a page of 10, HTTP/2)', t.url, '/api/v1/categories', auth),
  );
  setInProcessCalls(true);
  const gatewayOnly = rows[1]!;
  console.log(`\n${CLIENTS} clients, ${REQUESTS} requests per route, HTTP keep-alive`);
  console.log('| route | req/s | p50 ms | p99 ms | req/s vs GET /org/me |');
  console.log('|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.rps / gatewayOnly.rps).toFixed(2)}x |`,
    );
} finally {
  await bare.close();
  await t.stop();
}
