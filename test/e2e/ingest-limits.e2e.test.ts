import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { postForm, uniqueText, waitForOutcome } from './ingest-helpers.js';

/** The size limit (MAX_UPLOAD_BYTES, small here) and ingest credits (few here). */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({ MAX_UPLOAD_BYTES: '4096', BOOTSTRAP_CREDITS: '4', CREDIT_COST_INGEST: '1' });
});
afterAll(async () => t.stop());

describe('ingest limits', () => {
  it('a file over the size limit is accepted and ends failed with the reason; the others in the call are unaffected', async () => {
    const res = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'huge.txt', data: 'x'.repeat(10_000) },
      { name: 'files', filename: 'small.txt', data: uniqueText('small') },
    ]);
    assert.equal(res.status, 202, res.text);
    const [huge, small] = res.body.files;
    const failed = await waitForOutcome(t, huge.content_id);
    assert.equal(failed.processing_status, 'failed');
    assert.match(failed.failure_reason, /larger than the 4 KB limit/);
    assert.equal((await waitForOutcome(t, small.content_id)).processing_status, 'completed');
  });

  it('reserves one credit per file before any work: 402 when the balance does not cover the call, and nothing is stored', async () => {
    // 2 of the 4 credits were used above; 3 files need 3.
    const text = uniqueText('unpaid');
    const three = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'a.txt', data: text },
      { name: 'files', filename: 'b.txt', data: uniqueText('b') },
      { name: 'files', filename: 'c.txt', data: uniqueText('c') },
    ]);
    assert.equal(three.status, 402, three.text);
    const raw = await t.api('POST', '/org/kb/raw', { body: { title: 'paid', text: uniqueText('paid') } });
    assert.equal(raw.status, 202, raw.text);
    const one = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'a.txt', data: text }]);
    assert.equal(one.status, 202, `${one.text} (not a duplicate: the 402 call stored nothing)`);
    const broke = await t.api('POST', '/org/kb/raw', { body: { title: 'unpaid', text: uniqueText('broke') } });
    assert.equal(broke.status, 402, broke.text);
    const file = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'x.pdf', data: '%PDF-1.4 x' }]);
    assert.equal(file.status, 402, file.text);
  });
});
