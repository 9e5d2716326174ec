import { errors } from '@kb/platform';
import type { Decider, DecidedEvent } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';
import type { MatchType, TierName } from './sources.js';

/**
 * The analytics aggregates. Each is a small decider; cross-stream rules
 * (competitor names unique per organization) are checked by the use cases and
 * enforced again by the read model's name index.
 */

const exhaustive = (x: never): never => {
  throw new Error(`Unknown command ${JSON.stringify(x)}`);
};

// ---- answer: one stream per answer id, so a repeated id is never folded twice ----

export type AnswerCommand = { type: 'collect'; data: Record<string, unknown> };
export const answerStream = (answerId: string) => `answer-${answerId}`;
export const answerDecider: Decider<AnswerCommand, { collected: boolean }> = {
  initialState: () => ({ collected: false }),
  evolve: (s, e) => (e.type === 'answer.collected' ? { collected: true } : s),
  decide(command, state) {
    if (state.collected) throw errors.conflict('This answer was already collected', { code: 'answer_exists' });
    return [{ type: 'answer.collected', data: command.data }];
  },
};

// ---- tracked source rule ----

export interface SourceRuleFields {
  match_type: MatchType;
  pattern: string;
  tier: TierName;
  label?: string;
}
export type TrackedSourceCommand =
  | ({ type: 'create'; source_id: string; org_id: string; source_origin: 'manual' | 'import'; at: string } & SourceRuleFields)
  | ({ type: 'update'; org_id: string; at: string } & SourceRuleFields)
  | { type: 'delete'; org_id: string; at: string };
interface TrackedSourceState {
  status: 'new' | 'active' | 'deleted';
  source_id: string;
  org_id: string;
}
export const trackedSourceStream = (id: string) => `tracked-source-${id}`;

export const trackedSourceDecider: Decider<TrackedSourceCommand, TrackedSourceState, EventsNamed<'tracked_source'>> = {
  initialState: () => ({ status: 'new', source_id: '', org_id: '' }),
  evolve(s, e) {
    if (e.type === 'tracked_source.created') return { status: 'active', source_id: e.data.source_id, org_id: e.data.org_id };
    if (e.type === 'tracked_source.deleted') return { ...s, status: 'deleted' };
    return s;
  },
  decide(c, s): DecidedEvent[] {
    const rule = (f: SourceRuleFields) => ({
      match_type: f.match_type,
      pattern: f.pattern,
      tier: f.tier,
      ...(f.label !== undefined && { label: f.label }),
    });
    switch (c.type) {
      case 'create':
        if (s.status !== 'new') throw errors.conflict('Tracked source already exists', { code: 'tracked_source_exists' });
        return [
          {
            type: 'tracked_source.created',
            data: { source_id: c.source_id, org_id: c.org_id, ...rule(c), source_origin: c.source_origin, at: c.at },
          },
        ];
      case 'update':
        if (s.status !== 'active' || s.org_id !== c.org_id) throw errors.notFound('Tracked source');
        return [{ type: 'tracked_source.updated', data: { source_id: s.source_id, org_id: s.org_id, ...rule(c), at: c.at } }];
      case 'delete':
        if (s.status !== 'active' || s.org_id !== c.org_id) throw errors.notFound('Tracked source');
        return [{ type: 'tracked_source.deleted', data: { source_id: s.source_id, org_id: s.org_id, at: c.at } }];
      default:
        return exhaustive(c);
    }
  },
};

// ---- tracked competitor ----

export interface CompetitorFields {
  name: string;
  aliases: string[];
  website?: string;
}
export type CompetitorCommand =
  | ({ type: 'create'; competitor_id: string; org_id: string; at: string } & CompetitorFields)
  | ({ type: 'update'; org_id: string; at: string } & CompetitorFields)
  | { type: 'delete'; org_id: string; at: string };
interface CompetitorState {
  status: 'new' | 'active' | 'deleted';
  competitor_id: string;
  org_id: string;
}
export const competitorStream = (id: string) => `competitor-${id}`;

export const competitorDecider: Decider<CompetitorCommand, CompetitorState, EventsNamed<'competitor'>> = {
  initialState: () => ({ status: 'new', competitor_id: '', org_id: '' }),
  evolve(s, e) {
    if (e.type === 'competitor.created') return { status: 'active', competitor_id: e.data.competitor_id, org_id: e.data.org_id };
    if (e.type === 'competitor.deleted') return { ...s, status: 'deleted' };
    return s;
  },
  decide(c, s): DecidedEvent[] {
    const fields = (f: CompetitorFields) => ({ name: f.name, aliases: f.aliases, ...(f.website !== undefined && { website: f.website }) });
    switch (c.type) {
      case 'create':
        if (s.status !== 'new') throw errors.conflict('Competitor already exists', { code: 'competitor_exists' });
        return [{ type: 'competitor.created', data: { competitor_id: c.competitor_id, org_id: c.org_id, ...fields(c), at: c.at } }];
      case 'update':
        if (s.status !== 'active' || s.org_id !== c.org_id) throw errors.notFound('Competitor');
        return [{ type: 'competitor.updated', data: { competitor_id: s.competitor_id, org_id: s.org_id, ...fields(c), at: c.at } }];
      case 'delete':
        if (s.status !== 'active' || s.org_id !== c.org_id) throw errors.notFound('Competitor');
        return [{ type: 'competitor.deleted', data: { competitor_id: s.competitor_id, org_id: s.org_id, at: c.at } }];
      default:
        return exhaustive(c);
    }
  },
};

// ---- organization settings: brand and run configuration (one stream per organization) ----

export type OrgSettingsCommand =
  | { type: 'set_brand'; org_id: string; brand_name: string; aliases: string[]; websites: string[]; at: string }
  | {
      type: 'set_run_configuration';
      org_id: string;
      enabled: boolean;
      models: string[];
      locations: string[];
      cadence: 'hourly' | 'daily' | 'weekly';
      prompt_ids: string[];
      tag_ids: string[];
      at: string;
    };
export const orgSettingsStream = (orgId: string) => `analytics-org-${orgId}`;

export const orgSettingsDecider: Decider<OrgSettingsCommand, Record<string, never>> = {
  initialState: () => ({}),
  evolve: (s) => s,
  decide(c): DecidedEvent[] {
    switch (c.type) {
      case 'set_brand': {
        const { type: _t, ...data } = c;
        return [{ type: 'brand_settings.updated', data }];
      }
      case 'set_run_configuration': {
        const { type: _t, ...data } = c;
        return [{ type: 'run_configuration.updated', data }];
      }
      default:
        return exhaustive(c);
    }
  },
};

// ---- scheduled prompt run (one stream per run) ----

export type PromptRunCommand =
  | { type: 'start'; run_id: string; org_id: string; slot: string; planned: number; models: string[]; at: string }
  | { type: 'item_failed'; prompt_id: string; model: string; location: string; error: string; at: string }
  | { type: 'finish'; error?: string; at: string };
interface PromptRunState {
  status: 'new' | 'running' | 'finished';
  run_id: string;
  org_id: string;
}
export const promptRunStream = (runId: string) => `prompt-run-${runId}`;

export const promptRunDecider: Decider<PromptRunCommand, PromptRunState, EventsNamed<'prompt_run'>> = {
  initialState: () => ({ status: 'new', run_id: '', org_id: '' }),
  evolve(s, e) {
    if (e.type === 'prompt_run.started') return { status: 'running', run_id: e.data.run_id, org_id: e.data.org_id };
    if (e.type === 'prompt_run.finished') return { ...s, status: 'finished' };
    return s;
  },
  decide(c, s): DecidedEvent[] {
    switch (c.type) {
      case 'start':
        if (s.status !== 'new') return [];
        return [
          {
            type: 'prompt_run.started',
            data: { run_id: c.run_id, org_id: c.org_id, slot: c.slot, planned: c.planned, models: c.models, at: c.at },
          },
        ];
      case 'item_failed':
        if (s.status !== 'running') return [];
        return [
          {
            type: 'prompt_run.item_failed',
            data: {
              run_id: s.run_id,
              org_id: s.org_id,
              prompt_id: c.prompt_id,
              model: c.model,
              location: c.location,
              error: c.error.slice(0, 1000),
              at: c.at,
            },
          },
        ];
      case 'finish':
        if (s.status !== 'running') return [];
        return [
          {
            type: 'prompt_run.finished',
            data: { run_id: s.run_id, org_id: s.org_id, ...(c.error !== undefined && { error: c.error.slice(0, 1000) }), at: c.at },
          },
        ];
      default:
        return exhaustive(c);
    }
  },
};
