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
 * them (bench:ingest prints both; README "Limits"). The semi-space flag also overrides the
 * `resourceLimits` a worker asks for (the analytics fold thread's 96 MB young generation): V8 has
 * one flag for every isolate but the first.
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

/** Apply once, first thing in a process: V8 reads these when it sizes a heap. */
export function applyHeapSettings(processName: string, env: Record<string, string | undefined> = process.env): void {
  for (const flag of heapFlags(loadConfigOrExit(heapConfigSpec, processName, env))) setFlagsFromString(flag);
}
