export * from './context.js';
export * from './status.js';
export * from './proto.js';
export * from './server.js';
export * from './client.js';
export * from './health.js';
export { setInProcessCalls } from './in-process.js';
