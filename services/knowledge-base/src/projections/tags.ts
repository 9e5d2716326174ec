import { errors } from '@kb/platform';
import { DuplicateKeyError, type StoreTransaction } from '@kb/store';
import type { Projection, Stored } from '@kb/eventsourcing';
import type { TagsSet } from '@kb/events';
import { nameKey } from '../domain/names.js';
import type { RuleConditions } from '../domain/tag-rule.js';

export const TAGS = 'tags';
/** One document per live tag name per organization: the uniqueness index. */
export const TAG_NAMES = 'tag_names';
/** The current tag set of each tagged thing, id `${target_type}:${target_id}`. */
export const TAG_ASSIGNMENTS = 'tag_assignments';
export const TAG_RULES = 'tag_rules';

export interface TagDoc {
  id: string;
  tag_id: string;
  org_id: string;
  name: string;
  color?: string;
  created_at: string;
  updated_at: string;
  seq: number;
}

export interface TagAssignmentDoc {
  id: string;
  org_id: string;
  target_type: TagsSet['target_type'];
  target_id: string;
  tag_ids: string[];
  updated_at: string;
}

export interface TagRuleDoc extends RuleConditions {
  id: string;
  rule_id: string;
  org_id: string;
  tag_id: string;
  created_at: string;
  seq: number;
}

export const tagNameId = (orgId: string, name: string): string => `${orgId}:${nameKey(name)}`;
export const assignmentId = (type: string, id: string): string => `${type}:${id}`;

async function reserveName(tx: StoreTransaction, orgId: string, name: string, tagId: string): Promise<void> {
  try {
    await tx.insert(TAG_NAMES, { id: tagNameId(orgId, name), tag_id: tagId });
  } catch (err) {
    if (err instanceof DuplicateKeyError) throw errors.conflict(`A tag named "${name}" already exists`, { code: 'tag_name_taken' });
    throw err;
  }
}

export const tagsProjection: Projection = {
  name: 'tags',
  collections: [TAGS, TAG_NAMES, TAG_ASSIGNMENTS, TAG_RULES],
  indexes: [
    { collection: TAGS, fields: ['org_id', 'seq'] },
    { collection: TAG_RULES, fields: ['org_id', 'seq'] },
  ],
  async apply(tx: StoreTransaction, event: Stored): Promise<void> {
    switch (event.type) {
      case 'tag.created': {
        const d = event.data;
        await reserveName(tx, d.org_id, d.name, d.tag_id);
        const doc: TagDoc = {
          id: d.tag_id,
          tag_id: d.tag_id,
          org_id: d.org_id,
          name: d.name,
          ...(d.color !== undefined && { color: d.color }),
          created_at: d.at,
          updated_at: d.at,
          seq: event.position,
        };
        await tx.put(TAGS, doc);
        return;
      }
      case 'tag.updated': {
        const d = event.data;
        const current = await tx.get<TagDoc>(TAGS, d.tag_id);
        if (!current) return;
        if (d.name !== undefined && nameKey(d.name) !== nameKey(current.name)) {
          await tx.delete(TAG_NAMES, tagNameId(current.org_id, current.name));
          await reserveName(tx, current.org_id, d.name, current.tag_id);
        }
        const next: TagDoc = { ...current, name: d.name ?? current.name, updated_at: d.at };
        if (d.color === null) delete next.color;
        else if (d.color !== undefined) next.color = d.color;
        await tx.put(TAGS, next);
        return;
      }
      case 'tag.deleted': {
        const id = event.data.tag_id;
        const current = await tx.get<TagDoc>(TAGS, id);
        if (!current) return;
        await tx.delete(TAG_NAMES, tagNameId(current.org_id, current.name));
        // Assignments keep the id; readers drop ids of deleted tags.
        await tx.delete(TAGS, id);
        return;
      }
      case 'tags.set': {
        const d = event.data;
        const doc: TagAssignmentDoc = {
          id: assignmentId(d.target_type, d.target_id),
          org_id: d.org_id,
          target_type: d.target_type,
          target_id: d.target_id,
          tag_ids: d.tag_ids,
          updated_at: d.at,
        };
        await tx.put(TAG_ASSIGNMENTS, doc);
        return;
      }
      case 'tag_rule.created': {
        const d = event.data;
        const doc: TagRuleDoc = {
          id: d.rule_id,
          rule_id: d.rule_id,
          org_id: d.org_id,
          tag_id: d.tag_id,
          ...(d.folder_id !== undefined && { folder_id: d.folder_id }),
          ...(d.format !== undefined && { format: d.format }),
          ...(d.source_kind !== undefined && { source_kind: d.source_kind }),
          created_at: d.at,
          seq: event.position,
        };
        await tx.put(TAG_RULES, doc);
        return;
      }
      case 'tag_rule.deleted':
        await tx.delete(TAG_RULES, event.data.rule_id);
        return;
      default:
        return;
    }
  },
};
