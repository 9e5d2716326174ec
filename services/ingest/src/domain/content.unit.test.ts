import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { StoredEvent } from '@kb/store';
import { evolveFrom, toEnvelope } from '@kb/eventsourcing';
import { messageBytes } from '@kb/bus';
import { batchChunks, CHUNK_EVENT_OVERHEAD_BYTES, chunkBytes, contentDecider, type ContentCommand, type ContentState } from './content.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const C = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
const V1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const V2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const AT = '2026-01-01T00:00:00.000Z';
const source = { kind: 'file' as const, filename: 'a.pdf', format: 'pdf', size_bytes: 10, sha256: 'a'.repeat(64) };

let position = 0;
function run(commands: ContentCommand[]): { state: ContentState; types: string[] } {
  const { state, types } = runWithEvents(commands);
  return { state, types };
}

function runWithEvents(commands: ContentCommand[]): { state: ContentState; types: string[]; events: StoredEvent[] } {
  let state = contentDecider.initialState();
  const types: string[] = [];
  const events: StoredEvent[] = [];
  for (const command of commands) {
    for (const e of contentDecider.decide(command, state)) {
      position++;
      const stored: StoredEvent = {
        ...e,
        id: String(position),
        schema: 1,
        metadata: { org_id: ORG },
        stream_id: C,
        version: position,
        position,
        recorded_at: AT,
      };
      state = evolveFrom(contentDecider, state, [stored]);
      types.push(e.type);
      events.push(stored);
    }
  }
  return { state, types, events };
}

const create: ContentCommand = {
  type: 'create',
  content_id: C,
  version_id: V1,
  org_id: ORG,
  kind: 'document',
  title: ' Guide ',
  source,
  filing: { parent_id: null, tags: [] },
  at: AT,
};

describe('content decider', () => {
  it('runs a version through queued -> processing -> completed', () => {
    const { state, types } = run([
      create,
      { type: 'start_processing', version_id: V1, attempt: 1, at: AT },
      { type: 'complete', version_id: V1, chunks: [{ chunk_index: 0, text: 'x' }], characters: 1, max_event_bytes: 100_000, at: AT },
    ]);
    assert.deepEqual(types, ['content.created', 'content.processing_started', 'content.chunks_added', 'content.extracted']);
    assert.equal(state.title, 'Guide');
    assert.deepEqual(state.versions, [{ version_id: V1, version_num: 1, status: 'completed', attempts: 1 }]);
  });

  it("numbers versions and keeps each one's own status", () => {
    const { state } = run([
      create,
      { type: 'add_version', org_id: ORG, version_id: V2, source, at: AT },
      { type: 'fail', version_id: V2, reason: 'corrupt', attempts: 1, at: AT },
    ]);
    assert.deepEqual(
      state.versions.map((v) => [v.version_num, v.status]),
      [
        [1, 'queued'],
        [2, 'failed'],
      ],
    );
  });

  it('ignores late outcomes for a finished version or deleted content', () => {
    const { types } = run([
      create,
      { type: 'fail', version_id: V1, reason: 'bad', attempts: 1, at: AT },
      { type: 'complete', version_id: V1, chunks: [], characters: 0, max_event_bytes: 100_000, at: AT },
      { type: 'start_processing', version_id: V1, attempt: 2, at: AT },
      { type: 'delete', org_id: ORG, at: AT },
      { type: 'fail', version_id: V1, reason: 'again', attempts: 2, at: AT },
    ]);
    assert.deepEqual(types, ['content.created', 'content.failed', 'content.deleted']);
  });

  it("treats another organization's content as missing and rejects an empty title", () => {
    assert.throws(() => run([create, { type: 'update', org_id: OTHER, title: 'x', at: AT }]), /not found/);
    assert.throws(() => run([create, { type: 'add_version', org_id: OTHER, version_id: V2, source, at: AT }]), /not found/);
    assert.throws(() => run([{ ...create, title: '  ' }]), /title/);
  });

  it('follows moves of its tree node, records nothing for a no-op move, another organization or deleted content', () => {
    const F = 'dddddddd-dddd-4ddd-8ddd-dddddddddddd';
    const { state, types } = run([
      create,
      { type: 'move', org_id: ORG, parent_id: F, at: AT },
      { type: 'move', org_id: ORG, parent_id: F, at: AT },
      { type: 'move', org_id: OTHER, parent_id: null, at: AT },
    ]);
    assert.deepEqual(types, ['content.created', 'content.moved']);
    assert.equal(state.parent_id, F);
    const back = run([create, { type: 'move', org_id: ORG, parent_id: F, at: AT }, { type: 'move', org_id: ORG, parent_id: null, at: AT }]);
    assert.equal(back.state.parent_id, null);
    const gone = run([create, { type: 'delete', org_id: ORG, at: AT }, { type: 'move', org_id: ORG, parent_id: F, at: AT }]);
    assert.deepEqual(gone.types, ['content.created', 'content.deleted']);
  });

  it('cuts chunk events at the bus limit, counting bytes as they travel (multi-byte characters, escapes)', () => {
    const limit = 1_000_000;
    // 1,200-character chunks of 4-byte characters, quotes, newlines and control characters (6 bytes as JSON): 3 to 7 MB.
    const pieces = ['𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ', '"quoted"\n', 'line\nbreak ', '\u0001\u0002', 'ascii text '];
    const chunks = Array.from({ length: 3000 }, (_, i) => ({
      chunk_index: i,
      text: pieces[i % pieces.length]!.repeat(200).slice(0, 1200),
      heading_path: ['Guide', `Part ${i}`],
    }));
    const { types, events } = runWithEvents([
      create,
      { type: 'start_processing', version_id: V1, attempt: 1, at: AT },
      { type: 'complete', version_id: V1, chunks, characters: 3_600_000, max_event_bytes: limit, at: AT },
    ]);
    const added = events.filter((e) => e.type === 'content.chunks_added');
    assert.ok(added.length >= 4, `${added.length} events`);
    assert.equal(types.at(-1), 'content.extracted');
    // As the outbox relay publishes it: the stored envelope with metadata as a traced request leaves it.
    const wire = added.map((e) =>
      messageBytes({
        key: ORG,
        value: JSON.stringify(
          toEnvelope({
            ...e,
            metadata: {
              org_id: ORG,
              actor: `user:${OTHER}`,
              correlation_id: V1,
              causation_id: V2,
              request_id: C,
              trace: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
            },
          }),
        ),
        headers: { type: e.type },
      }),
    );
    assert.ok(
      wire.every((bytes) => bytes <= limit),
      `every event at most ${limit} bytes: ${wire.join(', ')}`,
    );
    assert.ok(
      wire.slice(0, -1).every((bytes) => bytes > limit - CHUNK_EVENT_OVERHEAD_BYTES - 10_000),
      `each full event close to the limit: ${wire.join(', ')}`,
    );
    assert.deepEqual(
      added.flatMap((e) => (e.data.chunks as { chunk_index: number }[]).map((c) => c.chunk_index)),
      chunks.map((c) => c.chunk_index),
      'every chunk once, in order',
    );
  });

  it('puts a chunk that fills an event exactly on its own, and refuses one a byte larger', () => {
    const limit = 100_000;
    const room = limit - CHUNK_EVENT_OVERHEAD_BYTES;
    const exact = { chunk_index: 1, text: 'y'.repeat(room - chunkBytes({ chunk_index: 1, text: '' })) };
    assert.equal(chunkBytes(exact), room);
    assert.deepEqual(
      batchChunks([{ chunk_index: 0, text: 'x' }, exact, { chunk_index: 2, text: 'z' }], limit).map((b) => b.map((c) => c.chunk_index)),
      [[0], [1], [2]],
    );
    assert.throws(() => batchChunks([{ ...exact, text: `${exact.text}y` }], limit), /more than an event carries/);
    assert.deepEqual(batchChunks([], limit), []);
  });
});
