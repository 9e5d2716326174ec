import type { Decider, DecidedEvent } from '@kb/eventsourcing';
import type { EventsNamed, TagsSet } from '@kb/events';

/** The tag set of one taggable thing (a KB node, a content item; later prompts and search queries). */
export type TargetType = TagsSet['target_type'];
export type TagOrigin = TagsSet['origin'];

export interface TaggingState {
  tag_ids: string[];
}

export type TaggingCommand =
  /** Replace the set (a caller's PATCH). */
  | { type: 'set'; org_id: string; target_type: TargetType; target_id: string; tag_ids: string[]; origin: TagOrigin; at: string }
  /** Add to the set (intake tags, automatic rules). */
  | { type: 'add'; org_id: string; target_type: TargetType; target_id: string; tag_ids: string[]; origin: TagOrigin; at: string };

export const taggingStream = (type: TargetType, id: string): string => `tagging-${type}-${id}`;

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));
const unique = (ids: string[]) => [...new Set(ids)];

function decide(command: TaggingCommand, state: TaggingState): DecidedEvent[] {
  const next = command.type === 'set' ? unique(command.tag_ids) : unique([...state.tag_ids, ...command.tag_ids]);
  if (sameSet(next, state.tag_ids)) return [];
  return [
    {
      type: 'tags.set',
      data: {
        org_id: command.org_id,
        target_type: command.target_type,
        target_id: command.target_id,
        tag_ids: next,
        origin: command.origin,
        at: command.at,
      },
    },
  ];
}

export const taggingDecider: Decider<TaggingCommand, TaggingState, EventsNamed<'tags'>> = {
  initialState: () => ({ tag_ids: [] }),
  evolve: (state, event) => (event.type === 'tags.set' ? { tag_ids: event.data.tag_ids } : state),
  decide,
};
