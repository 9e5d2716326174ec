import { createHash } from 'node:crypto';
import { errors } from '@kb/platform';
import type { Decider, DecidedEvent, Projection } from '@kb/eventsourcing';
import type { ContentRuleCreated, EventsNamed } from '@kb/events';

/** Content engine rules (issue 9 item 6): decider, read model and the cadence slots. */

export type Cadence = 'hourly' | 'daily' | 'weekly';
export type RuleFields = Omit<ContentRuleCreated, 'rule_id' | 'org_id' | 'at'>;

export type RuleCommand =
  | ({ type: 'create' | 'update'; rule_id: string; org_id: string; at: string } & RuleFields)
  | { type: 'delete'; at: string }
  | { type: 'fire'; slot: string; run_ids: string[]; skipped?: string; at: string };

export interface RuleState {
  rule: ContentRuleCreated | null;
  deleted: boolean;
  last_slot: string | null;
}

export const ruleStream = (id: string) => `content_rule-${id}`;
export const ruleDecider: Decider<RuleCommand, RuleState, EventsNamed<'content_rule'>> = {
  initialState: () => ({ rule: null, deleted: false, last_slot: null }),
  evolve: (s, e) => {
    switch (e.type) {
      case 'content_rule.created':
      case 'content_rule.updated':
        return { ...s, rule: e.data };
      case 'content_rule.deleted':
        return { ...s, deleted: true };
      case 'content_rule.fired':
        return { ...s, last_slot: e.data.slot };
      default:
        return s;
    }
  },
  decide: (c, s): DecidedEvent[] => {
    switch (c.type) {
      case 'create': {
        if (s.rule) throw errors.conflict('The rule exists');
        const { type: _t, ...data } = c;
        return [{ type: 'content_rule.created', data }];
      }
      case 'update': {
        if (!s.rule || s.deleted) throw errors.notFound('Content engine rule');
        const { type: _t, ...data } = c;
        return [{ type: 'content_rule.updated', data }];
      }
      case 'delete':
        if (!s.rule || s.deleted) throw errors.notFound('Content engine rule');
        return [{ type: 'content_rule.deleted', data: { rule_id: s.rule.rule_id, org_id: s.rule.org_id, at: c.at } }];
      case 'fire':
        // Once per slot: a slot already fired (by this or another replica) decides nothing.
        if (!s.rule || s.deleted || (s.last_slot !== null && s.last_slot >= c.slot)) return [];
        return [
          {
            type: 'content_rule.fired',
            data: {
              rule_id: s.rule.rule_id,
              org_id: s.rule.org_id,
              slot: c.slot,
              run_ids: c.run_ids,
              ...(c.skipped && { skipped: c.skipped }),
              at: c.at,
            },
          },
        ];
      default: {
        const never: never = c;
        throw new Error(`unhandled ${JSON.stringify(never)}`);
      }
    }
  },
};

/** The start of the cadence slot a moment falls in (UTC; weeks start on Monday). */
export function slotStart(now: Date, cadence: Cadence): string {
  const d = new Date(now.getTime());
  d.setUTCMinutes(0, 0, 0);
  if (cadence === 'hourly') return d.toISOString();
  d.setUTCHours(0);
  if (cadence === 'daily') return d.toISOString();
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString();
}

/** The run a rule starts for a prompt in a slot: the same id on every replica, so a run is never requested twice. */
export function ruleRunId(ruleId: string, slot: string, promptId: string): string {
  const h = createHash('sha1').update(`${ruleId}:${slot}:${promptId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const RULES = 'content_rules';
export type RuleDoc = ContentRuleCreated & {
  id: string;
  last_slot: string | null;
  last_run_ids: string[];
  last_skipped: string | null;
  created_at: string;
  updated_at: string;
  seq: number;
};

export const rulesProjection: Projection = {
  name: 'generation-content-rules',
  collections: [RULES],
  indexes: [
    { collection: RULES, fields: ['org_id', 'seq'] },
    { collection: RULES, fields: ['enabled'] },
  ],
  async apply(tx, event) {
    switch (event.type) {
      case 'content_rule.created':
      case 'content_rule.updated': {
        const d = event.data;
        const cur = await tx.get<RuleDoc>(RULES, d.rule_id);
        const { prompt_tag_id: _t, product_line_id: _p, ...base } = cur ?? ({} as Partial<RuleDoc>);
        await tx.put(RULES, {
          ...base,
          ...d,
          id: d.rule_id,
          last_slot: cur?.last_slot ?? null,
          last_run_ids: cur?.last_run_ids ?? [],
          last_skipped: cur?.last_skipped ?? null,
          created_at: cur?.created_at ?? d.at,
          updated_at: d.at,
          seq: cur?.seq ?? event.position,
        });
        return;
      }
      case 'content_rule.deleted':
        await tx.delete(RULES, event.data.rule_id);
        return;
      case 'content_rule.fired': {
        const d = event.data;
        const cur = await tx.get<RuleDoc>(RULES, d.rule_id);
        if (cur) await tx.put(RULES, { ...cur, last_slot: d.slot, last_run_ids: d.run_ids, last_skipped: d.skipped ?? null });
        return;
      }
      default:
        return;
    }
  },
};
