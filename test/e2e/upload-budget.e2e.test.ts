import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { postForm, uniqueText, waitForOutcome } from './ingest-helpers.js';

/**
 * Floods (issue 13, item 3, uploads): files stream to the blob store in pieces,
 * one request may send at most UPLOAD_MAX_REQUEST_BYTES (413), and the uploads in
 * progress may declare at most UPLOAD_INFLIGHT_BYTES together (503 with
 * Retry-After, before any byte is read). Small budgets here.
 */
const MAX_REQUEST = 4 * 1024 * 1024;
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({ UPLOAD_MAX_REQUEST_BYTES: String(MAX_REQUEST), UPLOAD_INFLIGHT_BYTES: String(MAX_REQUEST) });
});
afterAll(async () => t.stop());

const BOUNDARY = 'kb-budget-boundary';
function multipart(filename: string, data: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** Files left under ingest's staging area (pieces of uploads in progress or never completed). */
function stagedFiles(): string[] {
  const root = join(t.dataDir, 'blobs', 'ingest', 'staging');
  const out: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(path);
    }
  };
  walk(root);
  return out;
}

async function noStagedPiecesLeft() {
  for (let i = 0; stagedFiles().length > 0; i++) {
    assert.ok(i < 100, `staged pieces left behind: ${stagedFiles().length}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function csv(label: string, bytes: number): Buffer {
  const rows = ['id,label,text'];
  let size = rows[0]!.length;
  for (let i = 0; size < bytes; i++) {
    const row = `${i},${label},"row ${i} of a streamed upload about inverters and panels"`;
    rows.push(row);
    size += row.length + 1;
  }
  return Buffer.from(rows.join('\n'));
}

describe('upload streaming and byte budgets', () => {
  it('streams a file of many pieces to the blob store: it completes, and the same bytes again are a duplicate', async () => {
    const data = csv(`streamed-${Date.now()}`, 3 * 1024 * 1024);
    const res = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'streamed.csv', data }]);
    assert.equal(res.status, 202, res.text);
    const [file] = res.body.files;
    const done = await waitForOutcome(t, file.content_id);
    assert.equal(done.processing_status, 'completed', done.failure_reason);
    assert.equal(done.size_bytes, data.length);
    const again = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'again.csv', data }]);
    assert.equal(again.status, 422, again.text);
    await noStagedPiecesLeft();
  });

  it('answers 413 for a request declaring more than the per-request budget, before reading it', async () => {
    const body = multipart('big.csv', csv('big', MAX_REQUEST + 1024));
    const res = await fetch(`${t.url}/api/v1/org/kb/upload`, {
      method: 'POST',
      body,
      headers: { 'x-api-key': API_KEY, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    });
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'upload_too_large');
  });

  it('answers 503 with Retry-After while the in-flight budget is spent, and accepts the upload once it is free', async () => {
    const held = multipart('held.csv', csv(`held-${Date.now()}`, 3 * 1024 * 1024));
    const url = new URL(`${t.url}/api/v1/org/kb/upload`);
    // An upload in progress that declares 3 MB of the 4 MB budget and sends half of it.
    const slow = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: {
        'x-api-key': API_KEY,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'content-length': String(held.length),
      },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      slow.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      slow.on('error', reject);
    });
    slow.write(held.subarray(0, held.length / 2));
    await new Promise((r) => setTimeout(r, 300));

    const second = multipart('second.csv', csv(`second-${Date.now()}`, 2 * 1024 * 1024));
    const refused = await fetch(`${t.url}/api/v1/org/kb/upload`, {
      method: 'POST',
      body: second,
      headers: { 'x-api-key': API_KEY, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'upload_capacity_reached');
    // A small upload still fits next to the held one.
    const small = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'small.txt', data: uniqueText('fits') }]);
    assert.equal(small.status, 202, small.text);

    slow.end(held.subarray(held.length / 2));
    const first = await answered;
    assert.equal(first.status, 202, first.body);
    const retried = await fetch(`${t.url}/api/v1/org/kb/upload`, {
      method: 'POST',
      body: second,
      headers: { 'x-api-key': API_KEY, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    });
    assert.equal(retried.status, 202, await retried.clone().text());
    // Let ingest finish these before the next test (a loaded machine).
    const ids = [
      ...((await retried.json()) as { files: { content_id: string }[] }).files,
      ...(JSON.parse(first.body) as { files: { content_id: string }[] }).files,
    ].map((f) => f.content_id);
    for (const id of ids) await waitForOutcome(t, id);
  });

  it('answers 413 for a chunked request (no declared length) once it passes the budget, and drops what was staged', async () => {
    const body = multipart('chunked.csv', csv('chunked', MAX_REQUEST + 512 * 1024));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < body.length; at += 64 * 1024) controller.enqueue(body.subarray(at, at + 64 * 1024));
        controller.close();
      },
    });
    const res = await fetch(`${t.url}/api/v1/org/kb/upload`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { 'x-api-key': API_KEY, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    } as RequestInit);
    assert.equal(res.status, 413, await res.clone().text());
    await noStagedPiecesLeft();
  });

  it('after a 413 for a chunked upload, the next request on the same keep-alive connection is answered', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, headers: Record<string, string>, body?: Buffer) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(`${t.url}${path}`, { method, agent, headers: { 'x-api-key': API_KEY, ...headers } }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(parts).toString() }));
        });
        req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${path} was not answered`)));
        req.on('error', reject);
        if (body) for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
        req.end();
      });
    try {
      const big = multipart('keepalive.csv', csv('keepalive', MAX_REQUEST + 512 * 1024));
      const refused = await send('POST', '/api/v1/org/kb/upload', { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, big);
      assert.equal(refused.status, 413, refused.text);
      for (let i = 0; i < 3; i++) {
        const next = await send('GET', '/api/v1/org/me', {});
        assert.equal(next.status, 200, next.text);
      }
    } finally {
      agent.destroy();
    }
  });
});
