import { ConfigError, createLogger, loadConfig } from '@kb/platform';
import { knowledgeBaseConfigSpec } from './config.js';
import { reindexSearch } from './reindex.js';

/** `npm run reindex:search`: rebuild the search index from the store, with progress. Same settings as the service. */
async function main(): Promise<number> {
  const config = loadConfig(knowledgeBaseConfigSpec, { INTERNAL_TOKEN: 'reindex-unused-token', ...process.env });
  const logger = createLogger({ level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL });
  const result = await reindexSearch(config, logger, (done, total) =>
    process.stdout.write(`\rre-indexing: ${done}/${total} content items`),
  );
  process.stdout.write(`\rre-indexed ${result.contents} content items, ${result.chunks} chunks\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
