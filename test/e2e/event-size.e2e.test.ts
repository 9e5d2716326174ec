import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { waitForOutcome } from './ingest-helpers.js';

/**
 * The event bus's size limit is a setting (BUS_MAX_MESSAGE_BYTES, here its smallest,
 * 64 KiB): a document several times larger is recorded in chunk events that fit and
 * is searchable to its end. (A change whose one event would be larger is refused:
 * shared/eventsourcing/src/command-bus.int.test.ts.)
 */
const LIMIT = 65_536;
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({ BUS_MAX_MESSAGE_BYTES: String(LIMIT) });
});
afterAll(async () => t?.stop());

const word = () =>
  `zq${randomUUID()
    .replace(/[^a-f]/g, '')
    .slice(0, 10)}`;

describe('the event size limit', () => {
  it('a document five times the limit is recorded in pieces and searchable to its last line', async () => {
    const first = word();
    const last = word();
    const paragraphs = Array.from({ length: 6000 }, (_, i) => `Paragraph ${i} of the ${first} report notes reading ${i * 7}.`);
    const text = `${paragraphs.join('\n\n')}\n\nThe report closes with ${last}.`;
    assert.ok(text.length > 5 * LIMIT, `${text.length} characters`);
    const res = await t.api('POST', '/org/kb/raw', { body: { title: 'Long report', text } });
    assert.equal(res.status, 202, res.text);
    const item = await waitForOutcome(t, res.body.id);
    assert.equal(item.processing_status, 'completed', item.failure_reason);
    for (let i = 0; ; i++) {
      const found = await t.api('POST', '/search', { body: { query: last, max_results: 5 } });
      assert.equal(found.status, 200, found.text);
      if ((found.body.results as { content_id: string }[]).some((r) => r.content_id === res.body.id)) break;
      assert.ok(i < 300, 'found by its last line');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});
