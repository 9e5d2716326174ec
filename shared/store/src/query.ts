import type { DocLike, Query, Where } from './port.js';

/** Reference semantics of Where, shared by in-memory filtering and the contract suite. */
export function matchesWhere(doc: Record<string, unknown>, where: Where | undefined): boolean {
  if (!where) return true;
  for (const [field, filter] of Object.entries(where)) {
    const value = doc[field];
    if (filter === null) {
      if (value !== null && value !== undefined) return false;
    } else if (typeof filter === 'object') {
      if (!filter.$in.some((v) => v === value)) return false;
    } else if (value !== filter) {
      return false;
    }
  }
  return true;
}

export function compareBy(sort: NonNullable<Query['sort']>) {
  return (a: DocLike, b: DocLike): number => {
    for (const { field, order } of sort) {
      const av = (a as unknown as Record<string, unknown>)[field] as string | number | undefined;
      const bv = (b as unknown as Record<string, unknown>)[field] as string | number | undefined;
      if (av === bv) continue;
      if (av === undefined || av === null) return order === 'asc' ? -1 : 1;
      if (bv === undefined || bv === null) return order === 'asc' ? 1 : -1;
      const c = av < bv ? -1 : 1;
      return order === 'asc' ? c : -c;
    }
    return 0;
  };
}
