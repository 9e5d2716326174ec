export * from './errors.js';
export * from './ids.js';
export * from './clock.js';
export * from './logger.js';
export * from './config.js';
export * from './telemetry.js';
export * from './tracing.js';
export * from './shutdown.js';
