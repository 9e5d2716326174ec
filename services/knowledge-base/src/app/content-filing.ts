import type { Logger } from 'pino';
import type { IdGenerator } from '@kb/platform';
import type { StoreTransaction } from '@kb/store';
import type { CommandBus, CommandSession, EventHandlers } from '@kb/eventsourcing';
import type { EnvelopeOf, EventEnvelope } from '@kb/events';
import { CATEGORIES, TOPICS, type CategoryDoc, type TopicDoc } from '../projections/categories.js';
import { KB_NODES, type KbNodeDoc } from '../projections/kb-tree.js';
import { ensureRoot, chainOf, lockTree, runNode } from './kb-tree.js';
import { applyTags, matchingRuleTags, resolveTags } from './tags.js';

/**
 * The content filing read model: where each content item of the ingest service
 * sits in the knowledge base (its tree node), how it is filed (category, topic)
 * and how far its processing got. Search filters on it. It is kept by the
 * consumer of the ingest topic (not by a projection of this service's own
 * events): rebuilding it means replaying the ingest topic into an empty inbox.
 * Tags of content items live in the tag assignments (target_type 'content').
 */
export const CONTENT_FILING = 'content_filing';

export type ProcessingStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface ContentFilingDoc {
  id: string;
  content_id: string;
  org_id: string;
  kb_node_id: string;
  title: string;
  type: 'raw' | 'document' | 'web';
  category_id?: string;
  topic_id?: string;
  status: ProcessingStatus;
  version_id: string;
  version_num: number;
  source_kind: 'raw' | 'file' | 'url';
  format?: string;
  /** A file's own tags (ids or names) as given on intake, applied when its ingestion finishes (spec 2.8). */
  pending_tags?: string[];
  updated_at: string;
}

export const CONTENT_CONSUMER_GROUP = 'knowledge-base.content';

/** Handlers for the ingest topic: the content node in the tree, the filing, the tags. */
export function contentFilingHandlers(deps: { commands: CommandBus; ids: IdGenerator; logger: Logger }): EventHandlers {
  const { commands, ids, logger } = deps;

  const within = <T>(tx: StoreTransaction, event: EventEnvelope, fn: (s: CommandSession) => Promise<T>) =>
    commands.within(
      tx,
      {
        metadata: {
          org_id: event.metadata.org_id,
          actor: 'system:knowledge-base',
          causation_id: event.id,
          ...(event.metadata.correlation_id !== undefined && { correlation_id: event.metadata.correlation_id }),
          ...(event.metadata.request_id !== undefined && { request_id: event.metadata.request_id }),
        },
      },
      fn,
    );

  /** Unknown or deleted categories and topics (or another organization's) are dropped, with a log line. */
  async function validFiling(
    tx: StoreTransaction,
    orgId: string,
    categoryId: string | undefined | null,
    topicId: string | undefined | null,
  ) {
    const out: { category_id?: string | null; topic_id?: string | null } = {};
    if (categoryId === null) out.category_id = null;
    else if (categoryId !== undefined) {
      const c = await tx.get<CategoryDoc>(CATEGORIES, categoryId);
      if (c && c.org_id === orgId && c.deleted_at === null) out.category_id = categoryId;
      else logger.warn({ org_id: orgId, category_id: categoryId }, 'content filed under an unknown category; ignored');
    }
    if (topicId === null) out.topic_id = null;
    else if (topicId !== undefined) {
      const t = await tx.get<TopicDoc>(TOPICS, topicId);
      if (t && t.org_id === orgId && t.deleted_at === null) out.topic_id = topicId;
      else logger.warn({ org_id: orgId, topic_id: topicId }, 'content filed under an unknown topic; ignored');
    }
    return out;
  }

  const withFiling = (doc: ContentFilingDoc, f: { category_id?: string | null; topic_id?: string | null }): ContentFilingDoc => {
    const next = { ...doc };
    if (f.category_id === null) delete next.category_id;
    else if (f.category_id !== undefined) next.category_id = f.category_id;
    if (f.topic_id === null) delete next.topic_id;
    else if (f.topic_id !== undefined) next.topic_id = f.topic_id;
    return next;
  };

  async function applyRules(s: CommandSession, filing: ContentFilingDoc, at: string): Promise<void> {
    const node = await s.tx.get<KbNodeDoc>(KB_NODES, filing.kb_node_id);
    const folderChain = node?.parent_id ? await chainOf(s.tx, (await s.tx.get<KbNodeDoc>(KB_NODES, node.parent_id))!) : [];
    const tagIds = await matchingRuleTags(s.tx, filing.org_id, {
      folder_chain: folderChain,
      source_kind: filing.source_kind,
      ...(filing.format !== undefined && { format: filing.format }),
    });
    if (tagIds.length) await applyTags(s, filing.org_id, { type: 'content', id: filing.content_id }, tagIds, 'add', 'rule', at);
  }

  async function applyCallerTags(s: CommandSession, orgId: string, contentId: string, refs: string[], at: string): Promise<void> {
    if (!refs.length) return;
    const tagIds = await resolveTags(s, ids, orgId, refs, at, { unknownIds: 'skip' });
    if (tagIds.length) await applyTags(s, orgId, { type: 'content', id: contentId }, tagIds, 'add', 'intake', at);
  }

  /** content.created and content.version_added: the node exists (created under its folder once), the filing follows the version. */
  const versionAccepted = (tx: StoreTransaction, event: EnvelopeOf<'content.created' | 'content.version_added'>) =>
    within(tx, event, async (s) => {
      const d = event.data;
      const existing = await tx.get<ContentFilingDoc>(CONTENT_FILING, d.content_id);
      let nodeId = existing?.kb_node_id;
      const node = nodeId ? await tx.get<KbNodeDoc>(KB_NODES, nodeId) : undefined;
      if (!node) {
        await lockTree(s, d.org_id, d.at);
        const rootId = await ensureRoot(s, d.org_id, d.at);
        const wanted = d.parent_id ? await tx.get<KbNodeDoc>(KB_NODES, d.parent_id) : undefined;
        const parentOk = wanted && wanted.org_id === d.org_id && wanted.type === 'folder';
        if (d.parent_id && !parentOk) {
          logger.warn({ org_id: d.org_id, content_id: d.content_id, parent_id: d.parent_id }, 'content folder is gone; filed at the root');
        }
        nodeId = ids.uuid();
        await runNode(s, nodeId, {
          type: 'create',
          kb_node_id: nodeId,
          org_id: d.org_id,
          node_type: 'content',
          parent_id: parentOk ? wanted.kb_node_id : rootId,
          name: d.title,
          content_id: d.content_id,
          at: d.at,
        });
      } else if (node.name !== d.title) {
        await runNode(s, node.kb_node_id, { type: 'rename', org_id: d.org_id, name: d.title, at: d.at });
      }
      const base: ContentFilingDoc = {
        ...(existing ?? {}),
        id: d.content_id,
        content_id: d.content_id,
        org_id: d.org_id,
        kb_node_id: nodeId!,
        title: d.title,
        type: d.type,
        status: 'queued',
        version_id: d.version_id,
        version_num: d.version_num,
        source_kind: d.source.kind,
        updated_at: d.at,
      };
      delete base.format;
      delete base.pending_tags;
      if (d.source.format !== undefined) base.format = d.source.format.toLowerCase();
      const filing = withFiling(base, await validFiling(tx, d.org_id, d.category_id, d.topic_id));
      await tx.put(CONTENT_FILING, filing);
      // Raw text is ready on creation: the caller's own tags (a name the organization lacks becomes a tag) and the
      // rule tags apply at once. A file gets both when its ingestion finishes (spec 2.8), so one that fails keeps none.
      if (d.source.kind === 'raw') {
        await applyCallerTags(s, d.org_id, d.content_id, d.tags, d.at);
        await applyRules(s, filing, d.at);
      } else if (d.tags.length) await tx.put(CONTENT_FILING, { ...filing, pending_tags: d.tags });
    });

  const currentVersion = async (tx: StoreTransaction, d: { content_id: string; version_id: string }) => {
    const filing = await tx.get<ContentFilingDoc>(CONTENT_FILING, d.content_id);
    return filing && filing.version_id === d.version_id ? filing : undefined;
  };

  return {
    'content.created': versionAccepted,
    'content.version_added': versionAccepted,

    'content.processing_started': async (tx, event) => {
      const d = event.data;
      const filing = await currentVersion(tx, d);
      if (filing && filing.status === 'queued') await tx.put(CONTENT_FILING, { ...filing, status: 'processing', updated_at: d.at });
    },

    'content.extracted': (tx, event) =>
      within(tx, event, async (s) => {
        const d = event.data;
        const filing = await currentVersion(tx, d);
        if (!filing) return;
        // The format read from the bytes is the truth (a file without an extension claims none): rules match on it.
        const { pending_tags: pending, ...rest } = filing;
        const next: ContentFilingDoc = {
          ...rest,
          status: 'completed',
          ...(d.format !== undefined && { format: d.format.toLowerCase() }),
          updated_at: d.at,
        };
        await tx.put(CONTENT_FILING, next);
        if (filing.source_kind !== 'raw') {
          await applyCallerTags(s, filing.org_id, filing.content_id, pending ?? [], d.at);
          await applyRules(s, next, d.at);
        }
      }),

    'content.failed': async (tx, event) => {
      const d = event.data;
      const filing = await currentVersion(tx, d);
      // A failed file never gets the tags it was sent with.
      if (filing) {
        const { pending_tags: _dropped, ...rest } = filing;
        await tx.put(CONTENT_FILING, { ...rest, status: 'failed', updated_at: d.at });
      }
    },

    'content.updated': (tx, event) =>
      within(tx, event, async (s) => {
        const d = event.data;
        const filing = await tx.get<ContentFilingDoc>(CONTENT_FILING, d.content_id);
        if (!filing || filing.org_id !== d.org_id) return;
        const next = withFiling(
          { ...filing, ...(d.title !== undefined && { title: d.title }), updated_at: d.at },
          await validFiling(tx, d.org_id, d.category_id, d.topic_id),
        );
        await tx.put(CONTENT_FILING, next);
        if (d.title !== undefined && (await tx.get<KbNodeDoc>(KB_NODES, filing.kb_node_id))) {
          await runNode(s, filing.kb_node_id, { type: 'rename', org_id: d.org_id, name: d.title, at: d.at });
        }
      }),

    'content.deleted': (tx, event) =>
      within(tx, event, async (s) => {
        const d = event.data;
        const filing = await tx.get<ContentFilingDoc>(CONTENT_FILING, d.content_id);
        if (!filing || filing.org_id !== d.org_id) return;
        if (await tx.get<KbNodeDoc>(KB_NODES, filing.kb_node_id)) {
          await runNode(s, filing.kb_node_id, { type: 'delete', org_id: d.org_id, at: d.at });
        }
        await tx.delete(CONTENT_FILING, d.content_id);
      }),
  };
}
