import { Type } from '@sinclair/typebox';
import { errors } from '@kb/platform';

/**
 * Input rules every /api/v1 route gets from one place (issue 13 item 5), applied
 * to its schema when the route is registered, so no route can forget one:
 *
 * - a route that declares no query parameters accepts none (unknown ones are 400);
 * - every integer has a minimum and a maximum within a signed 32-bit gRPC field
 *   (int32), so no value is silently wrapped on its way to a service;
 * - sort and order are query parameters of analytics routes only (spec rule 10);
 * - a name (`name`, `*_name`, `title`, `filename`) holding a control character is 400.
 *
 * And every JSON body is bounded in nesting depth (MAX_JSON_DEPTH), open fields included.
 */

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
/** Deepest accepted nesting of arrays and objects in a JSON body. */
export const MAX_JSON_DEPTH = 32;

const NAME_KEY = /^(?:name|title|filename|[a-z_]+_name)$/;
/** Any C0 control character or DEL. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/g;
const NO_CONTROL = { pattern: '^[^\\u0000-\\u001f\\u007f]*$' };

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Bounds every integer and refuses control characters in names, in place (idempotent). */
function harden(schema: unknown, key: string | undefined, seen: Set<unknown>): void {
  if (!isObject(schema) || seen.has(schema)) return;
  seen.add(schema);
  if (schema.type === 'integer') {
    if (typeof schema.minimum !== 'number' || schema.minimum < INT32_MIN)
      schema.minimum = Math.max(INT32_MIN, Number(schema.minimum ?? INT32_MIN));
    if (typeof schema.maximum !== 'number' || schema.maximum > INT32_MAX) schema.maximum = INT32_MAX;
  }
  if (schema.type === 'string' && key !== undefined && NAME_KEY.test(key) && schema.format !== 'binary') {
    if (schema.pattern === undefined) schema.pattern = NO_CONTROL.pattern;
    else if (schema.pattern !== NO_CONTROL.pattern) {
      const all = (schema.allOf as unknown[] | undefined) ?? [];
      if (!all.some((s) => isObject(s) && s.pattern === NO_CONTROL.pattern)) schema.allOf = [...all, { ...NO_CONTROL }];
    }
  }
  if (isObject(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) harden(v, k, seen);
  for (const k of ['items', 'additionalProperties', 'not']) harden(schema[k], k === 'items' ? key : undefined, seen);
  for (const k of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(schema[k])) for (const s of schema[k] as unknown[]) harden(s, key, seen);
  if (isObject(schema.patternProperties)) for (const v of Object.values(schema.patternProperties)) harden(v, undefined, seen);
}

/** Applies the rules to one route's schema (mutating it, as fastify's onRoute allows). */
export function hardenRouteSchema(schema: Schema, url: string): void {
  schema.querystring ??= Type.Object({}, { additionalProperties: false });
  const query = schema.querystring as Schema;
  const props = isObject(query.properties) ? query.properties : {};
  if (!url.startsWith('/api/v1/org/analytics/') && ('sort' in props || 'order' in props))
    throw new Error(`Route ${url} declares sort or order; only analytics routes may (spec rule 10)`);
  if (query.type === 'object') query.additionalProperties = false;
  const seen = new Set<unknown>();
  for (const part of ['querystring', 'params', 'body', 'headers']) harden(schema[part], undefined, seen);
}

/** Nesting depth of a parsed JSON value, without recursion (a deep value cannot overflow the stack). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as object))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** preValidation: a JSON body nested deeper than MAX_JSON_DEPTH is a 400 before anything reads it. */
export async function boundJsonDepth(request: { body?: unknown; headers: Record<string, unknown> }): Promise<void> {
  const type = String(request.headers['content-type'] ?? '');
  if (type.startsWith('multipart/')) return;
  if (typeof request.body === 'object' && request.body !== null && jsonDepthExceeds(request.body, MAX_JSON_DEPTH)) {
    throw errors.validation(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels`, {
      code: 'too_deeply_nested',
      details: { max_depth: MAX_JSON_DEPTH },
    });
  }
}

/** A name field (`name`, `*_name`, `title`, `filename`) holding a control character: refused wherever it arrives. */
export const isBadName = (field: string, value: string): boolean => NAME_KEY.test(field) && new RegExp(CONTROL_CHARS.source).test(value);

/** A name as stored: control characters removed (for names that do not pass through a schema, like uploaded filenames). */
export const stripControlChars = (name: string): string => name.replace(CONTROL_CHARS, '');

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const DAY_MS = 86_400_000;

/** A real calendar day (2024-02-30 is not one: no rolling over). */
function isCalendarDay(y: string, m: string, d: string): boolean {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}

/**
 * The instant a window bound stands for: a date-time as given, a day (YYYY-MM-DD)
 * its first millisecond as `from` and its last as `to`. Undefined when the value
 * is no real date or date-time.
 */
export function windowBound(value: string, side: 'from' | 'to'): number | undefined {
  const day = DAY_RE.exec(value);
  if (day) {
    if (!isCalendarDay(day[1]!, day[2]!, day[3]!)) return undefined;
    const start = Date.parse(`${value}T00:00:00Z`);
    return side === 'from' ? start : start + DAY_MS - 1;
  }
  const dt = DATE_TIME_RE.exec(value);
  if (!dt || !isCalendarDay(dt[1]!, dt[2]!, dt[3]!)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at;
}

/**
 * One rule for every route with a from/to window: each bound is a real date or
 * date-time (400 otherwise), and the window [from, to] (days inclusive) is not
 * reversed: from after to is 400, within one day as across days.
 */
export async function checkWindow(request: { query?: unknown }): Promise<void> {
  const q = (request.query ?? {}) as { from?: unknown; to?: unknown };
  const bounds: Partial<Record<'from' | 'to', number>> = {};
  for (const side of ['from', 'to'] as const) {
    const value = q[side];
    if (typeof value !== 'string') continue;
    const at = windowBound(value, side);
    if (at === undefined)
      throw errors.validation(`querystring.${side} is not a real date (YYYY-MM-DD) or date-time`, {
        code: 'validation_failed',
        details: { field: side, location: 'querystring' },
      });
    bounds[side] = at;
  }
  if (bounds.from !== undefined && bounds.to !== undefined && bounds.from > bounds.to)
    throw errors.validation('querystring.from must not be after to', {
      code: 'validation_failed',
      details: { field: 'from', location: 'querystring' },
    });
}

/** Whether a route's query declares a from/to window. */
export function hasWindow(schema: Record<string, unknown>): boolean {
  const query = schema.querystring;
  return isObject(query) && isObject(query.properties) && 'from' in query.properties && 'to' in query.properties;
}
