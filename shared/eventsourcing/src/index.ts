export * from './decider.js';
export * from './projection.js';
export * from './command-bus.js';
export * from './outbox-relay.js';
export * from './consumer.js';
export * from './rebuild.js';
export * from './lease.js';
