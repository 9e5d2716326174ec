import { setFlagsFromString } from 'node:v8';
import { Type, type Static } from '@sinclair/typebox';
import { defineConfig, loadConfigOrExit } from './config.js';

/**
 * V8's heap sizing for a service that turns uploads into text. Left to its default, V8 lets an
 * old generation grow to several times its live data before a full collection: during an upload
 * flood the main heap held 66 MB live in 166 to 288 MB, and each extraction worker 17 MB live in
 * 125 MB (bench:upload-memory). A slower growth cuts the flood's peak RSS, for more full
 * collections (README "Limits").
 *
 * The young generation is sized per thread, not here: a process-wide `--max-semi-space-size`
 * set after boot overrides the `resourceLimits` of every worker started later, so it gave the
 * analytics fold thread a young generation of 12 MB where it asks for 96. Each worker asks for its
 * own (`youngGenerationMb`): the extraction workers a small one (INGEST_WORKER_SEMI_SPACE_MB), the
 * fold thread a large one; the main thread keeps the one its command line gives.
 */
export const heapConfigSpec = defineConfig(
  Type.Object({
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
export function heapFlags({ HEAP_GROWING_PERCENT }: HeapSettings): string[] {
  return HEAP_GROWING_PERCENT > 0 ? [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`] : [];
}

/** Apply once, first thing in a process: every isolate's heap reads them as it grows. */
export function applyHeapSettings(processName: string, env: Record<string, string | undefined> = process.env): void {
  for (const flag of heapFlags(loadConfigOrExit(heapConfigSpec, processName, env))) setFlagsFromString(flag);
}

/**
 * A worker's `resourceLimits.maxYoungGenerationSizeMb` for a largest semi-space of `semiSpaceMb`
 * (what `--max-semi-space-size` sets): V8 sizes the young generation at three semi-spaces (two
 * for the scavenger, one for new large objects).
 */
export const youngGenerationMb = (semiSpaceMb: number): number => 3 * semiSpaceMb;
