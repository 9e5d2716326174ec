/**
 * The BlobStore port: original files, kept as uploaded. Keys are chosen by the
 * caller (e.g. `<org_id>/<version_id>`); a key is written once and read many
 * times. Embedded: files under DATA_DIR; distributed: MongoDB GridFS.
 */
export interface BlobInfo {
  key: string;
  size_bytes: number;
}

export interface BlobStore {
  /** Store bytes under key, replacing anything stored under it before. Durable when it resolves. */
  put(key: string, bytes: Uint8Array): Promise<BlobInfo>;
  /**
   * Streams bytes under key as they come (an upload arriving in pieces), holding
   * no more than one piece in memory; replaces anything stored under it before.
   * Durable when it resolves; when the source throws, nothing is stored under key.
   */
  putStream(key: string, source: AsyncIterable<Uint8Array>): Promise<BlobInfo>;
  /** The bytes, or undefined when nothing is stored under key. */
  get(key: string): Promise<Buffer | undefined>;
  /** Returns whether something was removed. */
  delete(key: string): Promise<boolean>;
  exists(key: string): Promise<boolean>;
  /**
   * Where the bytes under key lie on this machine's disk, for stores that keep them in
   * files (absent on others): a worker thread can read them itself, and the caller's
   * thread neither reads nor copies them. The path may name nothing (a missing blob).
   */
  localPath?(key: string): string;
  close(): Promise<void>;
}

/** Keys are path-like but must never escape the store: letters, digits, `-_.` segments joined by `/`. */
const KEY_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;

export function checkBlobKey(key: string): void {
  if (!KEY_RE.test(key) || key.length > 512 || key.split('/').some((s) => s === '..' || s === '.')) {
    throw new Error(`Invalid blob key ${JSON.stringify(key)}`);
  }
}
