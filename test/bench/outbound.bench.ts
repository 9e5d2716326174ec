/**
 * The outbound address policy's cost: signed-webhook-sized POSTs to a loopback
 * receiver through the guarded fetch (@kb/platform/outbound: the policy checked
 * on every connection, redirects not followed) against Node's own fetch, same
 * concurrency, rounds alternated so that load on the machine falls on both.
 * Once by address (no lookup) and once by a name (through the guarded lookup).
 *
 *   npm run bench:outbound   (REQUESTS per round default 2000, ROUNDS default 3, CONCURRENCY default 16)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboundFetch } from '@kb/platform/outbound';

const REQUESTS = Number(process.env.REQUESTS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const body = JSON.stringify({ type: 'content.approved', timestamp: new Date().toISOString(), data: { text: 'x'.repeat(2000) } });

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(204).end());
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;

const guarded = createOutboundFetch({
  policy: { allowPrivate: true },
  // The name resolves without a DNS server, as a cached answer would.
  resolveAll: async () => [{ address: '127.0.0.1', family: 4 }],
});

async function rate(doFetch: typeof fetch, url: string): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < REQUESTS) {
        const res = await doFetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.body?.cancel();
        if (res.status !== 204) throw new Error(`answered ${res.status}`);
      }
    }),
  );
  return REQUESTS / (Number(process.hrtime.bigint() - started) / 1e9);
}

const byAddress = `http://127.0.0.1:${port}/hook`;
const byName = `http://receiver.bench.test:${port}/hook`;
await rate(fetch, byAddress); // warm-up
await rate(guarded, byAddress);
const results = { plain: [] as number[], address: [] as number[], name: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  results.plain.push(await rate(fetch, byAddress));
  results.address.push(await rate(guarded, byAddress));
  results.name.push(await rate(guarded, byName));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const [plain, address, name] = [median(results.plain), median(results.address), median(results.name)];
console.log(`outbound POSTs to a loopback receiver (${REQUESTS} per round, ${CONCURRENCY} concurrent, median of ${ROUNDS})`);
console.log(`  Node fetch:                 ${plain.toFixed(0)} req/s`);
console.log(`  guarded fetch, by address:  ${address.toFixed(0)} req/s (${(address / plain).toFixed(2)}x)`);
console.log(`  guarded fetch, by name:     ${name.toFixed(0)} req/s (${(name / plain).toFixed(2)}x)`);
await guarded.close();
server.close();
