import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';

/**
 * Bodies the held-out fuzzing found getting through (issue 37 items 3 and 4),
 * sent as raw bytes over a socket so nothing between the test and the server
 * repairs them: every malformed multipart body is a 400 `malformed_multipart`,
 * and a JSON body over the limit is answered 413 while the client still sends.
 */

let t: TestSystem;

beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

interface RawResponse {
  status: number;
  headers: string;
  body: string;
  /** A socket error the client saw while sending or reading (EPIPE, ECONNRESET). */
  error?: string;
}

/**
 * Sends one request byte for byte (the body in pieces, as a client writing a
 * large body does), then reads the answer. Like a client that writes its whole
 * body before it reads, it reports a socket error (EPIPE, ECONNRESET) when the
 * server drops the connection before the body is written.
 */
function rawRequest(head: string, body: Buffer): Promise<RawResponse> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    let error: string | undefined;
    let written = false;
    let settled = false;
    const parse = () => {
      const text = Buffer.concat(received).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const headers = split < 0 ? text : text.slice(0, split);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
      const length = /\r\ncontent-length: (\d+)/i.exec(headers)?.[1];
      const rest = split < 0 ? '' : text.slice(split + 4);
      return { status, headers, body: rest, complete: length !== undefined && Buffer.byteLength(rest, 'latin1') >= Number(length) };
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const { status, headers, body: text } = parse();
      resolve({ status, headers, body: text, ...(error !== undefined && { error }) });
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (written && parse().complete) finish();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
      finish();
    });
    socket.on('close', finish);
    socket.on('connect', async () => {
      socket.write(head);
      const PIECE = 64 * 1024;
      for (let at = 0; at < body.length && !settled; at += PIECE) {
        if (!socket.write(body.subarray(at, at + PIECE))) await new Promise((r) => socket.once('drain', r));
      }
      // Written once the kernel took the last piece; a connection dropped before that is an error here.
      socket.write(Buffer.alloc(0), () => {
        written = true;
        if (parse().complete) finish();
      });
    });
  });
}

const multipartHead = (path: string, boundary: string, length: number) =>
  `POST /api/v1${path} HTTP/1.1\r\nHost: test\r\nX-API-Key: ${API_KEY}\r\n` +
  `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`;

const filePart = (boundary: string, field: string, type: string) =>
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="a.bin"\r\nContent-Type: ${type}\r\n\r\n`);

/** Binary bytes without a line break, so no boundary can hide in them. */
const binary = (size: number) => Buffer.from(randomBytes(size).map((b) => (b === 13 || b === 10 || b === 45 ? 0 : b)));

describe('malformed multipart bodies are 400 malformed_multipart', () => {
  const BOUNDARY = 'xxBOUNDARYxx';
  const routes = [
    { path: '/org/kb/upload', field: 'files' },
    { path: '/content/file', field: 'file' },
  ];
  const variants: { name: string; body: (field: string) => Buffer }[] = [
    {
      name: 'a binary part whose body ends without the closing boundary',
      body: (field) => Buffer.concat([filePart(BOUNDARY, field, 'application/octet-stream'), binary(4096)]),
    },
    {
      name: 'a binary part larger than one streamed piece that ends without the closing boundary',
      body: (field) => Buffer.concat([filePart(BOUNDARY, field, 'application/pdf'), binary(600 * 1024)]),
    },
    {
      name: 'a complete body whose boundary differs from the header’s',
      body: (field) =>
        Buffer.concat([
          filePart('otherBOUNDARY', field, 'application/octet-stream'),
          binary(2048),
          Buffer.from(`\r\n--otherBOUNDARY--\r\n`),
        ]),
    },
    {
      name: 'a body whose boundary differs from the header’s and that ends without a closing one',
      body: (field) => Buffer.concat([filePart('otherBOUNDARY', field, 'application/octet-stream'), binary(2048)]),
    },
    {
      name: 'a binary part of random bytes (line breaks and dashes too) that ends without the closing boundary',
      body: (field) => Buffer.concat([filePart(BOUNDARY, field, 'application/octet-stream'), randomBytes(300 * 1024)]),
    },
    {
      name: 'a binary part that ends inside the closing boundary',
      body: (field) =>
        Buffer.concat([filePart(BOUNDARY, field, 'application/octet-stream'), binary(1024), Buffer.from(`\r\n--${BOUNDARY.slice(0, 5)}`)]),
    },
    {
      name: 'a binary part closed by a boundary without its final dashes',
      body: (field) =>
        Buffer.concat([filePart(BOUNDARY, field, 'application/octet-stream'), binary(1024), Buffer.from(`\r\n--${BOUNDARY}`)]),
    },
    {
      name: 'a body that ends inside a part’s headers',
      body: (field) => Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filena`),
    },
    {
      name: 'a binary part followed by a field that ends without the closing boundary',
      body: (field) =>
        Buffer.concat([
          filePart(BOUNDARY, field, 'application/octet-stream'),
          binary(1024),
          Buffer.from(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="title"\r\n\r\nTitl`),
        ]),
    },
    {
      name: 'a text part that ends without the closing boundary',
      body: (field) => Buffer.concat([filePart(BOUNDARY, field, 'text/plain'), Buffer.from('hello wor')]),
    },
  ];
  for (const route of routes) {
    for (const variant of variants) {
      it(`${route.path}: ${variant.name}`, async () => {
        const body = variant.body(route.field);
        const res = await rawRequest(multipartHead(route.path, BOUNDARY, body.length), body);
        assert.equal(res.error, undefined, `socket error ${res.error}`);
        assert.equal(res.status, 400, res.headers + '\n' + res.body);
        assert.equal(JSON.parse(res.body).error.code, 'malformed_multipart', res.body);
      });
    }
  }

  it('the service still takes a well-formed upload afterwards', async () => {
    const form = new FormData();
    form.append('files', new Blob(['A well-formed file after the malformed ones.'], { type: 'text/plain' }), 'fine.txt');
    const res = await fetch(`${t.url}/api/v1/org/kb/upload`, { method: 'POST', headers: { 'x-api-key': API_KEY }, body: form });
    assert.equal(res.status, 202, await res.text());
  });
});

describe('a JSON body over the limit', () => {
  const routes = [
    { method: 'POST', path: '/content/raw' },
    { method: 'POST', path: '/org/kb/raw' },
    { method: 'POST', path: '/search' },
    { method: 'POST', path: '/org/search' },
    { method: 'POST', path: '/categories' },
    { method: 'POST', path: '/prompts' },
    { method: 'POST', path: '/auth/login' },
    { method: 'POST', path: '/org/brand-kit' },
  ];
  const body = Buffer.from(JSON.stringify({ title: 'big', text: 'x'.repeat(5 * 1024 * 1024) }));

  for (const route of routes) {
    it(`${route.method} ${route.path}: the client reads the 413 (5 MB body)`, async () => {
      const head =
        `${route.method} /api/v1${route.path} HTTP/1.1\r\nHost: test\r\nX-API-Key: ${API_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      const res = await rawRequest(head, body);
      assert.equal(res.error, undefined, `socket error ${res.error} (status ${res.status})`);
      assert.equal(res.status, 413, res.headers + '\n' + res.body);
    });
  }

  it('the drained connection carries the client’s next request', async () => {
    const { hostname, port } = new URL(t.url);
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /api/v1/content/raw HTTP/1.1\r\nHost: test\r\nX-API-Key: ${API_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    socket.write('GET /health/live HTTP/1.1\r\nHost: test\r\n\r\n');
    const closed = new Promise((r) => socket.once('close', r));
    // Both answers arrive on the one connection, in order.
    while (!/HTTP\/1\.1 413[\s\S]*HTTP\/1\.1 200/.test(text)) {
      const more = await Promise.race([new Promise((r) => socket.once('data', () => r('data'))), closed.then(() => 'closed')]);
      if (more === 'closed') break;
    }
    socket.destroy();
    assert.match(text, /^HTTP\/1\.1 413[\s\S]*HTTP\/1\.1 200/, text.slice(0, 500));
  });

  it('a body declared over the drain bound is answered 413 and its connection closed', async () => {
    const { hostname, port } = new URL(t.url);
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {});
    await new Promise((r) => socket.once('connect', r));
    const closed = new Promise((r) => socket.once('close', r));
    socket.write(
      `POST /api/v1/content/raw HTTP/1.1\r\nHost: test\r\nX-API-Key: ${API_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n{"title":"x"`,
    );
    // The server closes without waiting for 64 MB that never come.
    await closed;
    assert.match(text, /^HTTP\/1\.1 413/);
    assert.match(text, /\r\nconnection: close\r\n/i);
  });

  it('the same with fetch: 413 and the connection still usable', async () => {
    const res = await fetch(`${t.url}/api/v1/content/raw`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body,
    });
    assert.equal(res.status, 413, await res.text());
    const after = await fetch(`${t.url}/health/live`);
    assert.equal(after.status, 200);
  });
});
