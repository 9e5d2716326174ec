import { randomUUID } from 'node:crypto';

/** Injected so that tests can make ids deterministic. */
export interface IdGenerator {
  uuid(): string;
}

export const randomIds: IdGenerator = { uuid: () => randomUUID() };

/** Deterministic ids for tests: uuid-shaped, counting up. */
export function sequentialIds(prefix = '00000000'): IdGenerator {
  let n = 0;
  return {
    uuid: () => {
      n += 1;
      return `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
    },
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);
