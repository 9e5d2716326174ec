import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../format-samples.js';
import { API_KEY, type ApiResponse, type TestSystem } from './harness.js';

/** Upload helpers shared by the ingest and content e2e tests. */

export { fixturesDir, SAMPLES } from '../format-samples.js';
export const fixture = (name: string): Buffer => readFileSync(join(fixturesDir, name));

export interface Part {
  name: string;
  /** A file part when filename is given, else a text field. */
  filename?: string;
  data: Buffer | string;
}

/** multipart/form-data through fetch, with the API key unless key is null. */
export async function postForm<T = any>(
  t: TestSystem,
  method: string,
  path: string,
  parts: Part[],
  key: string | null = API_KEY,
): Promise<ApiResponse<T>> {
  const form = new FormData();
  for (const p of parts) {
    if (p.filename !== undefined) form.append(p.name, new Blob([p.data]), p.filename);
    else form.append(p.name, String(p.data));
  }
  const res = await fetch(`${t.url}/api/v1${path}`, { method, body: form, headers: key === null ? {} : { 'x-api-key': key } });
  const text = await res.text();
  const body = (res.headers.get('content-type') ?? '').includes('application/json') && text ? JSON.parse(text) : text;
  return { status: res.status, headers: res.headers, body, text };
}

export const files = (...names: string[]): Part[] => names.map((n) => ({ name: 'files', filename: n, data: fixture(n) }));

/** Unique bytes, so a test's upload is never a duplicate of another test's. */
export const uniqueText = (label: string) => `${label}\n\nUnique paragraph ${Math.random().toString(36).slice(2)} ${Date.now()}.\n`;

const TERMINAL = new Set(['completed', 'failed']);

/** Polls the item until it completes or fails (the assertion is that it gets there in time). */
export async function waitForOutcome(t: TestSystem, contentId: string, key: string = API_KEY, timeoutMs = 60_000): Promise<any> {
  const start = Date.now();
  for (;;) {
    const res = await t.api('GET', `/org/kb/content/${contentId}`, { key });
    assert.equal(res.status, 200, res.text);
    if (TERMINAL.has(res.body.processing_status)) return res.body;
    if (Date.now() - start > timeoutMs) assert.fail(`content ${contentId} still ${res.body.processing_status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function chunksOf(t: TestSystem, contentId: string, query = ''): Promise<any> {
  const res = await t.api('GET', `/org/kb/content/${contentId}/chunks${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}
