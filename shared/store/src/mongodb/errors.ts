import { MongoServerError } from 'mongodb';

const DUPLICATE_KEY = 11000;

/** A duplicate-key error, optionally on one named index (the server names it in the message). */
export function isDuplicateKey(err: unknown, index?: string): err is MongoServerError {
  if (!(err instanceof MongoServerError) || err.code !== DUPLICATE_KEY) return false;
  return index === undefined || err.message.includes(`index: ${index} `);
}
