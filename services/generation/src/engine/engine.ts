import type { Logger } from 'pino';
import { errors, type Clock, type IdGenerator } from '@kb/platform';
import { ConcurrencyError } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { runDecider, runStream } from '../domain/aggregates.js';
import { checkPage, isUuid, metadataOf } from '../app/context.js';
import type { SettingsService } from '../app/settings.js';
import { ORGANIZATIONS, type OrganizationDoc } from '../projections/organizations.js';
import { PROMPTS, type PromptDoc } from '../projections/prompts.js';
import { RULES, ruleDecider, ruleRunId, ruleStream, slotStart, type Cadence, type RuleDoc } from './rules.js';

/**
 * The content engine: rules that start generation runs by themselves, for
 * every prompt (or every prompt with a tag) once per cadence slot. A rule
 * fires a slot once (its `content_rule.fired` event is appended at the
 * stream's expected version, so a second replica's attempt conflicts and is
 * dropped) and the runs it starts have ids derived from (rule, slot, prompt),
 * so no run is ever requested twice. While the organization's runs switch is
 * off the slot passes with nothing started (recorded as skipped).
 */

const CADENCES: Cadence[] = ['hourly', 'daily', 'weekly'];
const ruleJson = ({ id: _id, org_id: _o, seq: _s, ...d }: RuleDoc) => ({
  prompt_tag_id: null,
  product_line_id: null,
  ...d,
});

export function createContentEngine(deps: {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  settings: SettingsService;
  logger: Logger;
  onRunsStarted: () => void;
}) {
  const { store, commands, ids, clock, settings, logger } = deps;
  const now = () => clock.now().toISOString();

  async function read(orgId: string, id: unknown): Promise<RuleDoc> {
    const doc = isUuid(id) ? await store.get<RuleDoc>(RULES, id.toLowerCase()) : undefined;
    if (!doc || doc.org_id !== orgId) throw errors.notFound('Content engine rule');
    return doc;
  }

  async function fields(ctx: CallContext, input: Record<string, unknown>) {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (!name || name.length > 200) throw errors.validation('name must be 1 to 200 characters', { details: { field: 'name' } });
    const type = await settings.contentType(ctx.org_id, input.content_type_id);
    const line =
      input.product_line_id === undefined || input.product_line_id === null
        ? null
        : await settings.productLine(ctx.org_id, input.product_line_id);
    if (input.prompt_tag_id !== undefined && input.prompt_tag_id !== null && !isUuid(input.prompt_tag_id))
      throw errors.validation('prompt_tag_id must be a tag id', { details: { field: 'prompt_tag_id' } });
    const cadence = input.cadence ?? 'daily';
    if (!CADENCES.includes(cadence as Cadence))
      throw errors.validation(`cadence must be one of ${CADENCES.join(', ')}`, { details: { field: 'cadence' } });
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean')
      throw errors.validation('enabled must be true or false', { details: { field: 'enabled' } });
    return {
      name,
      content_type_id: type.content_type_id,
      ...(isUuid(input.prompt_tag_id) && { prompt_tag_id: input.prompt_tag_id.toLowerCase() }),
      ...(line && { product_line_id: line.product_line_id }),
      cadence: cadence as Cadence,
      enabled: input.enabled !== false,
    };
  }

  /** Fires one rule's current slot if it has not fired yet; returns the runs started. */
  async function fire(rule: RuleDoc, at: Date): Promise<string[]> {
    const slot = slotStart(at, rule.cadence);
    if (!rule.enabled || (rule.last_slot !== null && rule.last_slot >= slot)) return [];
    const org = await store.get<OrganizationDoc>(ORGANIZATIONS, rule.org_id);
    const prompts = (await store.find<PromptDoc>(PROMPTS, { where: { org_id: rule.org_id, deleted: false } })).filter(
      (p) => !rule.prompt_tag_id || p.tags.includes(rule.prompt_tag_id),
    );
    const stamp = at.toISOString();
    const md = { metadata: { org_id: rule.org_id, actor: `system:content-engine:${rule.rule_id}` } };
    try {
      return await commands.transaction(md, async (s) => {
        if (org?.runs_enabled === false) {
          await s.execute(ruleDecider, ruleStream(rule.rule_id), {
            type: 'fire',
            slot,
            run_ids: [],
            skipped: 'runs switched off',
            at: stamp,
          });
          return [];
        }
        const runIds: string[] = [];
        for (const prompt of prompts) {
          const runId = ruleRunId(rule.rule_id, slot, prompt.id);
          const existing = await s.load(runDecider, runStream(runId));
          if (existing.state.requested) continue;
          await s.execute(runDecider, runStream(runId), {
            type: 'request',
            run_id: runId,
            org_id: rule.org_id,
            content_type_id: rule.content_type_id,
            geo_question_id: prompt.id,
            ...(rule.product_line_id && { product_line_id: rule.product_line_id }),
            scope: { folder_ids: [], tags: [], category_ids: [] },
            rule_id: rule.rule_id,
            caller_folder_scope: null,
            actor: `system:content-engine:${rule.rule_id}`,
            at: stamp,
          });
          runIds.push(runId);
        }
        const { events } = await s.execute(ruleDecider, ruleStream(rule.rule_id), { type: 'fire', slot, run_ids: runIds, at: stamp });
        // Fired already (another replica won the slot): start nothing.
        if (events.length === 0) throw new SlotTaken();
        return runIds;
      });
    } catch (err) {
      if (err instanceof SlotTaken || err instanceof ConcurrencyError) return [];
      throw err;
    }
  }

  async function tick(): Promise<number> {
    const at = clock.now();
    let started = 0;
    for (const rule of await store.find<RuleDoc>(RULES, { where: { enabled: true } })) {
      try {
        started += (await fire(rule, at)).length;
      } catch (err) {
        logger.warn({ err, rule_id: rule.rule_id }, 'content engine rule could not fire');
      }
    }
    if (started > 0) deps.onRunsStarted();
    return started;
  }

  let timer: NodeJS.Timeout | undefined;
  return {
    tick,
    start(tickMs: number) {
      timer = setInterval(() => void tick().catch((err: unknown) => logger.warn({ err }, 'content engine tick failed')), tickMs);
      void tick().catch(() => undefined);
    },
    stop() {
      if (timer) clearInterval(timer);
    },
    async list(ctx: CallContext, r: { limit?: number | undefined; offset?: number | undefined }) {
      const page = checkPage(r);
      const where = { org_id: ctx.org_id };
      const [items, total_count] = await Promise.all([
        store.find<RuleDoc>(RULES, { where, sort: [{ field: 'seq', order: 'asc' }], ...page }),
        store.count(RULES, where),
      ]);
      return { items: items.map(ruleJson), total_count };
    },
    get: async (ctx: CallContext, id: unknown) => ruleJson(await read(ctx.org_id, id)),
    async create(ctx: CallContext, input: Record<string, unknown>) {
      const f = await fields(ctx, input);
      const id = ids.uuid();
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(ruleDecider, ruleStream(id), { type: 'create', rule_id: id, org_id: ctx.org_id, ...f, at: now() }),
      );
      // The rule's first slot is the current one: it fires at the next tick.
      void tick().catch(() => undefined);
      return ruleJson(await read(ctx.org_id, id));
    },
    async update(ctx: CallContext, id: unknown, input: Record<string, unknown>) {
      const doc = await read(ctx.org_id, id);
      const f = await fields(ctx, input);
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(ruleDecider, ruleStream(doc.id), { type: 'update', rule_id: doc.id, org_id: ctx.org_id, ...f, at: now() }),
      );
      return ruleJson(await read(ctx.org_id, doc.id));
    },
    async remove(ctx: CallContext, id: unknown) {
      const doc = await read(ctx.org_id, id);
      await commands.transaction(metadataOf(ctx), (s) => s.execute(ruleDecider, ruleStream(doc.id), { type: 'delete', at: now() }));
    },
  };
}

class SlotTaken extends Error {}

export type ContentEngine = ReturnType<typeof createContentEngine>;
