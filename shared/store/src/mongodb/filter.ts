import type { Document, Sort } from 'mongodb';
import type { Query, Where } from '../port.js';

// Same rule as the SQLite adapter: plain top-level names only, so a field can
// never be read as a dotted path or an operator.
const FIELD_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Documents are stored with `_id` = id, so `id` maps to `_id` and uses the primary index. */
export function mongoField(field: string): string {
  if (!FIELD_RE.test(field)) throw new Error(`Invalid document field name: ${field}`);
  return field === 'id' ? '_id' : field;
}

/**
 * Where -> Mongo filter. `{f: null}` already matches null or missing in Mongo,
 * as the port requires; scalars go through `$eq` so a value is never taken for
 * an operator document.
 */
export function toMongoFilter(where: Where | undefined): Document {
  const filter: Document = {};
  for (const [field, value] of Object.entries(where ?? {})) {
    const key = mongoField(field);
    if (value === null) filter[key] = null;
    else if (typeof value === 'object') filter[key] = { $in: value.$in };
    else filter[key] = { $eq: value };
  }
  return filter;
}

/** Sort spec with `_id` as the final tie-breaker, so pages are stable (as in SQLite's `id ASC`). */
export function toMongoSort(sort: Query['sort']): Sort {
  const spec: Record<string, 1 | -1> = {};
  for (const { field, order } of sort ?? []) {
    const key = mongoField(field);
    if (!(key in spec)) spec[key] = order === 'desc' ? -1 : 1;
  }
  if (!('_id' in spec)) spec._id = 1;
  return spec;
}
