import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { SAMPLES, chunksOf, files, fixture, postForm, uniqueText, waitForOutcome } from './ingest-helpers.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('POST /org/kb/raw', () => {
  it('accepts Markdown as a raw content item (202 queued) that completes with chunks following its headings', async () => {
    const text =
      '# Heat pumps\n\nThey move heat.\n\n## Noise\n\nOutdoor units hum quietly.\n\n## Cost\n\nInstallation costs vary by region.\n';
    const res = await t.api('POST', '/org/kb/raw', { body: { title: 'Heat pump notes', text, tags: ['energy'] } });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.type, 'raw');
    assert.equal(res.body.processing_status, 'queued');
    assert.equal(res.body.version_num, 1);
    assert.equal(res.body.parent_id, null);
    assert.deepEqual(res.body.tags, ['energy']);
    assert.equal(res.body.content_id, res.body.id, 'named content_id as an upload names it; id stays as an alias');
    const done = await waitForOutcome(t, res.body.id);
    assert.equal(done.processing_status, 'completed', done.failure_reason);
    assert.equal(done.attempts, 1);
    const { chunks, version_id } = await chunksOf(t, res.body.id);
    assert.equal(version_id, res.body.version_id);
    assert.deepEqual(
      chunks.map((c: any) => c.heading_path),
      [['Heat pumps'], ['Heat pumps', 'Noise'], ['Heat pumps', 'Cost']],
    );
    assert.match(chunks[1].text, /Outdoor units hum quietly/);

    // Sent again, the same text is a duplicate: 422 naming the existing item in the same field.
    const again = await t.api('POST', '/org/kb/raw', { body: { title: 'Heat pump notes', text } });
    assert.equal(again.status, 422, again.text);
    assert.equal(again.body.error.code, 'duplicate');
    assert.equal(again.body.content_id, res.body.content_id);
    assert.equal(again.body.id, res.body.id);
  });

  it('files content under a category and topic', async () => {
    const category = await t.api('POST', '/categories', { body: { name: `Filing ${randomUUID()}` } });
    assert.equal(category.status, 201, category.text);
    const category_id: string = category.body.category_id;
    const topic = await t.api('POST', `/categories/${category_id}/topics`, { body: { name: 'Filed topic' } });
    assert.equal(topic.status, 201, topic.text);
    const topic_id: string = topic.body.topic_id;
    const res = await t.api('POST', '/org/kb/raw', { body: { title: 'Filed', text: uniqueText('filed'), category_id, topic_id } });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.category_id, category_id);
    assert.equal(res.body.topic_id, topic_id);
    const listed = await t.api('GET', `/content?category_id=${category_id}&limit=100`);
    assert.deepEqual(
      listed.body.items.map((i: any) => i.id),
      [res.body.id],
    );
  });

  it('answers 404 for a category or topic that does not exist, is deleted, or a topic of another category; nothing is stored', async () => {
    const a = await t.api('POST', '/categories', { body: { name: `Filing A ${randomUUID()}` } });
    const b = await t.api('POST', '/categories', { body: { name: `Filing B ${randomUUID()}` } });
    const topicOfB = await t.api('POST', `/categories/${b.body.category_id}/topics`, { body: { name: 'Only in B' } });
    assert.equal(topicOfB.status, 201, topicOfB.text);
    const gone = await t.api('POST', '/categories', { body: { name: `Filing gone ${randomUUID()}` } });
    assert.equal((await t.api('DELETE', `/categories/${gone.body.category_id}`)).status, 204);
    const text = uniqueText('misfiled');
    const cases = [
      { category_id: randomUUID() },
      { topic_id: randomUUID() },
      { category_id: gone.body.category_id },
      { category_id: a.body.category_id, topic_id: topicOfB.body.topic_id },
    ];
    for (const filing of cases) {
      const res = await t.api('POST', '/org/kb/raw', { body: { title: 'Misfiled', text, ...filing } });
      assert.equal(res.status, 404, `${JSON.stringify(filing)}: ${res.text}`);
    }
    const upload = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'misfiled.txt', data: text },
      { name: 'category_id', data: randomUUID() },
    ]);
    assert.equal(upload.status, 404, upload.text);
    const accepted = await t.api('POST', '/org/kb/raw', { body: { title: 'Filed right', text, category_id: b.body.category_id } });
    assert.equal(accepted.status, 202, `not a duplicate: the refused calls stored nothing (${accepted.text})`);
  });

  it('answers 400 for an empty text, a missing title or an unknown field, and 401 without a key', async () => {
    assert.equal((await t.api('POST', '/org/kb/raw', { body: { title: 'x', text: '' } })).status, 400);
    assert.equal((await t.api('POST', '/org/kb/raw', { body: { title: 'x', text: '   ' } })).status, 400);
    assert.equal((await t.api('POST', '/org/kb/raw', { body: { text: 'hello' } })).status, 400);
    assert.equal((await t.api('POST', '/org/kb/raw', { body: { title: 'x', text: 'y', colour: 'red' } })).status, 400);
    assert.equal((await t.api('POST', '/org/kb/raw', { body: { title: 'x', text: 'y' }, key: null })).status, 401);
  });

  it('answers 404 for a parent folder that does not exist', async () => {
    const res = await t.api('POST', '/org/kb/raw', { body: { title: 'x', text: uniqueText('nowhere'), parent_id: randomUUID() } });
    assert.equal(res.status, 404, res.text);
  });
});

describe('POST /org/kb/upload', () => {
  it('takes all twelve formats, and every file reaches completed with chunks that say where they came from', async () => {
    const first = await postForm(t, 'POST', '/org/kb/upload', files(...SAMPLES.slice(0, 10)));
    assert.equal(first.status, 202, first.text);
    const second = await postForm(t, 'POST', '/org/kb/upload', files(...SAMPLES.slice(10)));
    assert.equal(second.status, 202, second.text);
    const outcomes = [...first.body.files, ...second.body.files];
    assert.deepEqual(
      outcomes.map((o: any) => [o.filename, o.status]),
      SAMPLES.map((n) => [n, 'accepted']),
    );
    for (const o of outcomes) {
      assert.equal(o.item.processing_status, 'queued');
      assert.equal(o.item.type, 'document');
      assert.equal(o.item.title, o.filename);
    }
    const byName = new Map<string, any>();
    for (const o of outcomes) {
      const done = await waitForOutcome(t, o.content_id);
      assert.equal(done.processing_status, 'completed', `${o.filename}: ${done.failure_reason}`);
      byName.set(o.filename, { ...done, chunks: (await chunksOf(t, o.content_id)).chunks });
    }
    const pdf = byName.get('sample.pdf');
    assert.deepEqual(
      pdf.chunks.map((c: any) => c.page),
      [1, 2],
    );
    assert.match(pdf.chunks[1].text, /twenty five year performance warranty/);
    assert.deepEqual(pdf.chunks[0].heading_path, ['Solar Panel Maintenance Guide']);
    assert.deepEqual(pdf.chunks[1].heading_path, ['Warranty Terms']);
    // The PDF's table keeps its cells (text placed in columns) and its rows.
    assert.match(pdf.chunks[1].text, /Component \| Warranty years\nPanels \| 25\nInverter \| 10/);
    for (const name of ['sample.xlsx', 'sample.xls']) {
      const sheets = byName.get(name).chunks.map((c: any) => c.sheet);
      assert.deepEqual(sheets, ['Sales', 'Inventory'], name);
      assert.match(byName.get(name).chunks[0].text, /Region: North; Installations: 120; Revenue: 54000/);
      assert.deepEqual(byName.get(name).chunks[0].row_range, [1, 3]);
    }
    for (const name of ['sample.pptx', 'sample.ppt']) {
      const slides = byName.get(name).chunks;
      assert.deepEqual(
        slides.map((c: any) => c.slide),
        [1, 2, 3],
        name,
      );
      assert.match(slides[1].text, /ten kilowatt hours/);
    }
    assert.deepEqual(
      byName.get('sample.docx').chunks.map((c: any) => c.heading_path),
      [['Heat Pump Handbook'], ['Heat Pump Handbook', 'Installation'], ['Heat Pump Handbook', 'Efficiency']],
    );
    assert.match(byName.get('sample.docx').chunks[2].text, /HP-8 \| 8/);
    assert.match(
      byName
        .get('sample.doc')
        .chunks.map((c: any) => c.text)
        .join('\n'),
      /thirty centimetres above the ground/,
    );
    const html = byName
      .get('sample.html')
      .chunks.map((c: any) => c.text)
      .join('\n');
    assert.match(html, /average wind speeds/);
    assert.doesNotMatch(html, /console\.log|color: red|Home \| About|Copyright/);
    assert.match(byName.get('sample.csv').chunks[0].text, /product: Cable, 10m; price: 25/);
    assert.match(
      byName
        .get('sample.json')
        .chunks.map((c: any) => c.text)
        .join('\n'),
      /features\[1\]: Saves up to ten percent/,
    );
    assert.match(byName.get('sample.xml').chunks[0].text, /item\/description: A ground loop/);
    assert.match(byName.get('sample.txt').chunks[0].text, /Seal gaps around windows/);

    // The same bytes again are duplicates of the items just created: every file skipped is 422.
    const again = await postForm(t, 'POST', '/org/kb/upload', files('sample.pdf', 'sample.docx'));
    assert.equal(again.status, 422, again.text);
    // ...and the answer lists them as the first did, each with the content_id of the item it duplicates.
    assert.deepEqual(
      again.body.files.map((o: any) => [o.filename, o.status, o.reason, o.content_id]),
      ['sample.pdf', 'sample.docx'].map((name) => [name, 'skipped', 'duplicate', byName.get(name).id]),
    );
  });

  it('skips a duplicate next to a new file and says which content it duplicates', async () => {
    const dupText = uniqueText('dup');
    const original = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'dup.txt', data: dupText }]);
    assert.equal(original.status, 202, original.text);
    const contentId = original.body.files[0].content_id;
    const fresh = uniqueText('fresh');
    const mixed = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'dup-again.txt', data: dupText },
      { name: 'files', filename: 'fresh.txt', data: fresh },
    ]);
    assert.equal(mixed.status, 202, mixed.text);
    assert.deepEqual(
      mixed.body.files.map((o: any) => [o.filename, o.status, o.status === 'skipped' ? o.content_id : 'new']),
      [
        ['dup-again.txt', 'skipped', contentId],
        ['fresh.txt', 'accepted', 'new'],
      ],
    );
    assert.equal(mixed.body.files[0].reason, 'duplicate');
    assert.notEqual(mixed.body.files[1].content_id, contentId);
  });

  it('keeps the first of two equal files in one upload and skips the later one as its duplicate, in every position', async () => {
    const same = uniqueText('twice');
    const files8 = Array.from({ length: 8 }, (_, i) => ({ name: 'files', filename: `other-${i}.txt`, data: uniqueText(`other-${i}`) }));
    const res = await postForm(t, 'POST', '/org/kb/upload', [
      files8[0]!,
      { name: 'files', filename: 'first.txt', data: same },
      ...files8.slice(1),
      { name: 'files', filename: 'second.txt', data: same },
    ]);
    assert.equal(res.status, 202, res.text);
    const byName = new Map<string, any>(res.body.files.map((o: any) => [o.filename, o]));
    assert.equal(byName.get('first.txt').status, 'accepted');
    assert.equal(byName.get('second.txt').status, 'skipped');
    assert.equal(byName.get('second.txt').content_id, byName.get('first.txt').content_id);
    assert.deepEqual(
      res.body.files.map((o: any) => o.filename),
      ['other-0.txt', 'first.txt', ...files8.slice(1).map((f) => f.filename), 'second.txt'],
      'outcomes in the order of the files',
    );
  });

  it('ends each broken file failed with a readable reason, and nothing else is affected', async () => {
    const res = await postForm(t, 'POST', '/org/kb/upload', [
      ...files('corrupt.pdf', 'encrypted.pdf', 'encrypted.docx', 'no-text.pdf', 'image-named.docx', 'bomb.docx', 'bomb-hidden.xlsx'),
      { name: 'files', filename: 'fine.txt', data: uniqueText('fine next to broken ones') },
    ]);
    assert.equal(res.status, 202, res.text);
    const reasons: Record<string, string> = {};
    for (const o of res.body.files) {
      const done = await waitForOutcome(t, o.content_id);
      reasons[o.filename] = done.processing_status === 'failed' ? done.failure_reason : 'completed';
      if (done.processing_status === 'failed') assert.equal(done.attempts, 1, `${o.filename} failed at once`);
    }
    assert.match(reasons['corrupt.pdf']!, /corrupt/i);
    assert.match(reasons['encrypted.pdf']!, /PDF is password-protected/);
    assert.match(reasons['encrypted.docx']!, /password-protected|encrypted/i);
    assert.match(reasons['no-text.pdf']!, /no text/i);
    assert.match(reasons['image-named.docx']!, /PNG image/);
    assert.match(reasons['bomb.docx']!, /decompression bomb/i);
    assert.match(reasons['bomb-hidden.xlsx']!, /decompression bomb: .* unpacks to more than the 1000 bytes it declares/);
    assert.equal(reasons['fine.txt'], 'completed');
  });

  it('answers 400 for an 11th file, a Markdown or unknown file type, no file, or a JSON body; 401 without a key', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => ({ name: 'files', filename: `f${i}.txt`, data: uniqueText(`eleven ${i}`) }));
    const tooMany = await postForm(t, 'POST', '/org/kb/upload', eleven);
    assert.equal(tooMany.status, 400, tooMany.text);
    const md = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'notes.md', data: '# Notes' }]);
    assert.equal(md.status, 400, md.text);
    const png = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'logo.png', data: 'x' }]);
    assert.equal(png.status, 400, png.text);
    // One bad name refuses the whole request: the good file next to it is not stored.
    const goodText = uniqueText('refused with a bad neighbour');
    const mixed = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'good.txt', data: goodText },
      { name: 'files', filename: 'bad.exe', data: 'MZ' },
    ]);
    assert.equal(mixed.status, 400, mixed.text);
    const retry = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'good.txt', data: goodText }]);
    assert.equal(retry.status, 202, 'the refused file was not stored, so it is not a duplicate now');
    const none = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'parent_id', data: randomUUID() }]);
    assert.equal(none.status, 400, none.text);
    const json = await t.api('POST', '/org/kb/upload', { body: { files: [] } });
    assert.equal(json.status, 400, json.text);
    const badField = await postForm(t, 'POST', '/org/kb/upload', [...files('sample.txt'), { name: 'colour', data: 'red' }]);
    assert.equal(badField.status, 400, badField.text);
    const badParent = await postForm(t, 'POST', '/org/kb/upload', [...files('sample.txt'), { name: 'parent_id', data: 'not-a-uuid' }]);
    assert.equal(badParent.status, 400, badParent.text);
    assert.equal((await postForm(t, 'POST', '/org/kb/upload', files('sample.txt'), null)).status, 401);
  });

  it('reads a file without an extension by its bytes alone', async () => {
    const res = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'README', data: uniqueText('no extension') },
      { name: 'files', filename: 'scan', data: Buffer.concat([fixture('sample.pdf'), Buffer.from(`\n% ${randomUUID()}\n`)]) },
    ]);
    assert.equal(res.status, 202, res.text);
    const [text, pdf] = await Promise.all(res.body.files.map((o: any) => waitForOutcome(t, o.content_id)));
    assert.deepEqual([text.processing_status, text.format], ['completed', 'txt']);
    assert.deepEqual([pdf.processing_status, pdf.format], ['completed', 'pdf']);
  });

  it('answers 404 for a parent folder that does not exist', async () => {
    const res = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'a.txt', data: uniqueText('no folder') },
      { name: 'parent_id', data: randomUUID() },
    ]);
    assert.equal(res.status, 404, res.text);
  });
});

describe('GET /org/kb/content/{content_id} and its chunks', () => {
  it('answers 404 for an unknown id, 400 for a malformed one, 401 without a key', async () => {
    assert.equal((await t.api('GET', `/org/kb/content/${randomUUID()}`)).status, 404);
    assert.equal((await t.api('GET', '/org/kb/content/not-a-uuid')).status, 400);
    assert.equal((await t.api('GET', `/org/kb/content/${randomUUID()}`, { key: null })).status, 401);
    assert.equal((await t.api('GET', `/org/kb/content/${randomUUID()}/chunks`)).status, 404);
    assert.equal((await t.api('GET', `/org/kb/content/${randomUUID()}/chunks`, { key: null })).status, 401);
  });

  it('pages chunks and answers 404 for a version of another item, 400 for a bad limit', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${'about solar energy and storage '.repeat(8)}`).join('\n\n');
    const res = await t.api('POST', '/org/kb/raw', { body: { title: 'Long', text: long } });
    const done = await waitForOutcome(t, res.body.id);
    assert.equal(done.processing_status, 'completed');
    const all = await chunksOf(t, res.body.id, '?limit=100');
    assert.ok(all.total_count > 3, `several chunks (${all.total_count})`);
    assert.deepEqual(
      all.chunks.map((c: any) => c.chunk_index),
      [...Array(all.total_count).keys()],
    );
    for (const c of all.chunks) assert.ok(c.text.length <= 1400, 'chunks stay near the target size');
    const page = await chunksOf(t, res.body.id, '?limit=2&offset=1');
    assert.deepEqual(
      page.chunks.map((c: any) => c.chunk_index),
      [1, 2],
    );
    const other = await t.api('POST', '/org/kb/raw', { body: { title: 'Other', text: uniqueText('other') } });
    assert.equal((await t.api('GET', `/org/kb/content/${res.body.id}/chunks?version_id=${other.body.version_id}`)).status, 404);
    assert.equal((await t.api('GET', `/org/kb/content/${res.body.id}/chunks?limit=0`)).status, 400);
  });
});
