export * from './adapters.js';
export * from './event-sourced-service.js';
