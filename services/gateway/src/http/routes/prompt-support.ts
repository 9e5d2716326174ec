import { Type } from '@sinclair/typebox';
import type { callerOf } from '../auth-hook.js';

/** What the prompt and question views share: field schemas, the service's prompt message, auth. */

export const Name = Type.String({
  minLength: 2,
  maxLength: 255,
  description: '2 to 255 characters, unique in the organization (case-insensitive)',
});
export const Text = Type.String({
  minLength: 1,
  maxLength: 10000,
  description: 'kept verbatim; {{variable}} placeholders are listed in variables',
});
export type ListPrompts = (
  query: { limit: number; offset: number },
  req: Parameters<typeof callerOf>[0],
) => Promise<{ prompts?: PromptMessage[]; total_count: number }>;

export interface PromptMessage {
  prompt_id: string;
  name: string;
  text: string;
  variables?: string[];
  tags?: { tag_id: string; name: string }[];
  created_at: string;
  updated_at: string;
  deleted_at?: string;
}

export const writeOf = (body: { name?: string; text?: string; tags?: string[] }) => ({
  ...(body.name !== undefined && { name: body.name }),
  ...(body.text !== undefined && { text: body.text }),
  tags: body.tags ?? [],
  has_tags: body.tags !== undefined,
});
export const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
export const write = { auth: { credential: 'any', permission: 'write:kb' } } as const;
