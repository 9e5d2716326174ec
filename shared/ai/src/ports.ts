/** What the texts are: a search query, or passages being indexed (some models embed the two differently). */
export type EmbeddingPurpose = 'query' | 'document';

/** Turns texts into vectors (one per text, same order). */
export interface Embeddings {
  readonly model: string;
  embed(texts: string[], purpose?: EmbeddingPurpose): Promise<number[][]>;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** How a chat model is asked to answer. */
export interface CompletionOptions {
  /** Answer with one JSON object of this schema (structured output); a model that cannot is asked for plain text. */
  jsonSchema?: { name: string; schema: object };
}

/** A chat model: messages in, the assistant's text out. */
export interface Llm {
  readonly model: string;
  complete(messages: ChatMessage[], options?: CompletionOptions): Promise<string>;
}
