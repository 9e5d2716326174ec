export * from './port.js';
export * from './heartbeat.js';
