import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import {
  applyHeapSettings,
  ConfigError,
  configFields,
  createLogger,
  createShutdown,
  defineConfig,
  loadConfig,
  startTelemetry,
} from '@kb/platform';
import { developmentDefaults, startSystem } from './system.js';

applyHeapSettings('kb');

/** `npm start`: the whole service on one machine, no servers needed. */
const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
const telemetrySpec = defineConfig(Type.Object({ OTEL_EXPORTER_OTLP_ENDPOINT: configFields.OTEL_EXPORTER_OTLP_ENDPOINT }));
try {
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; one tracer provider serves every service in this process.
  const { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } = loadConfig(telemetrySpec);
  const telemetry = await startTelemetry({ serviceName: 'kb-all-in-one', endpoint, logger });
  const shutdown = createShutdown(logger);
  shutdown.add('telemetry', () => telemetry.shutdown());
  // The web console ships in this repository; `npm start` builds it first (scripts/build-console.mjs).
  const consoleDir = fileURLToPath(new URL('../../../web/console/dist', import.meta.url));
  if (!process.env.CONSOLE_DIR && existsSync(consoleDir)) process.env.CONSOLE_DIR = consoleDir;
  const system = await startSystem({ logger });
  shutdown.add('system', () => system.stop());
  shutdown.onSignals();
  const key = process.env.BOOTSTRAP_API_KEY || developmentDefaults.BOOTSTRAP_API_KEY;
  const shownKey = process.env.BOOTSTRAP_API_KEY ? '<your BOOTSTRAP_API_KEY>' : key;
  process.stdout.write(
    [
      '',
      `Knowledge base service ready at ${system.url}/api/v1  (data in ${process.env.DATA_DIR ?? './.data'})`,
      ...(process.env.CONSOLE_DIR
        ? [`Web console: ${system.url}/  (sign in as ${process.env.BOOTSTRAP_ADMIN_EMAIL || developmentDefaults.BOOTSTRAP_ADMIN_EMAIL})`]
        : []),
      `OpenAPI description: ${system.url}/api/v1/openapi.json`,
      'Try it:',
      `  curl -s -X POST ${system.url}/api/v1/categories -H 'X-API-Key: ${shownKey}' -H 'Content-Type: application/json' -d '{"name":"Getting started"}'`,
      `  curl -s ${system.url}/api/v1/categories/all -H 'X-API-Key: ${shownKey}'`,
      '',
    ].join('\n') + '\n',
  );
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`kb cannot start. ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
