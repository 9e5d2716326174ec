export { createSqliteEventBus, type SqliteEventBusOptions } from './sqlite-event-bus.js';
