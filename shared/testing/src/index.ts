export * from './store-contract.js';
export * from './bus-contract.js';
export * from './docker.js';
export * from './mongo.js';
