export { startKnowledgeBase, SERVICE_NAME, type RunningService } from './service.js';
export { knowledgeBaseConfigSpec, type KnowledgeBaseConfig } from './config.js';
export { knowledgeBaseProjections } from './projections/index.js';
export { reindexSearch } from './reindex.js';
