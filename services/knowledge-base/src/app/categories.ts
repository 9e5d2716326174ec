import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { categoryDecider, categoryStream, type CategoryCommand } from '../domain/category.js';
import { cleanName } from '../domain/names.js';
import { CATEGORIES, CATEGORY_NAMES, TOPICS, categoryNameId, type CategoryDoc, type TopicDoc } from '../projections/categories.js';

export interface TopicInput {
  name: string;
  description?: string;
}

export interface CategoryInput extends TopicInput {
  topics?: TopicInput[];
}

export interface CategoriesDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
}

const BY_CREATION = [{ field: 'seq', order: 'asc' as const }];

const metadataOf = (ctx: CallContext) => ({
  metadata: { org_id: ctx.org_id, actor: `${ctx.principal.type}:${ctx.principal.id}`, request_id: ctx.request_id },
});

/** Category and topic use cases; reads come from the read models, writes go through the decider. */
export function createCategoriesService(deps: CategoriesDeps) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  async function requireFreeCategoryName(session: CommandSession, orgId: string, name: string, exceptId?: string) {
    const taken = await session.tx.get<{ id: string; category_id: string }>(CATEGORY_NAMES, categoryNameId(orgId, cleanName(name)));
    if (taken && taken.category_id !== exceptId) {
      throw errors.conflict(`A category named "${name.trim()}" already exists`, { code: 'category_name_taken' });
    }
  }

  async function run(session: CommandSession, categoryId: string, command: CategoryCommand) {
    return session.execute(categoryDecider, categoryStream(categoryId), command);
  }

  async function readCategory(orgId: string, categoryId: string, reader: Pick<Store, 'get'> = store): Promise<CategoryDoc> {
    const doc = await reader.get<CategoryDoc>(CATEGORIES, categoryId);
    if (!doc || doc.org_id !== orgId || doc.deleted_at !== null) throw errors.notFound('Category');
    return doc;
  }

  async function createIn(session: CommandSession, ctx: CallContext, input: CategoryInput, at: string): Promise<string> {
    await requireFreeCategoryName(session, ctx.org_id, input.name);
    const categoryId = ids.uuid();
    await run(session, categoryId, {
      type: 'create',
      category_id: categoryId,
      org_id: ctx.org_id,
      name: input.name,
      ...(input.description !== undefined && { description: input.description }),
      at,
    });
    for (const topic of input.topics ?? []) await addTopicIn(session, ctx, categoryId, topic, at);
    return categoryId;
  }

  async function addTopicIn(session: CommandSession, ctx: CallContext, categoryId: string, topic: TopicInput, at: string) {
    const topicId = ids.uuid();
    await run(session, categoryId, {
      type: 'add_topic',
      org_id: ctx.org_id,
      topic_id: topicId,
      name: topic.name,
      ...(topic.description !== undefined && { description: topic.description }),
      at,
    });
    return topicId;
  }

  const topicsOf = (categoryId: string) =>
    store.find<TopicDoc>(TOPICS, { where: { category_id: categoryId, deleted_at: null }, sort: BY_CREATION });

  return {
    async list(ctx: CallContext, page: { limit: number; offset: number }) {
      const where = { org_id: ctx.org_id, deleted_at: null };
      const [categories, total_count] = await Promise.all([
        store.find<CategoryDoc>(CATEGORIES, { where, sort: BY_CREATION, ...page }),
        store.count(CATEGORIES, where),
      ]);
      return { categories, total_count };
    },

    async listAll(ctx: CallContext) {
      const [categories, topics] = await Promise.all([
        store.find<CategoryDoc>(CATEGORIES, { where: { org_id: ctx.org_id, deleted_at: null }, sort: BY_CREATION }),
        store.find<TopicDoc>(TOPICS, { where: { org_id: ctx.org_id, deleted_at: null }, sort: BY_CREATION }),
      ]);
      const byCategory = new Map<string, TopicDoc[]>();
      for (const t of topics) byCategory.set(t.category_id, [...(byCategory.get(t.category_id) ?? []), t]);
      return categories.map((c) => ({ ...c, topics: byCategory.get(c.category_id) ?? [] }));
    },

    get: (ctx: CallContext, categoryId: string) => readCategory(ctx.org_id, categoryId),

    async create(ctx: CallContext, input: TopicInput): Promise<CategoryDoc> {
      const id = await commands.transaction(metadataOf(ctx), (s) => createIn(s, ctx, input, now()));
      return readCategory(ctx.org_id, id);
    },

    /** All or nothing: one transaction for every category and topic. */
    async batchCreate(ctx: CallContext, inputs: CategoryInput[]) {
      if (inputs.length === 0) throw errors.validation('categories must not be empty', { details: { field: 'categories' } });
      const created = await commands.transaction(metadataOf(ctx), async (s) => {
        const at = now();
        const out: string[] = [];
        for (const input of inputs) out.push(await createIn(s, ctx, input, at));
        return out;
      });
      return Promise.all(created.map(async (id) => ({ ...(await readCategory(ctx.org_id, id)), topics: await topicsOf(id) })));
    },

    async replace(ctx: CallContext, categoryId: string, input: TopicInput): Promise<CategoryDoc> {
      await commands.transaction(metadataOf(ctx), async (s) => {
        await readCategory(ctx.org_id, categoryId, s.tx);
        await requireFreeCategoryName(s, ctx.org_id, input.name, categoryId);
        await run(s, categoryId, {
          type: 'update',
          org_id: ctx.org_id,
          name: input.name,
          description: input.description ?? null,
          at: now(),
        });
      });
      return readCategory(ctx.org_id, categoryId);
    },

    async update(ctx: CallContext, categoryId: string, patch: { name?: string; description?: string | null }): Promise<CategoryDoc> {
      await commands.transaction(metadataOf(ctx), async (s) => {
        await readCategory(ctx.org_id, categoryId, s.tx);
        if (patch.name !== undefined) await requireFreeCategoryName(s, ctx.org_id, patch.name, categoryId);
        await run(s, categoryId, { type: 'update', org_id: ctx.org_id, ...patch, at: now() });
      });
      return readCategory(ctx.org_id, categoryId);
    },

    async remove(ctx: CallContext, categoryId: string): Promise<void> {
      await commands.transaction(metadataOf(ctx), (s) => run(s, categoryId, { type: 'delete', org_id: ctx.org_id, at: now() }));
    },

    async createTopic(ctx: CallContext, categoryId: string, input: TopicInput): Promise<TopicDoc> {
      const topicId = await commands.transaction(metadataOf(ctx), (s) => addTopicIn(s, ctx, categoryId, input, now()));
      return (await store.get<TopicDoc>(TOPICS, topicId))!;
    },

    async batchCreateTopics(ctx: CallContext, categoryId: string, inputs: TopicInput[]): Promise<TopicDoc[]> {
      if (inputs.length === 0) throw errors.validation('topics must not be empty', { details: { field: 'topics' } });
      const created = await commands.transaction(metadataOf(ctx), async (s) => {
        const at = now();
        const out: string[] = [];
        for (const t of inputs) out.push(await addTopicIn(s, ctx, categoryId, t, at));
        return out;
      });
      const docs = await store.find<TopicDoc>(TOPICS, { where: { id: { $in: created } } });
      const byId = new Map(docs.map((d) => [d.id, d]));
      return created.map((id) => byId.get(id)!);
    },

    async updateTopic(
      ctx: CallContext,
      categoryId: string,
      topicId: string,
      patch: { name?: string; description?: string | null },
    ): Promise<TopicDoc> {
      await commands.transaction(metadataOf(ctx), (s) =>
        run(s, categoryId, { type: 'update_topic', org_id: ctx.org_id, topic_id: topicId, ...patch, at: now() }),
      );
      return (await store.get<TopicDoc>(TOPICS, topicId))!;
    },

    /**
     * Content filed under a category and/or topic must name live ones of this organization,
     * and a topic must belong to the category given with it (404 otherwise). Intake asks
     * before accepting, so a typo never files content under nothing.
     */
    async checkFiling(ctx: CallContext, filing: { category_id?: string; topic_id?: string }): Promise<void> {
      if (filing.category_id) await readCategory(ctx.org_id, filing.category_id);
      if (filing.topic_id) {
        const topic = await store.get<TopicDoc>(TOPICS, filing.topic_id);
        if (!topic || topic.org_id !== ctx.org_id || topic.deleted_at !== null) throw errors.notFound('Topic');
        if (filing.category_id && topic.category_id !== filing.category_id) {
          throw errors.notFound('Topic', { code: 'topic_not_in_category' });
        }
        await readCategory(ctx.org_id, topic.category_id);
      }
    },

    async removeTopic(ctx: CallContext, categoryId: string, topicId: string): Promise<void> {
      await commands.transaction(metadataOf(ctx), (s) =>
        run(s, categoryId, { type: 'delete_topic', org_id: ctx.org_id, topic_id: topicId, at: now() }),
      );
    },
  };
}

export type CategoriesService = ReturnType<typeof createCategoriesService>;
