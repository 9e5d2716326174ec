import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createSqliteEventBus } from '@kb/bus/sqlite';
import { topics, type EventEnvelope } from '@kb/events';
import type { TestSystem } from './harness.js';

/**
 * Content for search tests, fed the way the ingest service feeds the knowledge
 * base: content.created / version_added, content.chunks_added, content.extracted,
 * content.deleted on the ingest topic of the system's bus. (Search depends only
 * on these events, so the tests do not wait on the intake routes.)
 */
export interface ContentSpec {
  title: string;
  chunks: string[];
  /** The heading path of each chunk (by index), when it sits under headings. */
  headings?: string[][];
  parent_id?: string | null;
  category_id?: string;
  topic_id?: string;
  tags?: string[];
}

export function contentFeed(t: TestSystem) {
  const bus = createSqliteEventBus({ path: join(t.dataDir, 'bus.db') });
  let position = 0;
  const versions = new Map<string, number>();

  const envelope = (org: string, type: string, stream: string, data: Record<string, unknown>): EventEnvelope => ({
    id: randomUUID(),
    type,
    schema: 1,
    stream_id: stream,
    version: 1,
    position: ++position,
    data,
    metadata: { org_id: org, actor: 'test:ingest' },
    recorded_at: new Date().toISOString(),
  });

  const publish = (org: string, events: EventEnvelope[]) =>
    bus.publish(
      topics.ingest,
      events.map((e) => ({ key: org, value: JSON.stringify(e) })),
    );

  async function put(org: string, spec: ContentSpec, contentId = randomUUID()) {
    const versionNum = (versions.get(contentId) ?? 0) + 1;
    versions.set(contentId, versionNum);
    const versionId = randomUUID();
    const at = new Date().toISOString();
    const stream = `content-${contentId}`;
    const text = spec.chunks.join('\n\n');
    await publish(org, [
      envelope(org, versionNum === 1 ? 'content.created' : 'content.version_added', stream, {
        content_id: contentId,
        version_id: versionId,
        version_num: versionNum,
        org_id: org,
        type: 'raw',
        title: spec.title,
        source: {
          kind: 'raw',
          format: 'txt',
          size_bytes: Buffer.byteLength(text),
          sha256: createHash('sha256').update(text).digest('hex'),
        },
        parent_id: spec.parent_id ?? null,
        ...(spec.category_id && { category_id: spec.category_id }),
        ...(spec.topic_id && { topic_id: spec.topic_id }),
        tags: spec.tags ?? [],
        at,
      }),
      envelope(org, 'content.chunks_added', stream, {
        content_id: contentId,
        version_id: versionId,
        org_id: org,
        chunks: spec.chunks.map((c, chunk_index) => ({
          chunk_index,
          text: c,
          ...(spec.headings?.[chunk_index] && { heading_path: spec.headings[chunk_index] }),
        })),
        at,
      }),
      envelope(org, 'content.extracted', stream, {
        content_id: contentId,
        version_id: versionId,
        version_num: versionNum,
        org_id: org,
        chunk_count: spec.chunks.length,
        characters: text.length,
        at,
      }),
    ]);
    return { content_id: contentId, version_id: versionId };
  }

  return {
    /** A new content item (or, given its id, a new version of it). */
    put,
    async remove(org: string, contentId: string) {
      await publish(org, [
        envelope(org, 'content.deleted', `content-${contentId}`, { content_id: contentId, org_id: org, at: new Date().toISOString() }),
      ]);
    },
    close: () => bus.close(),
  };
}

export async function orgIdOf(t: TestSystem, key?: string): Promise<string> {
  const me = await t.api('GET', '/org/me', key ? { key } : {});
  assert.equal(me.status, 200, me.text);
  return me.body.org_id;
}

/** Retries until the check passes: the index follows the events asynchronously. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
