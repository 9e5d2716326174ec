import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { createSocket, type Socket } from 'node:dgram';
import { join } from 'node:path';
import { isIPv4, isIPv6, type AddressInfo } from 'node:net';
import { createSqliteEventBus } from '@kb/bus/sqlite';
import { topics, type DraftRevision, type EventEnvelope } from '@kb/events';

/**
 * Fixtures of the publishing tests: drafts fed the way generation publishes them
 * (draft.created / draft.revised envelopes on the generation topic), a webhook
 * receiver that checks Standard Webhooks signatures and dedupes by webhook-id,
 * a fake WordPress that speaks its REST API, and a DNS server for TXT records.
 */

export function draftFeed(dataDir: string) {
  const bus = createSqliteEventBus({ path: join(dataDir, 'bus.db') });
  let position = 0;
  const publish = async (type: string, org: string, data: Record<string, unknown>) => {
    const envelope: EventEnvelope = {
      id: randomUUID(),
      type,
      schema: 1,
      stream_id: `draft-${String(data.draft_id)}`,
      version: 1,
      position: ++position,
      data,
      metadata: { org_id: org, actor: 'test:generation' },
      recorded_at: new Date().toISOString(),
    };
    await bus.publish(topics.generation, [{ key: org, value: JSON.stringify(envelope) }]);
  };
  return {
    publish,
    /** A whole draft revision; `verified: false` makes its second sentence unsupported. */
    draft(org: string, o: Partial<DraftRevision> & { verified?: boolean } = {}): DraftRevision {
      const content_id = randomUUID();
      const version_id = randomUUID();
      const cite = (n: number) => ({ content_id, version_id, chunk_id: `${version_id}:${n}`, quote: `Quoted passage ${n} <b>& more</b>` });
      const verified = o.verified ?? true;
      const { verified: _v, ...rest } = o;
      return {
        draft_id: randomUUID(),
        org_id: org,
        revision: 1,
        content_type_id: randomUUID(),
        content_kind: 'article',
        title: 'Vitamin D and the winter months',
        description: 'What the sources say about vitamin D in winter.',
        format: 'markdown',
        body: 'Vitamin D is made in the skin [1]. Winter sun is weak [2].',
        sections: [
          {
            section_id: 's1',
            title: 'Why it matters',
            sentences: [
              { index: 0, text: 'Vitamin D is made in the skin from sunlight.', verdict: 'supported', citations: [cite(0)] },
              verified
                ? { index: 1, text: 'Winter sun in the north is too weak for it.', verdict: 'supported', citations: [cite(1)] }
                : { index: 1, text: 'Everyone needs ten times the usual dose.', verdict: 'unsupported', citations: [] },
              { index: 2, text: 'Read on.', verdict: 'not_factual', citations: [] },
            ],
          },
        ],
        target_prompt_ids: [randomUUID()],
        source_folder_ids: [],
        source_content_ids: [content_id],
        verification: verified ? 'verified' : 'needs_review',
        totals: { sentences: 3, factual: 2, supported: verified ? 2 : 1, unsupported: verified ? 0 : 1 },
        stale_sources: [],
        auto_publish: false,
        publish_destination_ids: [],
        at: new Date().toISOString(),
        ...rest,
      };
    },
    async created(d: DraftRevision) {
      await publish('draft.created', d.org_id, d as unknown as Record<string, unknown>);
      return d;
    },
    async revised(d: DraftRevision) {
      await publish('draft.revised', d.org_id, d as unknown as Record<string, unknown>);
      return d;
    },
    close: () => bus.close(),
  };
}

export interface Received {
  id: string;
  timestamp: string;
  body: { type: string; timestamp: string; data: Record<string, any> };
  path: string;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (s += c));
    req.on('end', () => resolve(s));
  });

export function verifySignature(secret: string, id: string, ts: string, body: string, header: string): boolean {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
  const expected = Buffer.from(`v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`);
  return header.split(' ').some((sig) => sig.length === expected.length && timingSafeEqual(Buffer.from(sig), expected));
}

/** A webhook receiver: checks signatures, dedupes by webhook-id, can fail the first N attempts of each path. */
export async function startReceiver(secret: string) {
  const received: Received[] = [];
  const attempts = new Map<string, number>();
  const failFirst = new Map<string, number>();
  let badSignatures = 0;
  let duplicates = 0;
  const seen = new Set<string>();
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const id = String(req.headers['webhook-id'] ?? '');
    const ts = String(req.headers['webhook-timestamp'] ?? '');
    if (!verifySignature(secret, id, ts, body, String(req.headers['webhook-signature'] ?? ''))) {
      badSignatures++;
      res.writeHead(401).end();
      return;
    }
    const path = req.url ?? '/';
    const n = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, n);
    if (n <= (failFirst.get(path) ?? 0)) {
      res.writeHead(503).end('not yet');
      return;
    }
    if (seen.has(id)) duplicates++;
    else {
      seen.add(id);
      received.push({ id, timestamp: ts, body: JSON.parse(body) as Received['body'], path });
    }
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    attempts,
    failFirst,
    get badSignatures() {
      return badSignatures;
    },
    get duplicates() {
      return duplicates;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A fake WordPress speaking /wp-json/wp/v2/posts with HTTP Basic application passwords. */
export async function startFakeWordPress(user: string, password: string) {
  const posts = new Map<number, Record<string, unknown>>();
  const calls: { method: string; path: string }[] = [];
  let nextId = 100;
  let failing = false;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '/';
    calls.push({ method: req.method ?? '', path });
    const send = (status: number, doc: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    if (failing) return send(500, { code: 'internal_server_error', message: 'The database is down' });
    if (req.headers.authorization !== `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`)
      return send(401, { code: 'rest_not_logged_in', message: 'You are not currently logged in.' });
    const m = /^\/wp-json\/wp\/v2\/posts(?:\/(\d+))?(\?.*)?$/.exec(path);
    if (!m) return send(404, { code: 'rest_no_route', message: 'No route' });
    const id = m[1] ? Number(m[1]) : undefined;
    if (req.method === 'POST' && id === undefined) {
      const post = { ...(JSON.parse(body) as Record<string, unknown>), id: nextId++ };
      posts.set(post.id as number, post);
      return send(201, { ...post, link: `https://blog.example.test/?p=${String(post.id)}` });
    }
    if (id === undefined || !posts.has(id)) return send(404, { code: 'rest_post_invalid_id', message: 'Invalid post ID.' });
    if (req.method === 'POST') {
      const post = { ...posts.get(id), ...(JSON.parse(body) as Record<string, unknown>), id };
      posts.set(id, post);
      return send(200, { ...post, link: `https://blog.example.test/?p=${id}` });
    }
    if (req.method === 'DELETE') {
      const post = posts.get(id);
      posts.delete(id);
      return send(200, { deleted: true, previous: post });
    }
    return send(405, { code: 'rest_no_route', message: 'No route' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    calls,
    set failing(v: boolean) {
      failing = v;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A UDP DNS server answering TXT, A and AAAA queries from two tables (an unknown name: NXDOMAIN). */
export async function startDnsServer() {
  const records = new Map<string, string[]>();
  /** Addresses of a name, IPv4 and IPv6 mixed (answered as A and AAAA). */
  const addresses = new Map<string, string[]>();
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    let offset = 12;
    const labels: string[] = [];
    while (msg[offset]! > 0) {
      const len = msg[offset]!;
      labels.push(msg.subarray(offset + 1, offset + 1 + len).toString('ascii'));
      offset += len + 1;
    }
    offset += 1;
    const qtype = msg.readUInt16BE(offset);
    const question = msg.subarray(12, offset + 4);
    const name = labels.join('.').toLowerCase();
    const ips = addresses.get(name) ?? [];
    const datas: Buffer[] =
      qtype === 16
        ? (records.get(name) ?? []).map((txt) => {
            const data = Buffer.from(txt, 'utf8');
            return Buffer.concat([Buffer.from([data.length]), data]);
          })
        : qtype === 1
          ? ips.filter((ip) => isIPv4(ip)).map((ip) => Buffer.from(ip.split('.').map(Number)))
          : qtype === 28
            ? ips.filter((ip) => isIPv6(ip)).map(ipv6Bytes)
            : [];
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | (records.has(name) || addresses.has(name) ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(datas.length, 6);
    const answers = datas.map((data) => {
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(qtype, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(0, 6);
      rr.writeUInt16BE(data.length, 10);
      return Buffer.concat([rr, data]);
    });
    socket.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    addresses,
    close: () => new Promise<void>((r) => socket.close(() => r())),
  };
}

/** The 16 bytes of an IPv6 address ("::1", "::ffff:127.0.0.1" and friends). */
function ipv6Bytes(ip: string): Buffer {
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const group = (h: string) => {
    if (!h.includes('.')) return [parseInt(h, 16)];
    const [a, b, c, d] = h.split('.').map(Number) as [number, number, number, number];
    return [(a << 8) | b, (c << 8) | d];
  };
  const part = (s: string | undefined) => (s ? s.split(':').flatMap(group) : []);
  const left = part(head);
  const right = part(tail);
  const groups = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** Polls until check returns a value (or throws after the deadline). */
export async function eventually<T>(check: () => Promise<T | undefined | false>, label: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A GET with a Host header of our choosing (fetch may not set Host). */
export function getWithHost(base: string, host: string, path: string): Promise<{ status: number; text: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET', headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A fake Ghost Admin API (/ghost/api/admin/posts/) that checks the HS256 JWT of an `id:secret` admin key. */
export async function startFakeGhost(adminKey: string) {
  const [kid, secret] = adminKey.split(':') as [string, string];
  const posts = new Map<string, Record<string, unknown>>();
  const calls: { method: string; path: string }[] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '/';
    calls.push({ method: req.method ?? '', path });
    const send = (status: number, doc?: unknown) =>
      doc === undefined
        ? res.writeHead(status).end()
        : res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    const fail = (status: number, message: string) => send(status, { errors: [{ message }] });
    const token = /^Ghost (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const [h, p, sig] = token.split('.');
    const header = h ? (JSON.parse(Buffer.from(h, 'base64url').toString()) as { kid?: string; alg?: string }) : {};
    const payload = p ? (JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud?: string; exp?: number }) : {};
    const expected = createHmac('sha256', Buffer.from(secret, 'hex')).update(`${h}.${p}`).digest('base64url');
    if (
      header.kid !== kid ||
      header.alg !== 'HS256' ||
      payload.aud !== '/admin/' ||
      sig !== expected ||
      (payload.exp ?? 0) * 1000 < Date.now()
    )
      return fail(401, 'Invalid token');
    const m = /^\/ghost\/api\/admin\/posts\/(?:([a-z0-9]+)\/)?(\?.*)?$/.exec(path);
    if (!m) return fail(404, 'Resource not found');
    const id = m[1];
    if (req.method === 'POST' && !id) {
      const input = (JSON.parse(body) as { posts: Record<string, unknown>[] }).posts[0]!;
      const post = {
        ...input,
        id: `p${++n}`,
        updated_at: new Date(Date.now() + n).toISOString(),
        url: `https://ghost.example.test/${String(input.slug)}/`,
      };
      posts.set(post.id, post);
      return send(201, { posts: [post] });
    }
    if (!id || !posts.has(id)) return fail(404, 'Post not found');
    const post = posts.get(id)!;
    if (req.method === 'GET') return send(200, { posts: [post] });
    if (req.method === 'PUT') {
      const input = (JSON.parse(body) as { posts: Record<string, unknown>[] }).posts[0]!;
      if (input.updated_at !== post.updated_at) return fail(409, 'Someone else is editing this post');
      const next = { ...post, ...input, updated_at: new Date(Date.now() + ++n).toISOString() };
      posts.set(id, next);
      return send(200, { posts: [next] });
    }
    if (req.method === 'DELETE') {
      posts.delete(id);
      return send(204);
    }
    return fail(405, 'Method not allowed');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
