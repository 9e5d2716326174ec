/** Prompts as generation learns them from knowledge-base's events (the content engine's targets). */
export const PROMPTS = 'prompts';
export interface PromptDoc {
  id: string;
  org_id: string;
  name: string;
  text: string;
  /** Tag ids. */
  tags: string[];
  deleted: boolean;
}
