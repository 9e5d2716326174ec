export * from './store-contract.js';
export * from './bus-contract.js';
export * from './docker.js';
export * from './mongo.js';
export * from './blob-contract.js';
export * from './search-contract.js';
export * from './skip.js';
export * from './wait.js';
