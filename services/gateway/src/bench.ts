/** Internals the benchmarks under test/bench drive directly (the same code the service runs). */
import { gatewayProjections } from './service.js';
import { createCreditsService, DEFAULT_EPOCH_SIZE } from './app/credits.js';

export const gatewayBench = { gatewayProjections, createCreditsService, DEFAULT_EPOCH_SIZE };
