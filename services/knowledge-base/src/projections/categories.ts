import { errors } from '@kb/platform';
import { DuplicateKeyError, type StoreTransaction } from '@kb/store';
import type { Projection, Stored } from '@kb/eventsourcing';

import { nameKey } from '../domain/names.js';

export const CATEGORIES = 'categories';
export const TOPICS = 'topics';
/** One document per live category name per organization: the uniqueness index. */
export const CATEGORY_NAMES = 'category_names';

export interface CategoryDoc {
  id: string;
  category_id: string;
  org_id: string;
  name: string;
  description?: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** Event position of the creation: a stable creation order, even within one millisecond. */
  seq: number;
}

export interface TopicDoc {
  id: string;
  topic_id: string;
  category_id: string;
  org_id: string;
  name: string;
  description?: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  seq: number;
}

export const categoryNameId = (orgId: string, name: string): string => `${orgId}:${nameKey(name)}`;

async function reserveName(tx: StoreTransaction, orgId: string, name: string, categoryId: string): Promise<void> {
  try {
    await tx.insert(CATEGORY_NAMES, { id: categoryNameId(orgId, name), category_id: categoryId });
  } catch (err) {
    // Two writers that both passed the use case's check (possible on MongoDB) meet here.
    if (err instanceof DuplicateKeyError)
      throw errors.conflict(`A category named "${name}" already exists`, { code: 'category_name_taken' });
    throw err;
  }
}

function applyText<T extends { description?: string }>(doc: T, description: string | null | undefined): T {
  if (description === undefined) return doc;
  const next = { ...doc };
  if (description === null) delete next.description;
  else next.description = description;
  return next;
}

export const categoriesProjection: Projection = {
  name: 'categories',
  collections: [CATEGORIES, TOPICS, CATEGORY_NAMES],
  indexes: [
    { collection: CATEGORIES, fields: ['org_id', 'deleted_at', 'seq'] },
    { collection: TOPICS, fields: ['category_id', 'deleted_at'] },
  ],
  async apply(tx: StoreTransaction, event: Stored): Promise<void> {
    switch (event.type) {
      case 'category.created': {
        const d = event.data;
        await reserveName(tx, d.org_id, d.name, d.category_id);
        const doc: CategoryDoc = {
          id: d.category_id,
          category_id: d.category_id,
          org_id: d.org_id,
          name: d.name,
          created_at: d.at,
          updated_at: d.at,
          deleted_at: null,
          seq: event.position,
        };
        await tx.put(CATEGORIES, applyText(doc, d.description));
        return;
      }
      case 'category.updated': {
        const d = event.data;
        const current = await tx.get<CategoryDoc>(CATEGORIES, d.category_id);
        if (!current) return;
        if (d.name !== undefined && nameKey(d.name) !== nameKey(current.name)) {
          await tx.delete(CATEGORY_NAMES, categoryNameId(current.org_id, current.name));
          await reserveName(tx, current.org_id, d.name, current.category_id);
        }
        const next = applyText({ ...current, name: d.name ?? current.name, updated_at: d.at }, d.description);
        await tx.put(CATEGORIES, next);
        return;
      }
      case 'category.deleted': {
        const d = event.data;
        const current = await tx.get<CategoryDoc>(CATEGORIES, d.category_id);
        if (!current) return;
        await tx.delete(CATEGORY_NAMES, categoryNameId(current.org_id, current.name));
        await tx.put(CATEGORIES, { ...current, deleted_at: d.at, updated_at: d.at });
        return;
      }
      case 'topic.created': {
        const d = event.data;
        const doc: TopicDoc = {
          id: d.topic_id,
          topic_id: d.topic_id,
          category_id: d.category_id,
          org_id: d.org_id,
          name: d.name,
          created_at: d.at,
          updated_at: d.at,
          deleted_at: null,
          seq: event.position,
        };
        await tx.put(TOPICS, applyText(doc, d.description));
        return;
      }
      case 'topic.updated': {
        const d = event.data;
        const current = await tx.get<TopicDoc>(TOPICS, d.topic_id);
        if (!current) return;
        await tx.put(TOPICS, applyText({ ...current, name: d.name ?? current.name, updated_at: d.at }, d.description));
        return;
      }
      case 'topic.deleted': {
        const d = event.data;
        const current = await tx.get<TopicDoc>(TOPICS, d.topic_id);
        if (!current) return;
        await tx.put(TOPICS, { ...current, deleted_at: d.at, updated_at: d.at });
        return;
      }
      default:
        return;
    }
  },
};
