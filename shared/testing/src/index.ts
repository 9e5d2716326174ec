export * from './store-contract.js';
