import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { API_KEY } from './harness.js';
import { draftFeed, eventually, verifySignature } from './publishing-fixtures.js';
import { startAllInOneProcess } from './all-in-one-process.js';

/**
 * Webhook deliveries survive the process being killed mid-delivery (SIGKILL, no
 * shutdown): after a restart on the same data directory every delivery arrives,
 * and a receiver that dedupes by webhook-id processes each exactly once.
 */
const SECRET = `whsec_${Buffer.from('crash test secret of 32 bytes!!!').toString('base64')}`;
const PIECES = 24;

const start = (dataDir: string) =>
  startAllInOneProcess(dataDir, {
    DELIVERY_TICK_MS: '100',
    ALLOW_PRIVATE_DESTINATIONS: 'true', // the receiver listens on loopback
    DELIVERY_BACKOFF_MS: '200',
    // The worker lease (3x this) is how long the dead process blocks delivery after the kill.
    DELIVERY_TIMEOUT_MS: '2000',
  });

describe('crash recovery of webhook deliveries', () => {
  it('loses no delivery and sends none twice to a deduping receiver when killed mid-delivery', { timeout: 300_000 }, async () => {
    // The receiver: slow (so deliveries are in flight at the kill), verifies, dedupes by webhook-id.
    const processed = new Map<string, string>();
    let requests = 0;
    let bad = 0;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        requests++;
        const id = String(req.headers['webhook-id']);
        if (!verifySignature(SECRET, id, String(req.headers['webhook-timestamp']), body, String(req.headers['webhook-signature']))) {
          bad++;
          res.writeHead(401).end();
          return;
        }
        setTimeout(() => {
          if (!processed.has(id)) processed.set(id, (JSON.parse(body) as { data: { piece_id: string } }).data.piece_id);
          res.writeHead(204).end();
        }, 150);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

    const dataDir = mkdtempSync(join(tmpdir(), 'kb-pub-crash-'));
    let proc = start(dataDir);
    const feed = draftFeed(dataDir);
    try {
      let url = await proc.url;
      const api = (method: string, path: string, body?: unknown) =>
        fetch(`${url}/api/v1${path}`, {
          method,
          headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
      const org = ((await (await api('GET', '/org/me')).json()) as { org_id: string }).org_id;
      const sub = await api('POST', '/org/webhooks', { url: hookUrl, event_kinds: ['content.approved'], secret: SECRET });
      assert.equal(sub.status, 201, await sub.text());
      const drafts = [];
      for (let i = 0; i < PIECES; i++) drafts.push(await feed.created(feed.draft(org, { title: `Crash piece ${i}` })));
      for (const d of drafts)
        await eventually(async () => (await api('GET', `/org/content/pieces/${d.draft_id}`)).status === 200, 'piece', 60_000);
      for (const d of drafts) {
        assert.equal((await api('POST', `/org/content/pieces/${d.draft_id}/submit`, {})).status, 200);
        assert.equal((await api('POST', `/org/content/pieces/${d.draft_id}/approve`, {})).status, 200);
      }

      // Kill without any shutdown once deliveries are flowing but not all done.
      await eventually(async () => requests >= 3, 'first deliveries', 60_000);
      proc.child.kill('SIGKILL');
      await proc.exited;
      const before = processed.size;
      assert.ok(before < PIECES, `the kill came too late (${before} of ${PIECES} already processed)`);

      proc = start(dataDir);
      url = await proc.url;
      await eventually(async () => processed.size >= PIECES, 'every delivery after the restart', 120_000);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(bad, 0);
      assert.equal(processed.size, PIECES, 'exactly one processed delivery per approval');
      assert.deepEqual([...new Set(processed.values())].sort(), drafts.map((d) => d.draft_id).sort(), 'one per piece, none lost');
    } finally {
      await feed.close();
      proc.child.kill('SIGTERM');
      await proc.exited;
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
