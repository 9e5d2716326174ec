import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { fixture, postForm, uniqueText, waitForOutcome } from './ingest-helpers.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

const ITEM_FIELDS = ['id', 'org_id', 'type', 'title', 'version_num', 'processing_status', 'created_at', 'updated_at'];

/** A small valid PDF whose bytes are unique (a comment after %%EOF), so it is never a duplicate. */
const uniquePdf = () => Buffer.concat([fixture('sample.pdf'), Buffer.from(`\n% ${randomUUID()}\n`)]);

describe('POST /content/file', () => {
  it('accepts a PDF (202 queued, title defaults to "Untitled Content") that completes', async () => {
    const res = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'guide.pdf', data: uniquePdf() }]);
    assert.equal(res.status, 202, res.text);
    for (const f of ITEM_FIELDS) assert.ok(f in res.body, `content item has ${f}`);
    assert.equal(res.body.title, 'Untitled Content');
    assert.equal(res.body.type, 'document');
    assert.equal(res.body.processing_status, 'queued');
    assert.equal(res.body.version_num, 1);
    const done = await waitForOutcome(t, res.body.id);
    assert.equal(done.processing_status, 'completed', done.failure_reason);
  });

  it('takes title, summary, category and topic; DOCX and DOC too', async () => {
    const category = await t.api('POST', '/categories', { body: { name: `Handbooks ${randomUUID()}` } });
    assert.equal(category.status, 201, category.text);
    const category_id: string = category.body.category_id;
    const unknown = await postForm(t, 'POST', '/content/file', [
      { name: 'file', filename: 'handbook.docx', data: fixture('sample.docx') },
      { name: 'category_id', data: randomUUID() },
    ]);
    assert.equal(unknown.status, 404, `an unknown category: ${unknown.text}`);
    const res = await postForm(t, 'POST', '/content/file', [
      { name: 'file', filename: 'handbook.docx', data: fixture('sample.docx') },
      { name: 'title', data: 'Handbook' },
      { name: 'summary', data: 'How heat pumps work' },
      { name: 'category_id', data: category_id },
    ]);
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.title, 'Handbook');
    assert.equal(res.body.summary, 'How heat pumps work');
    assert.equal(res.body.category_id, category_id);
    const doc = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'handbook.doc', data: fixture('sample.doc') }]);
    assert.equal(doc.status, 202, doc.text);
    assert.equal((await waitForOutcome(t, doc.body.id)).processing_status, 'completed');
  });

  it('answers 422 for a duplicate, 400 for other formats (TXT included), no file or two files, 401 without a key', async () => {
    const bytes = uniquePdf();
    assert.equal((await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'a.pdf', data: bytes }])).status, 202);
    const dup = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'b.pdf', data: bytes }]);
    assert.equal(dup.status, 422, dup.text);
    for (const name of ['notes.txt', 'notes.md', 'sheet.xlsx']) {
      const res = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: name, data: uniqueText(name) }]);
      assert.equal(res.status, 400, `${name}: ${res.text}`);
    }
    assert.equal((await postForm(t, 'POST', '/content/file', [{ name: 'title', data: 'No file' }])).status, 400);
    const two = await postForm(t, 'POST', '/content/file', [
      { name: 'file', filename: 'x.pdf', data: uniquePdf() },
      { name: 'file', filename: 'y.pdf', data: uniquePdf() },
    ]);
    assert.equal(two.status, 400, two.text);
    const wrongField = await postForm(t, 'POST', '/content/file', [{ name: 'files', filename: 'x.pdf', data: uniquePdf() }]);
    assert.equal(wrongField.status, 400, wrongField.text);
    const emptyTitle = await postForm(t, 'POST', '/content/file', [
      { name: 'file', filename: 'x.pdf', data: uniquePdf() },
      { name: 'title', data: '  ' },
    ]);
    assert.equal(emptyTitle.status, 400, emptyTitle.text);
    assert.equal((await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'x.pdf', data: uniquePdf() }], null)).status, 401);
  });

  it('a file without an extension is judged by its bytes: a PDF completes, text fails as not accepted here', async () => {
    const pdf = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'report', data: uniquePdf() }]);
    assert.equal(pdf.status, 202, pdf.text);
    assert.equal((await waitForOutcome(t, pdf.body.id)).processing_status, 'completed');
    const text = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'notes', data: uniqueText('notes') }]);
    assert.equal(text.status, 202, text.text);
    const failed = await waitForOutcome(t, text.body.id);
    assert.equal(failed.processing_status, 'failed');
    assert.match(failed.failure_reason, /"notes" is plain text, which is not accepted here/);
  });

  it('a PDF that is really a DOCX is accepted and ends failed with the reason', async () => {
    const res = await postForm(t, 'POST', '/content/file', [
      { name: 'file', filename: 'report.pdf', data: Buffer.concat([fixture('sample.docx'), Buffer.from(randomUUID())]) },
    ]);
    assert.equal(res.status, 202, res.text);
    const done = await waitForOutcome(t, res.body.id);
    assert.equal(done.processing_status, 'failed');
    assert.match(done.failure_reason, /named as PDF but its content is Word \(DOCX\)/);
  });
});

describe('PUT and PATCH /content/file/{content_id}: versions', () => {
  it('PUT replaces the file as version 2; the earlier version stays listed with its own version_id', async () => {
    const created = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'v1.pdf', data: uniquePdf() }]);
    const v1 = await waitForOutcome(t, created.body.id);
    const put = await postForm(t, 'PUT', `/content/file/${created.body.id}`, [
      { name: 'title', data: 'Handbook v2' },
      { name: 'file', filename: 'v2.docx', data: fixture('sample.docx') },
    ]);
    assert.equal(put.status, 202, put.text);
    assert.equal(put.body.version_num, 2);
    assert.equal(put.body.title, 'Handbook v2');
    assert.equal(put.body.processing_status, 'queued');
    assert.notEqual(put.body.version_id, v1.version_id);
    const v2 = await waitForOutcome(t, created.body.id);
    assert.equal(v2.processing_status, 'completed', v2.failure_reason);
    assert.deepEqual(
      v2.versions.map((v: any) => [v.version_num, v.version_id, v.processing_status]),
      [
        [2, put.body.version_id, 'completed'],
        [1, v1.version_id, 'completed'],
      ],
    );
    // Chunks belong to a version: the current one by default, the earlier one on request.
    const current = await t.api('GET', `/org/kb/content/${created.body.id}/chunks`);
    assert.match(current.body.chunks[0].text, /Heat Pump Handbook/);
    const earlier = await t.api('GET', `/org/kb/content/${created.body.id}/chunks?version_id=${v1.version_id}`);
    assert.match(earlier.body.chunks[0].text, /Solar Panel Maintenance Guide/);
  });

  it('PUT answers 400 without a title or file, 404 for an unknown id, 401 without a key', async () => {
    const created = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'p.pdf', data: uniquePdf() }]);
    const id = created.body.id;
    assert.equal((await postForm(t, 'PUT', `/content/file/${id}`, [{ name: 'file', filename: 'x.pdf', data: uniquePdf() }])).status, 400);
    assert.equal((await postForm(t, 'PUT', `/content/file/${id}`, [{ name: 'title', data: 'T' }])).status, 400);
    const txt = await postForm(t, 'PUT', `/content/file/${id}`, [
      { name: 'title', data: 'T' },
      { name: 'file', filename: 'x.txt', data: 'text' },
    ]);
    assert.equal(txt.status, 400, txt.text);
    const missing = await postForm(t, 'PUT', `/content/file/${randomUUID()}`, [
      { name: 'title', data: 'T' },
      { name: 'file', filename: 'x.pdf', data: uniquePdf() },
    ]);
    assert.equal(missing.status, 404, missing.text);
    const anon = await postForm(t, 'PUT', `/content/file/${id}`, [{ name: 'title', data: 'T' }], null);
    assert.equal(anon.status, 401);
  });

  it('PATCH changes title and summary (200) or adds a version with a file (202); 404 unknown, 400 bad field', async () => {
    const created = await postForm(t, 'POST', '/content/file', [
      { name: 'file', filename: 'p.pdf', data: uniquePdf() },
      { name: 'summary', data: 'First summary' },
    ]);
    const id = created.body.id;
    const renamed = await postForm(t, 'PATCH', `/content/file/${id}`, [{ name: 'title', data: 'Renamed' }]);
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.title, 'Renamed');
    assert.equal(renamed.body.summary, 'First summary');
    assert.equal(renamed.body.version_num, 1);
    const cleared = await postForm(t, 'PATCH', `/content/file/${id}`, [{ name: 'summary', data: '' }]);
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.summary, undefined);
    const nothing = await postForm(t, 'PATCH', `/content/file/${id}`, []);
    assert.equal(nothing.status, 200, nothing.text);
    assert.equal(nothing.body.title, 'Renamed');
    const withFile = await postForm(t, 'PATCH', `/content/file/${id}`, [{ name: 'file', filename: 'p2.pdf', data: uniquePdf() }]);
    assert.equal(withFile.status, 202, withFile.text);
    assert.equal(withFile.body.version_num, 2);
    assert.equal(withFile.body.title, 'Renamed');
    assert.equal((await postForm(t, 'PATCH', `/content/file/${randomUUID()}`, [{ name: 'title', data: 'X' }])).status, 404);
    assert.equal((await postForm(t, 'PATCH', `/content/file/${id}`, [{ name: 'colour', data: 'red' }])).status, 400);
    const misfiled = await postForm(t, 'PATCH', `/content/file/${id}`, [{ name: 'topic_id', data: randomUUID() }]);
    assert.equal(misfiled.status, 404, `an unknown topic: ${misfiled.text}`);
    assert.equal((await postForm(t, 'PATCH', `/content/file/not-a-uuid`, [{ name: 'title', data: 'X' }])).status, 400);
    assert.equal((await postForm(t, 'PATCH', `/content/file/${id}`, [{ name: 'title', data: 'X' }], null)).status, 401);
  });
});

describe('GET /content, POST /content, GET and DELETE /content/{content_id}', () => {
  it('lists items with total_count, limit and offset; raw text goes in through POST /content', async () => {
    const before = await t.api('GET', '/content?limit=100');
    assert.equal(before.status, 200);
    const created = [];
    for (const i of [1, 2, 3]) {
      const res = await t.api('POST', '/content', { body: { title: `Note ${i}`, text: uniqueText(`note ${i}`) } });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.type, 'raw');
      created.push(res.body.id);
    }
    const total = before.body.total_count + 3;
    const page = await t.api('GET', `/content?limit=2&offset=${total - 2}`);
    assert.equal(page.status, 200);
    assert.equal(page.body.total_count, total);
    assert.equal(page.body.limit, 2);
    assert.equal(page.body.offset, total - 2);
    assert.deepEqual(
      page.body.items.map((i: any) => i.id),
      created.slice(1),
    );
    const defaults = await t.api('GET', '/content');
    assert.equal(defaults.body.limit, 10);
    assert.equal(defaults.body.offset, 0);
  });

  it('answers 400 for out-of-range paging or a bad body, 401 without a key', async () => {
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=x', 'sort=title']) {
      assert.equal((await t.api('GET', `/content?${q}`)).status, 400, q);
    }
    assert.equal((await t.api('GET', '/content', { key: null })).status, 401);
    assert.equal((await t.api('POST', '/content', { body: { title: 'No text' } })).status, 400);
    assert.equal((await t.api('POST', '/content', { body: { title: 'T', text: 'x', extra: 1 } })).status, 400);
    assert.equal((await t.api('POST', '/content', { body: { title: 'T', text: 'x' }, key: null })).status, 401);
  });

  it('GET returns the item; DELETE removes it (204, then 404) and frees its bytes for a new upload', async () => {
    const bytes = uniquePdf();
    const created = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'gone.pdf', data: bytes }]);
    const id = created.body.id;
    const got = await t.api('GET', `/content/${id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.id, id);
    assert.equal((await t.api('DELETE', `/content/${id}`, { key: null })).status, 401);
    assert.equal((await t.api('DELETE', `/content/${id}`)).status, 204);
    assert.equal((await t.api('GET', `/content/${id}`)).status, 404);
    assert.equal((await t.api('DELETE', `/content/${id}`)).status, 404);
    assert.equal((await t.api('GET', `/org/kb/content/${id}`)).status, 404);
    const listed = await t.api('GET', '/content?limit=100');
    assert.ok(!listed.body.items.some((i: any) => i.id === id));
    const again = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'back.pdf', data: bytes }]);
    assert.equal(again.status, 202, again.text);
    assert.notEqual(again.body.id, id);
    assert.equal((await t.api('GET', `/content/${randomUUID()}`)).status, 404);
    assert.equal((await t.api('GET', '/content/not-a-uuid')).status, 400);
    assert.equal((await t.api('GET', `/content/${id}`, { key: null })).status, 401);
  });
});
