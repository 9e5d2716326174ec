export * from './port.js';
export { matchesWhere, compareBy } from './query.js';
