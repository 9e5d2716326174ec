import { parentPort } from 'node:worker_threads';
import { extractFile } from './extract.js';
import { ExtractionError, type ExtractionLimits, type Format } from './types.js';

/** Worker-thread entry: extraction runs here so a pathological file cannot stall the service's event loop. */
export interface ExtractRequest {
  id: number;
  bytes: Uint8Array;
  filename: string;
  format?: Format;
  limits: ExtractionLimits;
}

parentPort?.on('message', (request: ExtractRequest) => {
  const input = {
    bytes: Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength),
    filename: request.filename,
    ...(request.format && { format: request.format }),
  };
  extractFile(input, request.limits).then(
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
