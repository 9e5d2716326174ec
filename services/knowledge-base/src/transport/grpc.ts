import type { UnaryHandler } from '@kb/rpc';
import type { CategoriesService, CategoryInput, TopicInput } from '../app/categories.js';

interface TopicInputMessage {
  name: string;
  description?: string;
}

const topicInput = (t: TopicInputMessage): TopicInput => ({
  name: t.name ?? '',
  ...(t.description !== undefined && { description: t.description }),
});

const patchOf = (r: { name?: string; description?: string; clear_description?: boolean }) => ({
  ...(r.name !== undefined && { name: r.name }),
  ...(r.clear_description ? { description: null } : r.description !== undefined ? { description: r.description } : {}),
});

/** Thin mapping from CategoryService RPCs to the use cases. */
export function categoryHandlers(categories: CategoriesService): Record<string, UnaryHandler> {
  return {
    ListCategories: (r: { limit?: number; offset?: number }, ctx) => categories.list(ctx, { limit: r.limit ?? 10, offset: r.offset ?? 0 }),
    ListAllCategories: async (_r, ctx) => ({ categories: await categories.listAll(ctx) }),
    GetCategory: (r: { category_id: string }, ctx) => categories.get(ctx, r.category_id),
    CreateCategory: (r: TopicInputMessage, ctx) => categories.create(ctx, topicInput(r)),
    ReplaceCategory: (r: { category_id: string } & TopicInputMessage, ctx) => categories.replace(ctx, r.category_id, topicInput(r)),
    UpdateCategory: (r: { category_id: string; name?: string; description?: string; clear_description?: boolean }, ctx) =>
      categories.update(ctx, r.category_id, patchOf(r)),
    DeleteCategory: async (r: { category_id: string }, ctx) => {
      await categories.remove(ctx, r.category_id);
      return {};
    },
    BatchCreateCategories: async (r: { categories?: (TopicInputMessage & { topics?: TopicInputMessage[] })[] }, ctx) => ({
      categories: await categories.batchCreate(
        ctx,
        (r.categories ?? []).map((c): CategoryInput => ({ ...topicInput(c), topics: (c.topics ?? []).map(topicInput) })),
      ),
    }),
    CreateTopic: (r: { category_id: string } & TopicInputMessage, ctx) => categories.createTopic(ctx, r.category_id, topicInput(r)),
    BatchCreateTopics: async (r: { category_id: string; topics?: TopicInputMessage[] }, ctx) => ({
      topics: await categories.batchCreateTopics(ctx, r.category_id, (r.topics ?? []).map(topicInput)),
    }),
    UpdateTopic: (r: { category_id: string; topic_id: string; name?: string; description?: string; clear_description?: boolean }, ctx) =>
      categories.updateTopic(ctx, r.category_id, r.topic_id, patchOf(r)),
    CheckFiling: async (r: { category_id?: string; topic_id?: string }, ctx) => {
      await categories.checkFiling(ctx, {
        ...(r.category_id && { category_id: r.category_id }),
        ...(r.topic_id && { topic_id: r.topic_id }),
      });
      return {};
    },
    DeleteTopic: async (r: { category_id: string; topic_id: string }, ctx) => {
      await categories.removeTopic(ctx, r.category_id, r.topic_id);
      return {};
    },
  };
}
