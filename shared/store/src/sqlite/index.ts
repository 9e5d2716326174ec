export { createSqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { registerForCheckpoints, type CheckpointRegistration } from './checkpointer.js';
export { openSnapshot, snapshotSource, type SnapshotReader, type SnapshotSource } from './snapshot.js';
