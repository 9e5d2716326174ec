import { ConfigError, createLogger, createShutdown } from '@kb/platform';
import { developmentDefaults, startSystem } from './system.js';

/** `npm start`: the whole service on one machine, no servers needed. */
const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
try {
  const system = await startSystem({ logger });
  const shutdown = createShutdown(logger);
  shutdown.add('system', () => system.stop());
  shutdown.onSignals();
  const key = process.env.BOOTSTRAP_API_KEY || developmentDefaults.BOOTSTRAP_API_KEY;
  const shownKey = process.env.BOOTSTRAP_API_KEY ? '<your BOOTSTRAP_API_KEY>' : key;
  process.stdout.write(
    [
      '',
      `Knowledge base service ready at ${system.url}/api/v1  (data in ${process.env.DATA_DIR ?? './.data'})`,
      `OpenAPI description: ${system.url}/api/v1/openapi.json`,
      'Try it:',
      `  curl -s -X POST ${system.url}/api/v1/categories -H 'X-API-Key: ${shownKey}' -H 'Content-Type: application/json' -d '{"name":"Getting started"}'`,
      `  curl -s ${system.url}/api/v1/categories/all -H 'X-API-Key: ${shownKey}'`,
      '',
    ].join('\n') + '\n',
  );
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
