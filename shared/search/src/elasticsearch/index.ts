export { createElasticsearchIndex, type ElasticsearchIndexOptions } from './elasticsearch-index.js';
