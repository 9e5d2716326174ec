import { randomFillSync } from 'node:crypto';

/** Injected so that tests can make ids deterministic. */
export interface IdGenerator {
  uuid(): string;
}

/**
 * Ids for everything the services create (events, streams, documents): UUIDv7
 * (RFC 9562), a 48-bit millisecond timestamp, a 12-bit counter within the
 * millisecond and 62 random bits. Ids made together sort together, so the
 * B-tree indexes they key (events by id, documents by collection and id) take
 * each new id near the last one instead of on a random page: a batch of 1,000
 * appends dirties a few index pages instead of a thousand, and the index pages
 * in use stay in the cache however large the table grows. Ids are never
 * secrets (keys and tokens come from randomBytes); a v7 id shows when it was made,
 * as the resource's created_at does.
 */
export const randomIds: IdGenerator = { uuid: () => uuidV7() };

const ID_BYTES = 10;
const pool = Buffer.alloc(ID_BYTES * 512);
let poolAt = pool.length;
let lastMs = -1;
let counter = 0;

/**
 * A UUIDv7 at `now` (default the clock). Ids of this process increase strictly:
 * within a millisecond the counter counts up from a random start below 1024;
 * when it runs out, or the clock steps back, the timestamp moves on past the
 * last one instead.
 */
export function uuidV7(now: number = Date.now()): string {
  if (poolAt >= pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const random = pool.subarray(poolAt, (poolAt += ID_BYTES));
  if (now > lastMs) {
    lastMs = now;
    counter = random.readUInt16BE(0) & 0x3ff;
  } else if (counter < 0xfff) counter += 1;
  else {
    lastMs += 1;
    counter = random.readUInt16BE(0) & 0x3ff;
  }
  const ms = lastMs.toString(16).padStart(12, '0');
  // Bytes 0-1 seed the counter; the variant (10) and 62 random bits come from bytes 2-9.
  const variant = ((random[2]! & 0x3f) | 0x80).toString(16) + random.toString('hex', 3, 4);
  return `${ms.slice(0, 8)}-${ms.slice(8)}-7${counter.toString(16).padStart(3, '0')}-${variant}-${random.toString('hex', 4, ID_BYTES)}`;
}

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
