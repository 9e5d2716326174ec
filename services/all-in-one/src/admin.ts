import { Type } from '@sinclair/typebox';
import { ConfigError, configFields, checkAdapterSettings, createLogger, defineConfig, loadConfig } from '@kb/platform';
import { rebuildService, serviceProjections } from './rebuild.js';

/**
 * Operator commands: `npm run admin -- rebuild-read-models [service ...]`.
 * Run with the services stopped; uses the same STORE/DATA_DIR/MONGODB_URL settings.
 */
const adminConfigSpec = defineConfig(
  Type.Object({
    LOG_LEVEL: configFields.LOG_LEVEL,
    DATA_DIR: configFields.DATA_DIR,
    STORE: configFields.STORE,
    BUS: configFields.BUS,
    MONGODB_URL: configFields.MONGODB_URL,
    KAFKA_BROKERS: configFields.KAFKA_BROKERS,
  }),
  checkAdapterSettings,
);

/**
 * Replay progress: on a terminal one line, overwritten as events are replayed; in a log or a
 * pipe (no TTY), where a carriage return would run the lines together, a line every 5 seconds.
 */
function progressOf(service: string): (p: { events: number }) => void {
  if (process.stdout.isTTY) return (p) => process.stdout.write(`\r${service}: ${p.events} events replayed`);
  let last = Date.now();
  return (p) => {
    if (Date.now() - last < 5000) return;
    last = Date.now();
    process.stdout.write(`${service}: ${p.events} events replayed\n`);
  };
}

const usage = `usage: npm run admin -- rebuild-read-models [${Object.keys(serviceProjections).join('|')} ...]`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'rebuild-read-models') {
    process.stderr.write(`${usage}\n`);
    return 2;
  }
  const config = loadConfig(adminConfigSpec);
  const logger = createLogger({ level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL });
  const services = rest.length > 0 ? rest : Object.keys(serviceProjections);
  for (const service of services) {
    process.stdout.write(`${service}: rebuilding read models…\n`);
    const result = await rebuildService(service, config, logger, progressOf(service));
    process.stdout.write(`${process.stdout.isTTY ? '\r' : ''}${service}: done, ${result.events} events replayed\n`);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
