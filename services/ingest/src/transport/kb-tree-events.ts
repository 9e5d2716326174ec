import type { Logger } from 'pino';
import type { Store, StoreTransaction } from '@kb/store';
import type { BlobStore } from '@kb/blob';
import type { CommandBus, EventHandlers } from '@kb/eventsourcing';
import type { EventEnvelope } from '@kb/events';
import { contentDecider, contentStream, type ContentCommand } from '../domain/content.js';
import { CONTENT, VERSIONS, type ContentDoc, type VersionDoc } from '../projections/content.js';

/**
 * The knowledge-base tree owns where content sits: its node can be moved to
 * another folder or deleted (alone, or with its folder by cascade). Ingest
 * follows those facts so that folder scope applies to where content is now and
 * a deleted folder's content is gone from listings and search, not orphaned.
 * Consumer-side read models (rebuilt by replaying the knowledge-base topic):
 */
export const KB_CONTENT_NODES = 'ingest_kb_content_nodes';
export const KB_ROOTS = 'ingest_kb_roots';
export const KB_TREE_CONSUMER_GROUP = 'ingest.kb-tree';

interface ContentNodeDoc {
  id: string;
  content_id: string;
  org_id: string;
}

export function kbTreeHandlers(deps: { store: Store; commands: CommandBus; blobs: BlobStore; logger: Logger }): EventHandlers {
  const { store, commands, blobs, logger } = deps;

  const run = (tx: StoreTransaction, event: EventEnvelope, contentId: string, command: ContentCommand) =>
    commands.within(tx, { metadata: { org_id: event.metadata.org_id, actor: 'system:ingest', causation_id: event.id } }, (s) =>
      s.execute(contentDecider, contentStream(contentId), command),
    );

  /** Content filed at the organization's root folder has parent_id null here (as on intake). */
  async function placeAt(tx: StoreTransaction, event: EventEnvelope, contentId: string, orgId: string, folderId: string, at: string) {
    const item = await tx.get<ContentDoc>(CONTENT, contentId);
    if (!item || item.deleted || item.org_id !== orgId) return;
    const root = await tx.get<{ id: string; root_id: string }>(KB_ROOTS, orgId);
    const parentId = root?.root_id === folderId ? null : folderId;
    await run(tx, event, contentId, { type: 'move', org_id: orgId, parent_id: parentId, at });
  }

  /**
   * Original files go once the deletion is committed (the handler runs inside the
   * consumer's transaction): checked a few times, then left alone. A crash or a
   * rolled-back delivery leaves at most unreachable blobs, never content without its file.
   */
  function dropBlobsAfterCommit(contentId: string, orgId: string, versionIds: string[]) {
    const attempt = async (left: number): Promise<void> => {
      const item = await store.get<ContentDoc>(CONTENT, contentId);
      if (!item?.deleted) {
        if (left > 0) setTimeout(() => void attempt(left - 1), 200);
        return;
      }
      for (const id of versionIds) await blobs.delete(`${orgId}/${id}`);
    };
    setTimeout(() => {
      attempt(10).catch((err: unknown) => logger.warn({ err, content_id: contentId }, 'files of deleted content not removed'));
    }, 0);
  }

  return {
    'kb_node.created': async (tx, event) => {
      const d = event.data;
      if (d.type === 'folder' && d.parent_id === null) {
        await tx.put(KB_ROOTS, { id: d.org_id, root_id: d.kb_node_id });
        return;
      }
      if (d.type !== 'content' || !d.content_id || d.parent_id === null) return;
      await tx.put<ContentNodeDoc>(KB_CONTENT_NODES, { id: d.kb_node_id, content_id: d.content_id, org_id: d.org_id });
      // The tree files content at the root when its folder vanished before the node was made.
      await placeAt(tx, event, d.content_id, d.org_id, d.parent_id, d.at);
    },

    'kb_node.moved': async (tx, event) => {
      const d = event.data;
      const node = await tx.get<ContentNodeDoc>(KB_CONTENT_NODES, d.kb_node_id);
      if (node && node.org_id === d.org_id) await placeAt(tx, event, node.content_id, d.org_id, d.parent_id, d.at);
    },

    'kb_node.deleted': async (tx, event) => {
      const d = event.data;
      await tx.delete(KB_CONTENT_NODES, d.kb_node_id);
      if (d.type !== 'content' || !d.content_id) return;
      const item = await tx.get<ContentDoc>(CONTENT, d.content_id);
      // Already deleted here (the tree is following ingest's own deletion): nothing to do.
      if (!item || item.deleted || item.org_id !== d.org_id) return;
      await run(tx, event, d.content_id, { type: 'delete', org_id: d.org_id, at: d.at });
      const versions = await tx.find<VersionDoc>(VERSIONS, { where: { content_id: d.content_id } });
      dropBlobsAfterCommit(
        d.content_id,
        d.org_id,
        versions.map((v) => v.id),
      );
    },
  };
}
