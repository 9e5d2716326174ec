export * from './contract.js';
export * from './redis-server.js';
