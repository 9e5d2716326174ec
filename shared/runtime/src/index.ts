export * from './adapters.js';
export * from './event-sourced-service.js';
export * from './health.js';
export * from './service-kit.js';
