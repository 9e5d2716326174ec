import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ExtractionError, WORKER_READY, type ExtractionLimits, type Format } from './types.js';

// Source maps off before the extraction libraries load: tsx (which `npm start` runs under) turns
// them on, and Node then reads and keeps the maps the libraries ship, pdf.js's most of all:
// about 90 MB of this thread's heap, which every full GC marks again. Errors from here travel
// to the service as messages, so the maps gave nothing in return.
process.setSourceMapsEnabled(false);
const { extractFile } = await import('./extract.js');

/** Worker-thread entry: extraction runs here so a pathological file cannot stall the service's event loop. */
export type ExtractRequest = {
  id: number;
  filename: string;
  format?: Format;
  limits: ExtractionLimits;
  /** The file's bytes (moved here), or the path of a stored file to read. */
} & ({ bytes: Uint8Array } | { path: string });

export interface WorkerSettings {
  /** Nice value of this thread. */
  nice: number;
}

// Linux keeps a nice value per thread and pid 0 names the calling thread; elsewhere (macOS,
// Windows) the priority is the whole process's, so it is left alone there.
const settings = workerData as WorkerSettings | undefined;
if (settings?.nice && process.platform === 'linux') {
  try {
    setPriority(settings.nice);
  } catch {
    // A sandbox that forbids it: extraction runs at the process's own priority.
  }
}

/**
 * A stored file read here, not by the main thread: a blocking read costs this thread alone
 * (one system call instead of four thread-pool round trips on the main thread for open,
 * fstat, read and close), and the bytes need no copy or transfer.
 */
function readStored(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ExtractionError('The uploaded file is missing from storage', true);
    throw new ExtractionError(`Reading the stored file failed: ${(err as Error).message}`, false);
  }
}

async function extract(request: ExtractRequest) {
  const bytes =
    'bytes' in request ? Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength) : readStored(request.path);
  return extractFile({ bytes, filename: request.filename, ...(request.format && { format: request.format }) }, request.limits);
}

parentPort?.on('message', (request: ExtractRequest) => {
  extract(request).then(
    (result) => parentPort?.postMessage({ id: request.id, ok: true, result }),
    (err: unknown) =>
      parentPort?.postMessage({
        id: request.id,
        ok: false,
        permanent: err instanceof ExtractionError && err.permanent,
        message: err instanceof Error ? err.message : String(err),
      }),
  );
});

parentPort?.postMessage(WORKER_READY);
