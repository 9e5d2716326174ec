import type { DocLike } from './port.js';

/** The document a putJson call describes; its id must be the one named (adapters that parse check it). */
export function docOfJson(id: string, json: string): DocLike {
  const doc = JSON.parse(json) as DocLike;
  if (doc === null || typeof doc !== 'object' || doc.id !== id) throw new Error(`putJson: the document's id is not ${id}`);
  return doc;
}
