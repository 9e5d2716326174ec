export * from './gridfs-blob-store.js';
