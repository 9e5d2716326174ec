import assert from 'node:assert/strict';
import { API_KEY, type TestSystem } from './harness.js';
import { waitForOutcome } from './ingest-helpers.js';

/** Shared by the generation e2e tests: sources in the KB, runs polled to their end. */

export const SOURCES = {
  solar: [
    '# Solar panel efficiency',
    '',
    'Monocrystalline solar panels convert about 22 percent of sunlight into electricity. ',
    'Polycrystalline panels reach about 17 percent efficiency at a lower price. ',
    'Panel output decreases as the cell temperature rises above 25 degrees Celsius. ',
    'Most manufacturers warrant their solar panels for 25 years of service.',
  ].join('\n'),
  battery: [
    '# Home battery storage',
    '',
    'A home battery stores surplus solar electricity for use in the evening. ',
    'Lithium iron phosphate batteries last for more than 6000 charge cycles. ',
    'Battery storage increases the share of solar power a household uses itself. ',
    'A typical home battery holds between 5 and 15 kilowatt hours of energy.',
  ].join('\n'),
};

export async function addSource(t: TestSystem, title: string, text: string, extra: Record<string, unknown> = {}, key = API_KEY) {
  const res = await t.api('POST', '/org/kb/raw', { body: { title, text, ...extra }, key });
  assert.equal(res.status, 202, res.text);
  const done = await waitForOutcome(t, res.body.id, key);
  assert.equal(done.processing_status, 'completed', done.failure_reason);
  return done as { id: string; version_id: string };
}

/** Waits until search finds the text (indexing follows ingest through the bus). */
export async function waitIndexed(t: TestSystem, query: string, contentId: string, timeoutMs = 30_000) {
  const start = Date.now();
  for (;;) {
    const res = await t.api('POST', '/org/search', { body: { query, max_results: 20 } });
    assert.equal(res.status, 200, res.text);
    if (res.body.context.some((c: { content_id: string }) => c.content_id === contentId)) return;
    if (Date.now() - start > timeoutMs) assert.fail(`content ${contentId} not searchable after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const TERMINAL = new Set(['completed', 'failed']);

export async function waitForRun(t: TestSystem, runId: string, timeoutMs = 60_000, key: string = API_KEY): Promise<any> {
  const start = Date.now();
  const seen = new Set<string>();
  for (;;) {
    const res = await t.api('GET', `/org/generation/runs/${runId}`, { key });
    assert.equal(res.status, 200, res.text);
    seen.add(res.body.state);
    if (TERMINAL.has(res.body.state)) return { ...res.body, seen };
    if (Date.now() - start > timeoutMs) assert.fail(`run ${runId} still ${res.body.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function eventually<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A one-page PDF whose text is `lines` (Helvetica), built by hand so a test can re-upload a source with new text. */
export function textPdf(lines: string[]): Buffer {
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)');
  const stream = ['BT', '/F1 11 Tf', '14 TL', '50 780 Td', ...lines.map((l) => `(${esc(l)}) Tj T*`), 'ET'].join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
