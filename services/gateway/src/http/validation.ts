import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

const base: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };

/**
 * Query strings and path parameters arrive as text, so they are coerced to the
 * schema's types; JSON bodies are not: `{"name": 42}` or `{"description": null}`
 * keep their JSON types and are judged as sent. Unknown keys are never dropped
 * silently: a closed object rejects them.
 */
export function buildValidatorFactory(externalSchemas?: unknown): FastifySchemaCompiler<FastifySchema> {
  const strict = addFormats(new Ajv({ ...base, coerceTypes: false }));
  const coercing = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));
  for (const schema of Object.values((externalSchemas ?? {}) as Record<string, object>)) {
    strict.addSchema(schema);
    coercing.addSchema(schema);
  }
  return ({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<FastifySchema>>;
}
