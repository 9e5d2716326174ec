export { createSqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { registerForCheckpoints, type CheckpointRegistration } from './checkpointer.js';
export { openSnapshot, type SnapshotReader } from './snapshot.js';
