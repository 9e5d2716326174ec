/**
 * Publishing: hosted page throughput and webhook fan-out, through the whole
 * embedded system, each against a baseline measured in the same run.
 *
 * 1. Warm hosted pages: GET /sites/<slug>/<page> (gateway -> gRPC -> publishing's
 *    render cache, validated by the site version) against the same bytes from a
 *    bare fastify static route in this process; same client, same concurrency.
 * 2. Cold render: the first GET after the site changed (re-render from the read
 *    models) against a warm GET of the same page, one request at a time.
 * 3. Webhook fan-out: lifecycle deliveries (content.approved to S subscriptions,
 *    signed, leased, logged) to a local receiver, against signed POSTs sent
 *    straight from this process to the same receiver with the same concurrency.
 *
 *   npm run bench:publishing   (PAGES default 20, SECONDS per throughput run default 5,
 *                               CONCURRENCY default 16, SUBSCRIPTIONS default 5, APPROVALS default 40,
 *                               HOSTED_CACHE_TTL_MS default 1000; 0 measures every page going to publishing)
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { signWebhook } from '@kb/publishing';
import { startTestSystem } from '../e2e/harness.js';
import { draftFeed, eventually, startReceiver } from '../e2e/publishing-fixtures.js';

const PAGES = Number(process.env.PAGES ?? 20);
const SECONDS = Number(process.env.SECONDS ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const SUBSCRIPTIONS = Number(process.env.SUBSCRIPTIONS ?? 5);
const APPROVALS = Number(process.env.APPROVALS ?? 40);
const SECRET = `whsec_${Buffer.from('benchmark secret of 32 bytes!!!!').toString('base64')}`;

const CACHE_TTL = process.env.HOSTED_CACHE_TTL_MS ?? '1000';
// The receiver listens on loopback.
const t = await startTestSystem({
  DELIVERY_TICK_MS: '50',
  DELIVERY_BACKOFF_MS: '100',
  HOSTED_CACHE_TTL_MS: CACHE_TTL,
  ALLOW_PRIVATE_DESTINATIONS: 'true',
});
const feed = draftFeed(t.dataDir);
const me = await t.api('GET', '/org/me');
const org: string = me.body.org_id;
const slug: string = me.body.slug;

async function newPiece(title: string) {
  const d = await feed.created(feed.draft(org, { title }));
  await eventually(async () => (await t.api('GET', `/org/content/pieces/${d.draft_id}`)).status === 200, 'piece');
  const submitted = await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: {} });
  if (submitted.status !== 200) throw new Error(submitted.text);
  const ok = await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { body: {} });
  if (ok.status !== 200) throw new Error(ok.text);
  return d;
}
async function publish(id: string) {
  const res = await t.api('POST', `/org/content/pieces/${id}/publish`, { body: {} });
  if (res.status !== 200) throw new Error(res.text);
  return new URL(res.body.publications[0].url as string).pathname.split('/').pop()!;
}

console.log(`publishing ${PAGES} pages ...`);
const slugs: string[] = [];
for (let i = 0; i < PAGES; i++) slugs.push(await publish((await newPiece(`Benchmark page ${i}`)).draft_id));
const pageUrl = (s: string) => `${t.url}/sites/${slug}/${s}`;
const sample = Buffer.from(await (await fetch(pageUrl(slugs[0]!))).arrayBuffer());

const bare = Fastify();
bare.get('/static/:n', async (_req, reply) => reply.type('text/html; charset=utf-8').header('etag', '"x"').send(sample));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/static`;

/** Closed loop: CONCURRENCY clients for SECONDS, each request a page of the set in turn. */
async function throughput(url: (i: number) => string): Promise<number> {
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, lane) => {
      let i = lane;
      while (performance.now() < until) {
        const res = await fetch(url(i++ % PAGES));
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        done++;
      }
    }),
  );
  return done / SECONDS;
}

// Warm both (every page rendered once, connections open).
for (const s of slugs) await (await fetch(pageUrl(s))).arrayBuffer();
await throughput((i) => `${bareUrl}/${i}`);
const hostedRate = await throughput((i) => pageUrl(slugs[i]!));
const bareRate = await throughput((i) => `${bareUrl}/${i}`);

// Cold render vs warm, one request at a time: each round changes the site (a new page, through
// this gateway, which clears its cache) first, so the next GET re-renders in publishing.
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cold: number[] = [];
const warm: number[] = [];
for (let i = 0; i < 15; i++) {
  await publish((await newPiece(`Cold round ${i}`)).draft_id);
  const target = pageUrl(slugs[i % PAGES]!);
  let s = performance.now();
  await (await fetch(target)).arrayBuffer();
  cold.push(performance.now() - s);
  s = performance.now();
  await (await fetch(target)).arrayBuffer();
  warm.push(performance.now() - s);
}

// Webhook fan-out.
const receiver = await startReceiver(SECRET);
for (let i = 0; i < SUBSCRIPTIONS; i++) {
  const res = await t.api('POST', '/org/webhooks', {
    body: { url: `${receiver.url}/hook-${i}`, event_kinds: ['content.approved'], secret: SECRET },
  });
  if (res.status !== 201) throw new Error(res.text);
}
const drafts = [];
for (let i = 0; i < APPROVALS; i++) {
  const d = await feed.created(feed.draft(org, { title: `Fan-out ${i}` }));
  drafts.push(d);
}
for (const d of drafts) await eventually(async () => (await t.api('GET', `/org/content/pieces/${d.draft_id}`)).status === 200, 'piece');
// Submitted before the clock starts: the figure is approvals and their fan-out.
for (const d of drafts) await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: {} });
const expected = APPROVALS * SUBSCRIPTIONS;
const fanStart = performance.now();
for (const d of drafts) await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { body: {} });
await eventually(async () => receiver.received.length >= expected, 'fan-out', 120_000);
const fanSeconds = (performance.now() - fanStart) / 1000;

// Baseline: the same number of signed POSTs straight to the receiver, same concurrency as the worker (16).
const body = JSON.stringify({ type: 'content.approved', timestamp: new Date().toISOString(), data: { piece_id: randomUUID() } });
let next = 0;
const directStart = performance.now();
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < expected) {
      next++;
      const id = randomUUID();
      const ts = Math.floor(Date.now() / 1000);
      const res = await fetch(`${receiver.url}/direct`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(ts),
          'webhook-signature': signWebhook(SECRET, id, ts, body),
        },
        body,
      });
      await res.arrayBuffer();
    }
  }),
);
const directSeconds = (performance.now() - directStart) / 1000;

const fmt = (n: number) => n.toFixed(1);
console.log(
  `\nhosted pages (${PAGES} pages of ${sample.length} bytes, ${CONCURRENCY} concurrent clients, ${SECONDS}s each, gateway cache ${CACHE_TTL} ms)`,
);
console.log(`  warm hosted page:       ${fmt(hostedRate)} pages/s`);
console.log(`  bare fastify, same bytes: ${fmt(bareRate)} pages/s`);
console.log(`  ratio hosted / bare:    ${(hostedRate / bareRate).toFixed(2)}`);
console.log(`cold render (first GET after the site changed) vs warm, sequential, median of ${cold.length}`);
console.log(
  `  cold: ${median(cold).toFixed(2)} ms   warm: ${median(warm).toFixed(2)} ms   cold / warm: ${(median(cold) / median(warm)).toFixed(2)}`,
);
console.log(`webhook fan-out (${APPROVALS} approvals x ${SUBSCRIPTIONS} subscriptions = ${expected} signed deliveries)`);
console.log(`  through publishing:     ${fmt(expected / fanSeconds)} deliveries/s (approve calls included)`);
console.log(`  direct signed POSTs:    ${fmt(expected / directSeconds)} deliveries/s`);
console.log(`  ratio publishing / direct: ${(directSeconds / fanSeconds).toFixed(2)}`);
console.log(`  duplicates seen by the receiver: ${receiver.duplicates}, bad signatures: ${receiver.badSignatures}`);

await receiver.close();
await bare.close();
await feed.close();
await t.stop();
