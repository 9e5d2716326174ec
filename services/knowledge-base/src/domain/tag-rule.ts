import { errors } from '@kb/platform';
import type { Decider, DecidedEvent } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';

/**
 * Automatic tag rules: "content that matches every condition of the rule gets
 * its tag". Conditions: folder_id (the content node is in that folder's
 * subtree), format (the file format, e.g. pdf), source_kind (raw, file, url).
 * Rules run on raw content when it is created and on files when their
 * extraction finishes.
 */
export interface RuleConditions {
  folder_id?: string;
  format?: string;
  source_kind?: 'raw' | 'file' | 'url';
}

export interface ContentFacts {
  /** The content node's folder followed by its ancestors. */
  folder_chain: string[];
  format?: string;
  source_kind: 'raw' | 'file' | 'url';
}

export function ruleMatches(rule: RuleConditions, facts: ContentFacts): boolean {
  if (rule.folder_id !== undefined && !facts.folder_chain.includes(rule.folder_id)) return false;
  if (rule.format !== undefined && rule.format !== facts.format) return false;
  if (rule.source_kind !== undefined && rule.source_kind !== facts.source_kind) return false;
  return true;
}

export interface TagRuleState {
  status: 'new' | 'live' | 'deleted';
  org_id: string;
}

export type TagRuleCommand =
  | ({ type: 'create'; rule_id: string; org_id: string; tag_id: string; at: string } & RuleConditions)
  | { type: 'delete'; org_id: string; rule_id: string; at: string };

export const tagRuleStream = (ruleId: string): string => `tag-rule-${ruleId}`;

function decide(command: TagRuleCommand, state: TagRuleState): DecidedEvent[] {
  switch (command.type) {
    case 'create': {
      if (state.status !== 'new') throw errors.conflict('Rule already exists', { code: 'tag_rule_exists' });
      if (command.folder_id === undefined && command.format === undefined && command.source_kind === undefined) {
        throw errors.validation('A rule needs at least one of folder_id, format, source_kind', { code: 'empty_rule' });
      }
      if (command.source_kind !== undefined && !['raw', 'file', 'url'].includes(command.source_kind)) {
        throw errors.validation('source_kind must be raw, file or url', { details: { field: 'source_kind' } });
      }
      if (command.format !== undefined && !/^[a-z0-9]{1,20}$/i.test(command.format)) {
        throw errors.validation('format must be a file extension such as pdf', { details: { field: 'format' } });
      }
      const data: Record<string, unknown> = { rule_id: command.rule_id, org_id: command.org_id, tag_id: command.tag_id, at: command.at };
      if (command.folder_id !== undefined) data.folder_id = command.folder_id;
      if (command.format !== undefined) data.format = command.format.toLowerCase();
      if (command.source_kind !== undefined) data.source_kind = command.source_kind;
      return [{ type: 'tag_rule.created', data }];
    }
    case 'delete':
      if (state.status !== 'live' || state.org_id !== command.org_id) throw errors.notFound('Tag rule');
      return [{ type: 'tag_rule.deleted', data: { rule_id: command.rule_id, org_id: state.org_id, at: command.at } }];
    default: {
      const never: never = command;
      throw new Error(`Unknown command ${JSON.stringify(never)}`);
    }
  }
}

export const tagRuleDecider: Decider<TagRuleCommand, TagRuleState, EventsNamed<'tag_rule'>> = {
  initialState: () => ({ status: 'new', org_id: '' }),
  evolve: (state, event) =>
    event.type === 'tag_rule.created'
      ? { status: 'live', org_id: event.data.org_id }
      : event.type === 'tag_rule.deleted'
        ? { ...state, status: 'deleted' }
        : state,
  decide,
};
