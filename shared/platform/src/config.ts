import { Type, type TObject, type TProperties, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Typed configuration from environment variables. Each property of the schema is
 * one variable, named exactly as in the environment. A wrong or missing value
 * stops the start with a message that names the variable.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface ConfigSpec<T extends TProperties> {
  schema: TObject<T>;
  /** Cross-field rules (e.g. MONGODB_URL is required when STORE=mongodb). Return problems. */
  check?: (config: Static<TObject<T>>) => string[];
}

export function defineConfig<T extends TProperties>(schema: TObject<T>, check?: ConfigSpec<T>['check']): ConfigSpec<T> {
  return check ? { schema, check } : { schema };
}

export function loadConfig<T extends TProperties>(
  spec: ConfigSpec<T>,
  env: Record<string, string | undefined> = process.env,
): Static<TObject<T>> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(spec.schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const problems: string[] = [];
  // TypeBox's conversion truncates "1.5" and "1e9" to 1: a whole number must be written as one.
  for (const [key, value] of Object.entries(raw)) {
    const field = spec.schema.properties[key] as { type?: string } | undefined;
    if (field?.type === 'integer' && !/^-?\d+$/.test(String(value).trim())) {
      problems.push(`${key}=${JSON.stringify(value)} is invalid: expected a whole number${describeSuffix(field)}`);
      delete raw[key];
    }
  }
  const withDefaults = Value.Default(spec.schema, raw);
  const converted = Value.Convert(spec.schema, withDefaults);
  for (const error of Value.Errors(spec.schema, converted)) {
    const name = error.path.replace(/^\//, '') || '(root)';
    const given = env[name];
    problems.push(
      given === undefined || given === ''
        ? `${name} is required: ${describe(spec.schema.properties[name])}`
        : `${name}=${JSON.stringify(given)} is invalid: ${acceptedValues(spec.schema.properties[name]) ?? error.message}${describeSuffix(spec.schema.properties[name])}`,
    );
  }
  if (problems.length > 0) throw new ConfigError(dedupe(problems));
  const config = converted as Static<TObject<T>>;
  const crossField = spec.check?.(config) ?? [];
  if (crossField.length > 0) throw new ConfigError(crossField);
  return config;
}

/** "expected one of a, b, c" for a setting that takes one of a few literal values (TypeBox's own message lists none). */
function acceptedValues(schema: unknown): string | undefined {
  const options = (schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf;
  if (!options || options.length === 0 || !options.every((o) => o.const !== undefined)) return undefined;
  return `expected one of ${options.map((o) => String(o.const)).join(', ')}`;
}

function describe(schema: unknown): string {
  const s = schema as { description?: string } | undefined;
  return s?.description ?? 'no description';
}

function describeSuffix(schema: unknown): string {
  const s = schema as { description?: string } | undefined;
  return s?.description ? ` (${s.description})` : '';
}

const dedupe = (items: string[]): string[] => [...new Set(items)];

/** Reusable schema pieces so every service spells shared variables the same way. */
export const configFields = {
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'pino log level' },
  ),
  DATA_DIR: Type.String({ default: './.data', minLength: 1, description: 'where embedded adapters keep their files' }),
  STORE: Type.Union([Type.Literal('sqlite'), Type.Literal('mongodb')], {
    default: 'sqlite',
    description: 'event store + document store adapter: sqlite (embedded) or mongodb',
  }),
  BUS: Type.Union([Type.Literal('sqlite'), Type.Literal('kafka')], {
    default: 'sqlite',
    description: 'event bus adapter: sqlite (embedded durable log) or kafka',
  }),
  MONGODB_URL: Type.Optional(
    Type.String({ pattern: '^mongodb(\\+srv)?://', description: 'MongoDB connection string (replica set), when STORE=mongodb' }),
  ),
  KAFKA_BROKERS: Type.Optional(
    Type.String({ pattern: '^[^,\\s]+(,[^,\\s]+)*$', description: 'comma-separated host:port list, when BUS=kafka' }),
  ),
  KAFKA_SESSION_TIMEOUT_MS: Type.Integer({
    minimum: 6000,
    maximum: 300000,
    default: 10000,
    description:
      "Kafka consumer groups' session in ms, when BUS=kafka: a member killed without leaving holds its partitions (and its restart's join) until it ends; heartbeats every third of it",
  }),
  BUS_MAX_MESSAGE_BYTES: Type.Integer({
    minimum: 65536,
    default: 1000000,
    description:
      "most bytes of one record batch the bus sends and of one event with user-sized content (chunk events); with BUS=kafka at most the broker's message.max.bytes and the topics' max.message.bytes",
  }),
  KAFKA_COMPRESSION: Type.Union([Type.Literal('gzip'), Type.Literal('none')], {
    default: 'gzip',
    description: 'record batch compression of published events, when BUS=kafka (gzip is built into the client)',
  }),
  OUTBOX_LAG_ALERT_MS: Type.Integer({
    minimum: 1000,
    default: 60000,
    description:
      'an outbox event unpublished for longer than this (ms), or 5 failed publishes in a row, makes readiness report events: failing and logs one error line with what waits',
  }),
  INTERNAL_TOKEN: Type.String({
    minLength: 16,
    description: 'shared secret that services require on every internal gRPC call (at least 16 characters)',
  }),
  GRPC_HOST: Type.String({ default: '127.0.0.1', description: 'interface the gRPC server binds' }),
  GRPC_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 0, description: 'gRPC port (0 picks a free one)' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    Type.String({ pattern: '^https?://', description: 'OTLP/HTTP collector; telemetry is off when unset' }),
  ),
};

/** Cross-field rule shared by every service that uses the store and bus ports. */
export function checkAdapterSettings(c: { STORE: string; BUS: string; MONGODB_URL?: string; KAFKA_BROKERS?: string }): string[] {
  const problems: string[] = [];
  if (c.STORE === 'mongodb' && !c.MONGODB_URL) problems.push('MONGODB_URL is required when STORE=mongodb');
  if (c.BUS === 'kafka' && !c.KAFKA_BROKERS) problems.push('KAFKA_BROKERS is required when BUS=kafka');
  return problems;
}

/**
 * loadConfig for a process entry point: a wrong or missing value ends the
 * process with exit code 1 and the message naming each variable (not a stack
 * trace that buries it).
 */
export function loadConfigOrExit<T extends TProperties>(
  spec: ConfigSpec<T>,
  processName: string,
  env: Record<string, string | undefined> = process.env,
): Static<TObject<T>> {
  try {
    return loadConfig(spec, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${processName} cannot start. ${err.message}\n`);
    process.exit(1);
  }
}
