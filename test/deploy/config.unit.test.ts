import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { OptionalKind, type TProperties, type TSchema } from '@sinclair/typebox';
import { ConfigError, loadConfig, type ConfigSpec } from '@kb/platform';
import { gatewayConfigSpec } from '@kb/gateway';
import { knowledgeBaseConfigSpec } from '@kb/knowledge-base';
import { ingestConfigSpec } from '@kb/ingest';
import { analyticsConfigSpec } from '@kb/analytics';
import { mcpConfigSpec } from '@kb/mcp';
import { generationConfigSpec } from '@kb/generation';
import { publishingConfigSpec } from '@kb/publishing';

/**
 * Every service's configuration stops the start on a wrong or missing value with
 * a message that names the variable, for every variable that can be wrong.
 * (The processes themselves are checked in test/e2e/process.e2e.test.ts.)
 */

const TOKEN = 'a-internal-token-of-some-length';
const services: Record<string, { spec: ConfigSpec<TProperties>; base: Record<string, string> }> = {
  gateway: {
    spec: gatewayConfigSpec as unknown as ConfigSpec<TProperties>,
    base: {
      INTERNAL_TOKEN: TOKEN,
      KNOWLEDGE_BASE_GRPC: 'kb:50051',
      INGEST_GRPC: 'ingest:50051',
      ANALYTICS_GRPC: 'analytics:50051',
      GENERATION_GRPC: 'generation:50051',
      PUBLISHING_GRPC: 'publishing:50051',
    },
  },
  'knowledge-base': { spec: knowledgeBaseConfigSpec as unknown as ConfigSpec<TProperties>, base: { INTERNAL_TOKEN: TOKEN } },
  ingest: { spec: ingestConfigSpec as unknown as ConfigSpec<TProperties>, base: { INTERNAL_TOKEN: TOKEN } },
  analytics: { spec: analyticsConfigSpec as unknown as ConfigSpec<TProperties>, base: { INTERNAL_TOKEN: TOKEN } },
  mcp: { spec: mcpConfigSpec as unknown as ConfigSpec<TProperties>, base: { INTERNAL_TOKEN: TOKEN, GATEWAY_URL: 'http://gateway:8080' } },
  generation: {
    spec: generationConfigSpec as unknown as ConfigSpec<TProperties>,
    base: { INTERNAL_TOKEN: TOKEN, KNOWLEDGE_BASE_GRPC: 'kb:50051' },
  },
  publishing: {
    spec: publishingConfigSpec as unknown as ConfigSpec<TProperties>,
    base: { INTERNAL_TOKEN: TOKEN, PUBLISHING_SECRET_KEY: 'a-publishing-secret-key', ANALYTICS_GRPC: 'analytics:50051' },
  },
};

/** Values that break at least one kind of constraint: numbers, enums, patterns, lengths. */
const CANDIDATES = ['not-a-number', ' has spaces @@ ', 'x', '-1', '99999999999'];

/** A value the variable's schema rejects, or undefined when it accepts any text. */
function wrongValueFor(schema: TSchema): string | undefined {
  return CANDIDATES.find((candidate) => !Value.Check(schema, Value.Convert(schema, candidate)));
}

function problemsOf(spec: ConfigSpec<TProperties>, env: Record<string, string>): string {
  try {
    loadConfig(spec, env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  return '';
}

for (const [name, { spec, base }] of Object.entries(services)) {
  describe(`${name} configuration`, () => {
    it('starts from the minimal environment', () => {
      assert.equal(problemsOf(spec, base), '');
    });

    it('names each required variable that is missing or empty', () => {
      const required = Object.entries(spec.schema.properties)
        .filter(([, schema]) => !(OptionalKind in schema) && !('default' in schema))
        .map(([key]) => key);
      assert.ok(required.includes('INTERNAL_TOKEN'));
      for (const key of required) {
        const { [key]: _dropped, ...without } = base;
        assert.match(problemsOf(spec, without), new RegExp(`\\b${key} is required`), key);
        assert.match(problemsOf(spec, { ...base, [key]: '' }), new RegExp(`\\b${key} is required`), `${key} empty`);
      }
    });

    it('names each variable given a wrong value', () => {
      let checked = 0;
      for (const [key, schema] of Object.entries(spec.schema.properties)) {
        const wrong = wrongValueFor(schema);
        if (wrong === undefined) continue; // free text (a host name, a model name)
        checked++;
        const message = problemsOf(spec, { ...base, [key]: wrong });
        assert.match(message, new RegExp(`\\b${key}=${JSON.stringify(wrong).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is invalid`), key);
      }
      assert.ok(checked >= 10, `${checked} variables checked`);
    });

    it('names the missing address of the adapter it picks', (t) => {
      if (!('STORE' in spec.schema.properties)) return t.skip('no store or bus (mcp)');
      assert.match(problemsOf(spec, { ...base, STORE: 'mongodb' }), /MONGODB_URL is required when STORE=mongodb/);
      assert.match(problemsOf(spec, { ...base, BUS: 'kafka' }), /KAFKA_BROKERS is required when BUS=kafka/);
    });
  });
}
