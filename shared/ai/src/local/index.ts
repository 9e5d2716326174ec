export { createLocalEmbeddings, missingModelFiles, MODEL_FILES } from './onnx-embeddings.js';
export type { LocalEmbeddings, LocalEmbeddingsOptions, ModelConfig } from './onnx-embeddings.js';
export { createWordPieceTokenizer, wordPieceSpecOf } from './wordpiece.js';
export type { WordPieceSpec, WordPieceTokenizer } from './wordpiece.js';
export { poolHidden, type Pooling } from './pooling.js';
