export { createSqliteSearchIndex, ftsQuery, type SqliteSearchIndexOptions } from './sqlite-index.js';
