import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

const base: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };

interface Compilers {
  strict: Ajv;
  coercing: Ajv;
  /** Shared schemas added so far, by $id, as JSON (to tell a clash from a repeat). */
  added: Map<string, string>;
  /** Validators by part and schema JSON: routes repeat the same params and queries. */
  compiled: Map<string, ValidateFunction>;
}

function newCompilers(): Compilers {
  return {
    strict: addFormats(new Ajv({ ...base, coerceTypes: false })),
    coercing: addFormats(new Ajv({ ...base, coerceTypes: 'array' })),
    added: new Map(),
    compiled: new Map(),
  };
}

/**
 * Query strings and path parameters arrive as text, so they are coerced to the
 * schema's types; JSON bodies are not: `{"name": 42}` or `{"description": null}`
 * keep their JSON types and are judged as sent. Unknown keys are never dropped
 * silently: a closed object rejects them.
 *
 * Fastify asks for a compiler once per encapsulated context, each time with
 * every shared schema of that context. One pair of Ajv instances serves them
 * all (a shared schema is added once) and identical schemas compile once, so
 * the gateway's start does not grow with routes x contexts x shared schemas.
 * A context whose schema clashes with one already added (same $id, other
 * content) gets compilers of its own.
 */
export function createValidatorCompiler(): (externalSchemas?: unknown) => FastifySchemaCompiler<FastifySchema> {
  const shared = newCompilers();
  return (externalSchemas) => {
    const schemas = Object.values((externalSchemas ?? {}) as Record<string, { $id?: string }>);
    const clash = schemas.some((s) => s.$id !== undefined && shared.added.has(s.$id) && shared.added.get(s.$id) !== JSON.stringify(s));
    const compilers = clash ? newCompilers() : shared;
    for (const schema of schemas) {
      const json = JSON.stringify(schema);
      if (schema.$id !== undefined && compilers.added.get(schema.$id) === json) continue;
      compilers.strict.addSchema(schema);
      compilers.coercing.addSchema(schema);
      if (schema.$id !== undefined) compilers.added.set(schema.$id, json);
    }
    return ({ schema, httpPart }) => {
      const body = httpPart === 'body';
      const key = `${body ? 'b' : 'c'}:${JSON.stringify(schema)}`;
      let validate = compilers.compiled.get(key);
      if (!validate) {
        validate = (body ? compilers.strict : compilers.coercing).compile(schema as object);
        compilers.compiled.set(key, validate);
      }
      return validate as ReturnType<FastifySchemaCompiler<FastifySchema>>;
    };
  };
}

/** A compiler for one context (tests and one-off forms); the app shares one through createValidatorCompiler. */
export function buildValidatorFactory(externalSchemas?: unknown): FastifySchemaCompiler<FastifySchema> {
  return createValidatorCompiler()(externalSchemas);
}
