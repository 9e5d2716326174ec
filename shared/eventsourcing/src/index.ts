export * from './decider.js';
export * from './projection.js';
export * from './command-bus.js';
export * from './outbox-relay.js';
export * from './consumer.js';
export * from './rebuild.js';
export * from './lease.js';
export { OUTBOX_LAG_METRIC, type RelayStatus, type Backlog } from './relay-health.js';
