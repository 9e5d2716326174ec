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

/** A chat model: messages in, the assistant's text out. */
export interface Llm {
  readonly model: string;
  complete(messages: ChatMessage[]): Promise<string>;
}
