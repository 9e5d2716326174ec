import type { UnaryHandler } from '@kb/rpc';
import type { PromptsService } from '../app/prompts.js';
import type { createPromptSuggestions } from '../app/prompt-suggestions.js';

interface PromptWriteMessage {
  prompt_id: string;
  name?: string;
  text?: string;
  tags?: string[];
  has_tags?: boolean;
}

/** Thin mapping from Prompts RPCs to the use cases. */
export function promptHandlers(
  prompts: PromptsService,
  suggestions: ReturnType<typeof createPromptSuggestions>,
): Record<string, UnaryHandler> {
  const tagsOf = (r: PromptWriteMessage) => (r.has_tags ? (r.tags ?? []) : undefined);
  return {
    ListPrompts: (r: { limit?: number; offset?: number }, ctx) => prompts.list(ctx, { limit: r.limit ?? 10, offset: r.offset ?? 0 }),
    GetPrompt: (r: { prompt_id: string }, ctx) => prompts.get(ctx, r.prompt_id),
    CreatePrompt: (r: { name?: string; text?: string; tags?: string[] }, ctx) =>
      prompts.create(ctx, { name: r.name ?? '', text: r.text ?? '', tags: r.tags ?? [] }),
    ReplacePrompt: (r: PromptWriteMessage, ctx) =>
      prompts.replace(ctx, r.prompt_id, { name: r.name as string, text: r.text as string, tags: tagsOf(r) }),
    UpdatePrompt: (r: PromptWriteMessage, ctx) => prompts.update(ctx, r.prompt_id, { name: r.name, text: r.text, tags: tagsOf(r) }),
    DeletePrompt: async (r: { prompt_id: string }, ctx) => {
      await prompts.remove(ctx, r.prompt_id);
      return {};
    },
    SuggestPrompts: async (r: { count?: number }, ctx) => ({ suggestions: await suggestions.suggest(ctx, { count: r.count }) }),
  };
}
