import { createHash } from 'node:crypto';
import { errors } from '@kb/platform';
import type { Decider, DecidedEvent, Stored } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';

/**
 * One knowledge-base node (spec 2.6): a folder or a content node. The stream
 * decides what one node can decide alone (it exists, belongs to the org, is not
 * the root when moved or deleted); what spans nodes (the parent is a live
 * folder, a move makes no cycle, a folder is empty) the tree use case checks
 * against the node read model inside the same transaction.
 */
export type NodeType = 'folder' | 'content';

export interface KbNodeState {
  status: 'new' | 'live' | 'deleted';
  kb_node_id: string;
  org_id: string;
  type: NodeType;
  parent_id: string | null;
  name: string;
  content_id?: string;
}

export type KbNodeCommand =
  | {
      type: 'create';
      kb_node_id: string;
      org_id: string;
      node_type: NodeType;
      parent_id: string | null;
      name: string;
      content_id?: string;
      at: string;
    }
  | { type: 'rename'; org_id: string; name: string; at: string }
  | { type: 'move'; org_id: string; parent_id: string; at: string }
  | { type: 'delete'; org_id: string; at: string };

export const NODE_NAME_MAX = 255;
export const kbNodeStream = (nodeId: string): string => `kb-node-${nodeId}`;

/**
 * The root folder's id is derived from the organization's id, so every caller
 * (a tree request, the content consumer) names the same root without a lookup,
 * and two first calls racing meet on one stream (optimistic concurrency).
 */
export function rootIdOf(orgId: string): string {
  const h = createHash('sha256').update(`kb-root:${orgId}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const ROOT_NAME = 'Root';

/** Node names are stored trimmed, 1 to 255 characters. */
export function cleanNodeName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > NODE_NAME_MAX) {
    throw errors.validation(`name must be 1 to ${NODE_NAME_MAX} characters`, { code: 'invalid_name', details: { field: 'name' } });
  }
  return name;
}

/** Content titles can be longer than a node name; the node shows them cut to fit. */
export const nodeNameFromTitle = (title: string): string => {
  const t = title.trim() || 'Untitled Content';
  return t.length > NODE_NAME_MAX ? t.slice(0, NODE_NAME_MAX) : t;
};

const initialState = (): KbNodeState => ({ status: 'new', kb_node_id: '', org_id: '', type: 'folder', parent_id: null, name: '' });

function evolve(state: KbNodeState, event: Stored<EventsNamed<'kb_node'>>): KbNodeState {
  switch (event.type) {
    case 'kb_node.created': {
      const d = event.data;
      return {
        status: 'live',
        kb_node_id: d.kb_node_id,
        org_id: d.org_id,
        type: d.type,
        parent_id: d.parent_id,
        name: d.name,
        ...(d.content_id !== undefined && { content_id: d.content_id }),
      };
    }
    case 'kb_node.renamed':
      return { ...state, name: event.data.name };
    case 'kb_node.moved':
      return { ...state, parent_id: event.data.parent_id };
    case 'kb_node.deleted':
      return { ...state, status: 'deleted' };
    default:
      return state;
  }
}

/** Another organization's node is indistinguishable from a missing one. */
function requireLive(state: KbNodeState, orgId: string): void {
  if (state.status !== 'live' || state.org_id !== orgId) throw errors.notFound('Knowledge base node');
}

function decide(command: KbNodeCommand, state: KbNodeState): DecidedEvent[] {
  switch (command.type) {
    case 'create': {
      if (state.status !== 'new') throw errors.conflict('Knowledge base node already exists', { code: 'kb_node_exists' });
      if (command.node_type === 'content' && command.content_id === undefined) throw new Error('A content node needs its content_id');
      if (command.parent_id === null && command.node_type !== 'folder') throw new Error('Only the root folder has no parent');
      const data: Record<string, unknown> = {
        kb_node_id: command.kb_node_id,
        org_id: command.org_id,
        type: command.node_type,
        parent_id: command.parent_id,
        name: command.node_type === 'folder' ? cleanNodeName(command.name) : nodeNameFromTitle(command.name),
        at: command.at,
      };
      if (command.content_id !== undefined) data.content_id = command.content_id;
      return [{ type: 'kb_node.created', data }];
    }
    case 'rename': {
      requireLive(state, command.org_id);
      const name = state.type === 'folder' ? cleanNodeName(command.name) : nodeNameFromTitle(command.name);
      if (name === state.name) return [];
      return [{ type: 'kb_node.renamed', data: { kb_node_id: state.kb_node_id, org_id: state.org_id, name, at: command.at } }];
    }
    case 'move': {
      requireLive(state, command.org_id);
      if (state.parent_id === null) throw errors.conflict('The root folder cannot be moved', { code: 'root_immovable' });
      if (command.parent_id === state.kb_node_id) {
        throw errors.conflict('A folder cannot be moved into itself', { code: 'move_cycle' });
      }
      if (command.parent_id === state.parent_id) return [];
      return [
        {
          type: 'kb_node.moved',
          data: {
            kb_node_id: state.kb_node_id,
            org_id: state.org_id,
            parent_id: command.parent_id,
            from_parent_id: state.parent_id,
            at: command.at,
          },
        },
      ];
    }
    case 'delete': {
      requireLive(state, command.org_id);
      if (state.parent_id === null) throw errors.conflict('The root folder cannot be deleted', { code: 'root_undeletable' });
      const data: Record<string, unknown> = { kb_node_id: state.kb_node_id, org_id: state.org_id, type: state.type, at: command.at };
      if (state.content_id !== undefined) data.content_id = state.content_id;
      return [{ type: 'kb_node.deleted', data }];
    }
    default: {
      const never: never = command;
      throw new Error(`Unknown command ${JSON.stringify(never)}`);
    }
  }
}

export const kbNodeDecider: Decider<KbNodeCommand, KbNodeState, EventsNamed<'kb_node'>> = { initialState, evolve, decide };
