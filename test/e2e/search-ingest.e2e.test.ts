import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey } from './identity-fixtures.js';
import { eventually } from './search-fixtures.js';

// The whole path: POST /org/kb/raw -> ingest (chunking) -> ingest events -> the
// knowledge base's index -> POST /search with a cited answer.
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t?.stop());

const folder = async (name: string) => {
  const res = await t.api('POST', '/org/kb/folders', { body: { name } });
  assert.equal(res.status, 201, res.text);
  return res.body.kb_node_id as string;
};
const raw = async (title: string, text: string, parent_id: string) => {
  const res = await t.api('POST', '/org/kb/raw', { body: { title, text, parent_id } });
  assert.equal(res.status, 202, res.text);
  return (res.body.content_id ?? res.body.id) as string;
};

describe('ingested text is searchable with citations, within the key scope', () => {
  it('answers from raw text sent through POST /org/kb/raw', async () => {
    const science = await folder('Science');
    const sales = await folder('Sales');
    const abstract = await raw(
      'Aspirin and colorectal cancer',
      'Daily low-dose aspirin reduced the incidence of colorectal cancer by about a quarter. The effect appeared after five years of use.',
      science,
    );
    const pitch = await raw('Pitch deck notes', 'Our aspirin dispenser product sells best in pharmacies in the north.', sales);

    const question = { query: 'Does aspirin reduce colorectal cancer?' };
    const res = await eventually(async () => {
      const r = await t.api('POST', '/search', { body: question });
      assert.equal(r.body.total_results, 2);
      return r;
    }, 30_000);
    assert.match(res.body.answer, /Daily low-dose aspirin reduced the incidence of colorectal cancer by about a quarter\. \[1\]/);
    assert.equal(res.body.results[0].content_id, abstract);
    assert.equal(res.body.results[0].title, 'Aspirin and colorectal cancer');

    const admin = await logIn(t, 'admin@example.com', 'development-password');
    const { key } = await newApiKey(admin, { name: 'Sales only', folder_scope: [sales] });
    const scoped = await t.api('POST', '/search', { key, body: question });
    assert.equal(scoped.status, 200);
    assert.deepEqual(
      scoped.body.results.map((r: { content_id: string }) => r.content_id),
      [pitch],
    );
    assert.equal(scoped.body.total_results, 1);
    assert.ok(!scoped.body.answer.includes('colorectal'));
  });
});
