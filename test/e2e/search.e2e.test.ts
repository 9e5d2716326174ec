import { describeSearchApi, sqliteBackend } from './search-api-suite.js';

// The embedded search index (SQLite FTS5); search-elasticsearch.e2e.test.ts runs the same on Elasticsearch.
describeSearchApi(sqliteBackend);
