import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { DocumentReader, Store } from '@kb/store';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { TAG_NAME_MAX, cleanTagName, tagDecider, tagStream } from '../domain/tag.js';
import { taggingDecider, taggingStream, type TagOrigin, type TargetType } from '../domain/tagging.js';
import { ruleMatches, tagRuleDecider, tagRuleStream, type ContentFacts, type RuleConditions } from '../domain/tag-rule.js';
import {
  TAGS,
  TAG_ASSIGNMENTS,
  TAG_NAMES,
  TAG_RULES,
  assignmentId,
  tagNameId,
  type TagAssignmentDoc,
  type TagDoc,
  type TagRuleDoc,
} from '../projections/tags.js';
import { checkPage, metadataOf, type Page } from './common.js';
import { nodeVisible, taggedTargetVisible } from './scope-visibility.js';

export interface TagsDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
}

const isValidTagName = (raw: string): boolean => {
  const n = raw.trim().length;
  return n >= 1 && n <= TAG_NAME_MAX;
};
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BY_CREATION = [{ field: 'seq', order: 'asc' as const }];
/** A caller may attach at most this many tags to one thing in one call. */
export const MAX_TAGS_PER_CALL = 50;

export interface Target {
  type: TargetType;
  id: string;
}

async function readTag(reader: DocumentReader, orgId: string, tagId: string): Promise<TagDoc> {
  const doc = await reader.get<TagDoc>(TAGS, tagId);
  if (!doc || doc.org_id !== orgId) throw errors.notFound('Tag');
  return doc;
}

async function requireFreeName(reader: DocumentReader, orgId: string, name: string, exceptId?: string): Promise<void> {
  const taken = await reader.get<{ id: string; tag_id: string }>(TAG_NAMES, tagNameId(orgId, cleanTagName(name)));
  if (taken && taken.tag_id !== exceptId) throw errors.conflict(`A tag named "${name.trim()}" already exists`, { code: 'tag_name_taken' });
}

/**
 * Turns tags given by id or by name into tag ids, creating a tag for every name
 * the organization does not have yet (spec 2.8). For use by every taggable
 * feature, inside its own command transaction. An id that is no tag of the
 * organization is 404 (`unknownIds: 'throw'`) or dropped (`'skip'`, for
 * consumers that cannot refuse an event; they drop invalid names too).
 */
export async function resolveTags(
  session: CommandSession,
  ids: IdGenerator,
  orgId: string,
  refs: readonly string[],
  at: string,
  options: { unknownIds: 'throw' | 'skip' } = { unknownIds: 'throw' },
): Promise<string[]> {
  const out: string[] = [];
  for (const ref of refs) {
    let tagId: string | undefined;
    if (UUID_RE.test(ref)) {
      const doc = await session.tx.get<TagDoc>(TAGS, ref.toLowerCase());
      if (doc && doc.org_id === orgId) tagId = doc.tag_id;
      else if (options.unknownIds === 'throw') throw errors.notFound('Tag', { details: { tag: ref } });
      else continue;
    } else {
      if (options.unknownIds === 'skip' && !isValidTagName(ref)) continue;
      const name = cleanTagName(ref);
      const existing = await session.tx.get<{ id: string; tag_id: string }>(TAG_NAMES, tagNameId(orgId, name));
      if (existing) tagId = existing.tag_id;
      else {
        tagId = ids.uuid();
        await session.execute(tagDecider, tagStream(tagId), { type: 'create', tag_id: tagId, org_id: orgId, name, at });
      }
    }
    if (!out.includes(tagId)) out.push(tagId);
  }
  return out;
}

/** Replace ('set') or extend ('add') the tag set of one thing. */
export async function applyTags(
  session: CommandSession,
  orgId: string,
  target: Target,
  tagIds: string[],
  mode: 'set' | 'add',
  origin: TagOrigin,
  at: string,
): Promise<void> {
  await session.execute(taggingDecider, taggingStream(target.type, target.id), {
    type: mode,
    org_id: orgId,
    target_type: target.type,
    target_id: target.id,
    tag_ids: tagIds,
    origin,
    at,
  });
}

/** The live tags of each target, keyed `${type}:${id}` (ids of deleted tags are dropped). */
export async function tagsOf(reader: DocumentReader, orgId: string, targets: Target[]): Promise<Map<string, TagDoc[]>> {
  const out = new Map<string, TagDoc[]>();
  if (targets.length === 0) return out;
  const keys = targets.map((t) => assignmentId(t.type, t.id));
  const assignments = await reader.find<TagAssignmentDoc>(TAG_ASSIGNMENTS, { where: { id: { $in: keys } } });
  const tagIds = [...new Set(assignments.filter((a) => a.org_id === orgId).flatMap((a) => a.tag_ids))];
  const tags = tagIds.length ? await reader.find<TagDoc>(TAGS, { where: { id: { $in: tagIds } } }) : [];
  const byId = new Map(tags.filter((t) => t.org_id === orgId).map((t) => [t.tag_id, t]));
  for (const a of assignments) {
    if (a.org_id !== orgId) continue;
    out.set(
      a.id,
      a.tag_ids.map((id) => byId.get(id)).filter((t): t is TagDoc => t !== undefined),
    );
  }
  return out;
}

/** Tag ids of the organization's rules that match the content. */
export async function matchingRuleTags(reader: DocumentReader, orgId: string, facts: ContentFacts): Promise<string[]> {
  const rules = await reader.find<TagRuleDoc>(TAG_RULES, { where: { org_id: orgId }, sort: BY_CREATION });
  return [...new Set(rules.filter((r) => ruleMatches(r, facts)).map((r) => r.tag_id))];
}

/** Tags API use cases (spec 2.8) and the automatic tag rules sub-resource. */
export function createTagsService(deps: TagsDeps & { checkFolder: (ctx: CallContext, folderId: string) => Promise<unknown> }) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  return {
    async list(ctx: CallContext, page: Page) {
      checkPage(page);
      const where = { org_id: ctx.org_id };
      if (ctx.folder_scope !== null) {
        // A folder-scoped key sees the tags on what it can see (issue 13 item 4): prompts, and content, folders and
        // searches inside its scope (with an empty scope: only the tags on prompts); a tag on nothing it can see (or on
        // nothing at all) is not listed.
        const scope = ctx.folder_scope;
        const visible = new Set<string>();
        for (const a of await store.find<TagAssignmentDoc>(TAG_ASSIGNMENTS, { where })) {
          if (a.tag_ids.every((id) => visible.has(id))) continue;
          if (await taggedTargetVisible(store, scope, ctx.org_id, a)) for (const id of a.tag_ids) visible.add(id);
        }
        const all = (await store.find<TagDoc>(TAGS, { where, sort: BY_CREATION })).filter((t) => visible.has(t.tag_id));
        return { tags: all.slice(page.offset, page.offset + page.limit), total_count: all.length };
      }
      const [tags, total_count] = await Promise.all([
        store.find<TagDoc>(TAGS, { where, sort: BY_CREATION, ...page }),
        store.count(TAGS, where),
      ]);
      return { tags, total_count };
    },

    get: (ctx: CallContext, tagId: string) => readTag(store, ctx.org_id, tagId),

    async create(ctx: CallContext, input: { name: string; color?: string }): Promise<TagDoc> {
      const tagId = ids.uuid();
      await commands.transaction(metadataOf(ctx), async (s) => {
        await requireFreeName(s.tx, ctx.org_id, input.name);
        await s.execute(tagDecider, tagStream(tagId), {
          type: 'create',
          tag_id: tagId,
          org_id: ctx.org_id,
          name: input.name,
          ...(input.color !== undefined && { color: input.color }),
          at: now(),
        });
      });
      return readTag(store, ctx.org_id, tagId);
    },

    async update(ctx: CallContext, tagId: string, patch: { name?: string; color?: string | null }): Promise<TagDoc> {
      await commands.transaction(metadataOf(ctx), async (s) => {
        await readTag(s.tx, ctx.org_id, tagId);
        if (patch.name !== undefined) await requireFreeName(s.tx, ctx.org_id, patch.name, tagId);
        await s.execute(tagDecider, tagStream(tagId), { type: 'update', org_id: ctx.org_id, ...patch, at: now() });
      });
      return readTag(store, ctx.org_id, tagId);
    },

    async remove(ctx: CallContext, tagId: string): Promise<void> {
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(tagDecider, tagStream(tagId), { type: 'delete', org_id: ctx.org_id, at: now() }),
      );
    },

    /** Tags by id or name; unknown names are created. For other features' gRPC callers. */
    async resolve(ctx: CallContext, refs: string[]): Promise<TagDoc[]> {
      const tagIds = await commands.transaction(metadataOf(ctx), (s) => resolveTags(s, ids, ctx.org_id, refs, now()));
      const docs = tagIds.length ? await store.find<TagDoc>(TAGS, { where: { id: { $in: tagIds } } }) : [];
      const byId = new Map(docs.map((d) => [d.tag_id, d]));
      return tagIds.map((id) => byId.get(id)!);
    },

    async listRules(ctx: CallContext, page: Page) {
      checkPage(page);
      const where = { org_id: ctx.org_id };
      if (ctx.folder_scope !== null) {
        // A folder-scoped key sees only the rules about a folder inside its scope.
        const all: TagRuleDoc[] = [];
        for (const r of await store.find<TagRuleDoc>(TAG_RULES, { where, sort: BY_CREATION }))
          if (r.folder_id && (await nodeVisible(store, ctx.folder_scope, ctx.org_id, r.folder_id))) all.push(r);
        return { rules: all.slice(page.offset, page.offset + page.limit), total_count: all.length };
      }
      const [rules, total_count] = await Promise.all([
        store.find<TagRuleDoc>(TAG_RULES, { where, sort: BY_CREATION, ...page }),
        store.count(TAG_RULES, where),
      ]);
      return { rules, total_count };
    },

    /** `tag` by id or by name (an unknown name creates the tag). */
    async createRule(ctx: CallContext, input: { tag: string } & RuleConditions): Promise<TagRuleDoc> {
      if (input.folder_id !== undefined) await deps.checkFolder(ctx, input.folder_id);
      const ruleId = ids.uuid();
      await commands.transaction(metadataOf(ctx), async (s) => {
        const at = now();
        const [tagId] = await resolveTags(s, ids, ctx.org_id, [input.tag], at);
        await s.execute(tagRuleDecider, tagRuleStream(ruleId), {
          type: 'create',
          rule_id: ruleId,
          org_id: ctx.org_id,
          tag_id: tagId!,
          ...(input.folder_id !== undefined && { folder_id: input.folder_id }),
          ...(input.format !== undefined && { format: input.format }),
          ...(input.source_kind !== undefined && { source_kind: input.source_kind }),
          at,
        });
      });
      return (await store.get<TagRuleDoc>(TAG_RULES, ruleId))!;
    },

    async removeRule(ctx: CallContext, ruleId: string): Promise<void> {
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(tagRuleDecider, tagRuleStream(ruleId), { type: 'delete', org_id: ctx.org_id, rule_id: ruleId, at: now() }),
      );
    },
  };
}

export type TagsService = ReturnType<typeof createTagsService>;
