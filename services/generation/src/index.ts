export { startGeneration, SERVICE_NAME, type RunningService } from './service.js';
export { generationConfigSpec, type GenerationConfig } from './config.js';
export { generationProjections } from './projections/index.js';
export { createLexicalFactChecker } from './checker.js';
