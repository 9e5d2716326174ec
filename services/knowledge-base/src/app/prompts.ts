import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { DocumentReader, Store } from '@kb/store';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { promptDecider, promptStream, type PromptCommand } from '../domain/prompt.js';
import { cleanName } from '../domain/names.js';
import { PROMPTS, PROMPT_NAMES, promptNameId, type PromptDoc } from '../projections/prompts.js';
import { TAGS, type TagDoc } from '../projections/tags.js';
import { applyTags, resolveTags, MAX_TAGS_PER_CALL } from './tags.js';
import { checkPage, metadataOf, type Page } from './common.js';

export interface PromptsDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
}

export interface PromptInput {
  name: string;
  text: string;
  /** Tags by id or by name; unknown names are created (spec 2.8). */
  tags?: string[] | undefined;
}

export interface PromptPatch {
  name?: string | undefined;
  text?: string | undefined;
  tags?: string[] | undefined;
}

export type PromptView = Omit<PromptDoc, 'id' | 'seq' | 'tags' | 'org_id'> & { tags: { tag_id: string; name: string }[] };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BY_CREATION = [{ field: 'seq', order: 'asc' as const }];

/** A question's name when none is given: its text on one line, cut to the name limit. */
export const nameFromText = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= 255 ? line : `${line.slice(0, 254).trimEnd()}…`;
};

/**
 * Prompts (spec 2.4) for both surfaces and the Questions view. Writes go
 * through the prompt decider; the prompt's tags travel in its events (for
 * generation and analytics) and are mirrored into the tag assignments so the
 * tags API sees them.
 */
export function createPromptsService(deps: PromptsDeps) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  async function readDoc(orgId: string, promptId: string, reader: Pick<DocumentReader, 'get'> = store): Promise<PromptDoc> {
    const doc = UUID_RE.test(promptId) ? await reader.get<PromptDoc>(PROMPTS, promptId.toLowerCase()) : undefined;
    if (!doc || doc.org_id !== orgId || doc.deleted_at !== null) throw errors.notFound('Prompt');
    return doc;
  }

  async function views(orgId: string, docs: PromptDoc[]): Promise<PromptView[]> {
    const tagIds = [...new Set(docs.flatMap((d) => d.tags))];
    const tags = tagIds.length ? await store.find<TagDoc>(TAGS, { where: { id: { $in: tagIds } } }) : [];
    const byId = new Map(tags.filter((t) => t.org_id === orgId).map((t) => [t.tag_id, t]));
    return docs.map(({ id: _id, seq: _seq, org_id: _org, tags: refs, ...d }) => ({
      ...d,
      tags: refs.flatMap((id) => {
        const t = byId.get(id);
        return t ? [{ tag_id: t.tag_id, name: t.name }] : [];
      }),
    }));
  }
  const view = async (orgId: string, doc: PromptDoc) => (await views(orgId, [doc]))[0]!;

  async function requireFreeName(s: CommandSession, orgId: string, name: string, exceptId?: string) {
    const taken = await s.tx.get<{ id: string; prompt_id: string }>(PROMPT_NAMES, promptNameId(orgId, cleanName(name)));
    if (taken && taken.prompt_id !== exceptId)
      throw errors.conflict(`A prompt named "${name.trim()}" already exists`, { code: 'prompt_name_taken' });
  }

  async function tagIds(s: CommandSession, orgId: string, refs: string[] | undefined, at: string): Promise<string[] | undefined> {
    if (refs === undefined) return undefined;
    if (refs.length > MAX_TAGS_PER_CALL) throw errors.validation(`at most ${MAX_TAGS_PER_CALL} tags`, { details: { field: 'tags' } });
    return resolveTags(s, ids, orgId, refs, at);
  }

  async function run(s: CommandSession, promptId: string, command: PromptCommand) {
    const { state, events } = await s.execute(promptDecider, promptStream(promptId), command);
    if (events.length > 0 && state.status === 'active' && 'tags' in command && command.tags !== undefined) {
      await applyTags(s, state.org_id, { type: 'prompt', id: promptId }, state.tags, 'set', 'request', command.at);
    }
  }

  async function create(ctx: CallContext, input: PromptInput): Promise<PromptView> {
    const promptId = ids.uuid();
    await commands.transaction(metadataOf(ctx), async (s) => {
      const at = now();
      await requireFreeName(s, ctx.org_id, input.name);
      const tags = (await tagIds(s, ctx.org_id, input.tags ?? [], at))!;
      await run(s, promptId, { type: 'create', prompt_id: promptId, org_id: ctx.org_id, name: input.name, text: input.text, tags, at });
    });
    return view(ctx.org_id, await readDoc(ctx.org_id, promptId));
  }

  async function update(ctx: CallContext, promptId: string, patch: PromptPatch): Promise<PromptView> {
    const doc = await readDoc(ctx.org_id, promptId);
    await commands.transaction(metadataOf(ctx), async (s) => {
      await readDoc(ctx.org_id, doc.prompt_id, s.tx);
      const at = now();
      if (patch.name !== undefined) await requireFreeName(s, ctx.org_id, patch.name, doc.prompt_id);
      const tags = await tagIds(s, ctx.org_id, patch.tags, at);
      await run(s, doc.prompt_id, {
        type: 'update',
        org_id: ctx.org_id,
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.text !== undefined && { text: patch.text }),
        ...(tags !== undefined && { tags }),
        at,
      });
    });
    return view(ctx.org_id, await readDoc(ctx.org_id, doc.prompt_id));
  }

  return {
    create,
    update,

    async list(ctx: CallContext, page: Page) {
      checkPage(page);
      const where = { org_id: ctx.org_id, deleted_at: null };
      const [docs, total_count] = await Promise.all([
        store.find<PromptDoc>(PROMPTS, { where, sort: BY_CREATION, ...page }),
        store.count(PROMPTS, where),
      ]);
      return { prompts: await views(ctx.org_id, docs), total_count };
    },

    async get(ctx: CallContext, promptId: string) {
      return view(ctx.org_id, await readDoc(ctx.org_id, promptId));
    },

    /** PUT: name and text required; tags replaced when given (the category/topic API never sends them). */
    replace: (ctx: CallContext, promptId: string, input: PromptInput) => {
      if (typeof input.name !== 'string') throw errors.validation('name is required', { details: { field: 'name' } });
      if (typeof input.text !== 'string') throw errors.validation('text is required', { details: { field: 'text' } });
      return update(ctx, promptId, input);
    },

    async remove(ctx: CallContext, promptId: string): Promise<void> {
      const doc = await readDoc(ctx.org_id, promptId);
      await commands.transaction(metadataOf(ctx), (s) => run(s, doc.prompt_id, { type: 'delete', org_id: ctx.org_id, at: now() }));
    },

    /** Live prompts of the organization, for suggestions (duplicates are not proposed). */
    all: (orgId: string) => store.find<PromptDoc>(PROMPTS, { where: { org_id: orgId, deleted_at: null }, sort: BY_CREATION }),
  };
}

export type PromptsService = ReturnType<typeof createPromptsService>;
