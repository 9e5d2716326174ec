export * from './ports.js';
export * from './answer.js';
export * from './sentences.js';
export * from './support.js';
export * from './extractive.js';
export * from './grounded.js';
export { createOpenAiEmbeddings } from './openai-embeddings.js';
export { createOpenAiChat } from './openai-chat.js';
export type { OpenAiHttpOptions } from './openai-http.js';
