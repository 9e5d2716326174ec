import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { ConfigError, checkAdapterSettings, configFields, defineConfig, loadConfig } from './config.js';

const spec = defineConfig(
  Type.Object({
    PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'HTTP port' }),
    INTERNAL_TOKEN: configFields.INTERNAL_TOKEN,
    STORE: configFields.STORE,
    BUS: configFields.BUS,
    MONGODB_URL: configFields.MONGODB_URL,
    KAFKA_BROKERS: configFields.KAFKA_BROKERS,
  }),
  checkAdapterSettings,
);

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(spec, env);
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
};

describe('loadConfig', () => {
  it('applies defaults and converts types', () => {
    const config = loadConfig(spec, { INTERNAL_TOKEN: 'x'.repeat(16), PORT: '9000' });
    assert.equal(config.PORT, 9000);
    assert.equal(config.STORE, 'sqlite');
  });

  it('names every wrong or missing variable', () => {
    const problems = problemsOf({ PORT: 'eighty', STORE: 'postgres' });
    assert.ok(
      problems.some((p) => p.startsWith('PORT=')),
      problems.join('\n'),
    );
    assert.ok(problems.some((p) => p.startsWith('STORE=')));
    assert.ok(problems.some((p) => p.startsWith('INTERNAL_TOKEN is required')));
  });

  it('lists the accepted values of a setting that takes one of a few', () => {
    const problems = problemsOf({ INTERNAL_TOKEN: 'x'.repeat(16), STORE: 'postgres' });
    assert.ok(
      problems.some((p) => p.startsWith('STORE="postgres" is invalid: expected one of sqlite, mongodb')),
      problems.join('\n'),
    );
  });

  it('treats an empty value as unset', () => {
    assert.equal(loadConfig(spec, { INTERNAL_TOKEN: 'x'.repeat(16), PORT: '' }).PORT, 8080);
  });

  it('checks cross-field rules', () => {
    assert.deepEqual(problemsOf({ INTERNAL_TOKEN: 'x'.repeat(16), STORE: 'mongodb', BUS: 'kafka' }), [
      'MONGODB_URL is required when STORE=mongodb',
      'KAFKA_BROKERS is required when BUS=kafka',
    ]);
    assert.deepEqual(
      problemsOf({ INTERNAL_TOKEN: 'x'.repeat(16), STORE: 'mongodb', MONGODB_URL: 'mongodb://m:27017/?replicaSet=rs0' }),
      [],
    );
  });

  it('rejects out-of-range numbers', () => {
    assert.ok(problemsOf({ INTERNAL_TOKEN: 'x'.repeat(16), PORT: '70000' }).some((p) => p.startsWith('PORT=')));
  });
});
