import type { StoreTransaction } from '@kb/store';
import type { Projection, Stored } from '@kb/eventsourcing';

import type { NodeType } from '../domain/kb-node.js';

/** Live nodes of every organization's tree; a deleted node's document is removed. */
export const KB_NODES = 'kb_nodes';

export interface KbNodeDoc {
  id: string;
  kb_node_id: string;
  org_id: string;
  type: NodeType;
  parent_id: string | null;
  name: string;
  content_id?: string;
  created_at: string;
  updated_at: string;
  /** Event position of the creation: a stable creation order. */
  seq: number;
}

export const kbTreeProjection: Projection = {
  name: 'kb-tree',
  collections: [KB_NODES],
  indexes: [
    { collection: KB_NODES, fields: ['parent_id', 'type', 'seq'] },
    { collection: KB_NODES, fields: ['content_id'] },
  ],
  async apply(tx: StoreTransaction, event: Stored): Promise<void> {
    switch (event.type) {
      case 'kb_node.created': {
        const d = event.data;
        const doc: KbNodeDoc = {
          id: d.kb_node_id,
          kb_node_id: d.kb_node_id,
          org_id: d.org_id,
          type: d.type,
          parent_id: d.parent_id,
          name: d.name,
          ...(d.content_id !== undefined && { content_id: d.content_id }),
          created_at: d.at,
          updated_at: d.at,
          seq: event.position,
        };
        await tx.put(KB_NODES, doc);
        return;
      }
      case 'kb_node.renamed': {
        const d = event.data;
        const current = await tx.get<KbNodeDoc>(KB_NODES, d.kb_node_id);
        if (current) await tx.put(KB_NODES, { ...current, name: d.name, updated_at: d.at });
        return;
      }
      case 'kb_node.moved': {
        const d = event.data;
        const current = await tx.get<KbNodeDoc>(KB_NODES, d.kb_node_id);
        if (current) await tx.put(KB_NODES, { ...current, parent_id: d.parent_id, updated_at: d.at });
        return;
      }
      case 'kb_node.deleted':
        await tx.delete(KB_NODES, event.data.kb_node_id);
        return;
      default:
        return;
    }
  },
};
