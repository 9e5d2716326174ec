import type { RowWrite } from './row-overlay.js';

/**
 * The fold thread's memory of the rows its last job wrote. The organization's
 * roll-up rows (every prompt's sources and outcomes of a day) are read back by
 * nearly every job; parsing them is much of a job's reading. A row read back
 * unchanged from the last job (its stored text is the text written, whoever
 * wrote it since) and read back the time before as well is parsed ahead, while
 * the thread waits for its next job, and handed out once. Keyed by text, so a
 * transaction that failed or a row written by anyone else only means a parse.
 */
export function hotRows() {
  /** The last job's writes: key -> JSON text. */
  let written = new Map<string, string>();
  /** Keys of the last job's writes that it read back from the job before it. */
  let hot = new Set<string>();
  /** The current job's reads of rows the last job wrote. */
  let readBack = new Set<string>();
  /** Documents parsed ahead from the last job's writes, one use each. */
  let ready = new Map<string, { json: string; doc: unknown }>();

  const keyOf = (collection: string, id: string) => `${collection}\u0000${id}`;

  return {
    /** The document stored as `json`: parsed ahead when it is a hot row the last job wrote, else parsed now. */
    parse<T>(collection: string, id: string, json: string): T {
      const key = keyOf(collection, id);
      if (written.get(key) === json) {
        readBack.add(key);
        const early = ready.get(key);
        if (early) {
          ready.delete(key);
          if (early.json === json) return early.doc as T;
        }
      }
      return JSON.parse(json) as T;
    },
    /** The job ended having written these pieces (whether or not its transaction commits them). */
    wrote(pieces: readonly RowWrite[][]): void {
      written = new Map();
      for (const piece of pieces) for (const [collection, id, json] of piece) if (json !== null) written.set(keyOf(collection, id), json);
      hot = readBack;
      readBack = new Set();
      ready = new Map();
    },
    /** Parses ahead the hot rows of the last job's writes (while idle). */
    prepare(): void {
      for (const key of hot) {
        const json = written.get(key);
        if (json !== undefined && !ready.has(key)) ready.set(key, { json, doc: JSON.parse(json) });
      }
      hot = new Set();
    },
    /** Forgets everything (another store file). */
    clear(): void {
      written = new Map();
      hot = new Set();
      readBack = new Set();
      ready = new Map();
    },
  };
}
