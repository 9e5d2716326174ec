import { setFlagsFromString } from 'node:v8';
import { Type, type Static } from '@sinclair/typebox';
import { defineConfig, loadConfigOrExit } from './config.js';

/**
 * V8's heap sizing for a service that turns uploads into text. Left to its defaults, V8 gives
 * every isolate (the main thread and each extraction worker) a young generation of up to
 * 3 x 16 MB and lets the old generation grow to several times its live data before a full
 * collection: during an upload flood the main heap held 66 MB live in 166 to 288 MB, and each
 * extraction worker 17 MB live in 125 MB (bench:upload-memory). Smaller semi-spaces and a
 * slower growth cut the flood's peak RSS by about a quarter, and cost the garbage collector
 * more work: the bare extraction of ordinary documents takes a quarter to a half longer under
 * them (bench:ingest prints both; docs/limits.md). The semi-space flag also overrides the
 * `resourceLimits` a worker asks for: V8 has one flag for every isolate but the first, so a
 * worker that needs another size (the analytics fold thread) is started under the flag it needs
 * (`withSemiSpace`).
 */
export const heapConfigSpec = defineConfig(
  Type.Object({
    HEAP_SEMI_SPACE_MB: Type.Integer({
      minimum: 0,
      maximum: 64,
      default: 4,
      description:
        'largest semi-space of the young generation of every isolate started after boot (extraction workers), in MB; 0: V8 default',
    }),
    HEAP_GROWING_PERCENT: Type.Integer({
      minimum: 0,
      maximum: 300,
      default: 30,
      description: 'how far V8 lets the old generation grow past its live data before the next full collection, in percent; 0: V8 default',
    }),
  }),
);

export type HeapSettings = Static<typeof heapConfigSpec.schema>;

/** The V8 flags for the settings (none for a value of 0, which keeps V8's default). */
export function heapFlags({ HEAP_SEMI_SPACE_MB, HEAP_GROWING_PERCENT }: HeapSettings): string[] {
  return [
    ...(HEAP_SEMI_SPACE_MB > 0 ? [`--max-semi-space-size=${HEAP_SEMI_SPACE_MB}`] : []),
    ...(HEAP_GROWING_PERCENT > 0 ? [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`] : []),
  ];
}

/** The semi-space flag's value in MB from node's command line or NODE_OPTIONS (0: not given, V8's default). */
function commandLineSemiSpaceMb(): number {
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const given = args.map((a) => /^--max[-_]semi[-_]space[-_]size=(\d+)$/.exec(a)?.[1]).filter((v) => v !== undefined);
  return given.length > 0 ? Number(given.at(-1)) : 0;
}

/** What the semi-space flag says now, for the workers started from here on (0: V8's default). */
let semiSpaceFlagMb = commandLineSemiSpaceMb();

/** Apply once, first thing in a process: V8 reads these when it sizes a heap. */
export function applyHeapSettings(processName: string, env: Record<string, string | undefined> = process.env): void {
  const settings = loadConfigOrExit(heapConfigSpec, processName, env);
  for (const flag of heapFlags(settings)) setFlagsFromString(flag);
  if (settings.HEAP_SEMI_SPACE_MB > 0) semiSpaceFlagMb = settings.HEAP_SEMI_SPACE_MB;
}

/** Longest wait for a worker to size its heap; past it the flag goes back and the worker may get it instead. */
const SIZED_START_TIMEOUT_MS = 2000;

/**
 * Starts a worker whose young generation has a largest semi-space of `semiSpaceMb`, whatever the
 * process-wide flag says: the flag is set to that size, the worker started, and the flag set back
 * once the worker has sized its heap. V8 sizes a worker's heap on the worker's own thread after it
 * starts, so this waits for it (a few tens of milliseconds; synchronous, so that no other worker
 * starts under the borrowed size): `start` gets the buffer the worker's first statement sets to 1
 * and notifies on (`startModuleWorker` does both), or none when the flag already says `semiSpaceMb`.
 */
export function withSemiSpace<W>(semiSpaceMb: number, start: (sized: Int32Array | undefined) => W): W {
  // The flag says so already: nothing to borrow or wait for.
  if (semiSpaceMb === semiSpaceFlagMb) return start(undefined);
  const sized = new Int32Array(new SharedArrayBuffer(4));
  setFlagsFromString(`--max-semi-space-size=${semiSpaceMb}`);
  try {
    const worker = start(sized);
    Atomics.wait(sized, 0, 0, SIZED_START_TIMEOUT_MS);
    return worker;
  } finally {
    // 0 leaves the size to V8 again.
    setFlagsFromString(`--max-semi-space-size=${semiSpaceFlagMb}`);
  }
}
