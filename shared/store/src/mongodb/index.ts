export { createMongoStore, type MongoStoreOptions } from './mongo-store.js';
