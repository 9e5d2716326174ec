/** JSON Schema as fastify holds it (TypeBox schemas are plain JSON Schema). */
export type JsonSchema = Record<string, unknown>;

/** A route's request schemas (params, querystring, body), each with its $refs inlined. */
export interface RouteRequestSchema {
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  /** The success answer's schema (the route's first 2xx response) and its status. */
  response?: JsonSchema;
  responseStatus?: number;
}

/** Inlines `$ref`s to schemas registered by id (fastify's addSchema), recursively; a cycle is left as an open object. */
export function inlineRefs(schema: unknown, registry: Record<string, unknown>, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inlineRefs(s, registry, seen));
  if (!schema || typeof schema !== 'object') return schema;
  const node = schema as JsonSchema;
  if (typeof node.$ref === 'string') {
    const id = node.$ref.replace(/#$/, '');
    const target = registry[id];
    if (!target || seen.includes(id)) return { type: 'object' };
    return inlineRefs(target, registry, [...seen, id]);
  }
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) if (k !== '$id') out[k] = inlineRefs(v, registry, seen);
  return out;
}

/** The request part of a route's schema, ready to publish. */
export function requestSchemaOf(schema: unknown, registry: Record<string, unknown>): RouteRequestSchema {
  const s = (schema ?? {}) as Record<string, unknown>;
  const out: RouteRequestSchema = {};
  for (const part of ['params', 'querystring', 'body'] as const)
    if (s[part] && typeof s[part] === 'object') out[part] = inlineRefs(s[part], registry) as JsonSchema;
  const responses = (s.response ?? {}) as Record<string, unknown>;
  const success = Object.keys(responses)
    .filter((k) => /^2\d\d$/.test(k))
    .sort()[0];
  if (success !== undefined) {
    out.responseStatus = Number(success);
    const response = responses[success];
    if (response && typeof response === 'object') out.response = inlineRefs(response, registry) as JsonSchema;
  }
  return out;
}

/**
 * One object schema for a tool's arguments: the route's path parameters, query
 * and body properties side by side (no route reuses a name across them).
 */
export function toolInputSchema(route: RouteRequestSchema): JsonSchema & { type: 'object' } {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  for (const part of [route.params, route.querystring, route.body]) {
    if (!part || part.type !== 'object') continue;
    Object.assign(properties, part.properties ?? {});
    for (const r of (part.required as string[] | undefined) ?? []) {
      // A query default fills a missing value on REST; the tool argument is optional too.
      const prop = (part.properties as Record<string, JsonSchema> | undefined)?.[r];
      if (!(prop && 'default' in prop)) required.add(r);
    }
  }
  return { type: 'object', properties, ...(required.size > 0 && { required: [...required] }) };
}

/** What a successful call of a tool returns as structured content: the object REST answers, a list as { items }, nothing as { ok }. */
export function toolSuccessSchema(route: RouteRequestSchema, pick?: readonly string[]): JsonSchema & { type: 'object' } {
  const response = route.response;
  if (route.responseStatus === 204 || !response || response.type === 'null')
    return { type: 'object', properties: { ok: { type: 'boolean', const: true } }, required: ['ok'] };
  if (response.type === 'array') return { type: 'object', properties: { items: response }, required: ['items'] };
  if (pick) {
    const properties = (response.properties ?? {}) as Record<string, unknown>;
    const required = ((response.required as string[] | undefined) ?? []).filter((r) => pick.includes(r));
    const picked = Object.fromEntries(pick.map((k) => [k, properties[k] ?? {}]));
    return { type: 'object', properties: picked, ...(required.length > 0 && { required }) };
  }
  return { ...response, type: 'object' };
}
