import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { errors, type Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import { asStreamEvents, type CommandBus } from '@kb/eventsourcing';
import { holdLease, type LeaseManager } from '@kb/coordination';
import type { AnswersService } from '../app/answers.js';
import { answerStream, promptRunDecider, promptRunStream } from '../domain/aggregates.js';
import type { AnswerEngine } from '../engines/port.js';
import {
  ORGANIZATIONS,
  PROMPTS,
  PROMPT_RUNS,
  RUN_CONFIGURATIONS,
  derivedUuid,
  type OrganizationDoc,
  type PromptDoc,
  type PromptRunDoc,
  type RunConfigurationDoc,
} from '../projections/collections.js';
import { slotStart } from './slots.js';

export interface Scheduler {
  engineConfigured: boolean;
  /** Runs every organization's due slot once (any replica may call it; claims make it once). */
  tick(): Promise<void>;
  /**
   * Starts the organization's current slot now unless it already ran, and
   * returns the run as started (its items are collected in the background);
   * 422 when runs are not configured or switched off.
   */
  runNow(orgId: string): Promise<PromptRunDoc | null>;
  start(): void;
  stop(): Promise<void>;
}

export const NO_ENGINE = 'no answer engine configured (set ANSWER_ENGINE_BASE_URL)';
export const RUNS_SWITCHED_OFF = 'runs were switched off for the organization during the run';
const itemKey = (i: { prompt_id: string; model: string; location: string }) => JSON.stringify([i.prompt_id, i.model, i.location]);
/**
 * A run's claim: short, and renewed by a heartbeat while the replica lives, so
 * the run of a replica that died is taken over within this time (not after the
 * slowest answer engine call).
 */
export const CLAIM_TTL_MS = 15_000;

/**
 * Scheduled prompt runs: for each organization with an enabled run
 * configuration, every prompt x model x location runs once per cadence slot.
 * A run is claimed with a lease (the store, or Redis across replicas); the run
 * and answer ids derive from the slot, so a second replica, a retry after a
 * crash or a manual trigger never collects the same item twice.
 */
export function createScheduler(deps: {
  store: Store;
  commands: CommandBus;
  answers: AnswersService;
  leases: LeaseManager;
  engine: AnswerEngine | null;
  clock: Clock;
  logger: Logger;
  owner: string;
  tickMs: number;
  /** Lease of a run's claim (default CLAIM_TTL_MS), renewed every third of it. */
  claimTtlMs?: number;
}): Scheduler {
  const { store, commands, answers, leases, engine, clock, logger, owner } = deps;
  const claimTtlMs = deps.claimTtlMs ?? CLAIM_TTL_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  /** Runs started by runNow, awaited on stop. */
  const background = new Set<Promise<void>>();
  const system = (orgId: string) => ({ metadata: { org_id: orgId, actor: 'system:scheduler' } });

  async function promptsFor(config: RunConfigurationDoc): Promise<PromptDoc[]> {
    const prompts = await store.find<PromptDoc>(PROMPTS, { where: { org_id: config.org_id, deleted: false } });
    if (config.prompt_ids.length === 0 && config.tag_ids.length === 0) return prompts;
    return prompts.filter((p) => config.prompt_ids.includes(p.id) || p.tags.some((t) => config.tag_ids.includes(t)));
  }

  interface Begun {
    run: PromptRunDoc | null;
    /** Collects the run's items; absent when this replica did not claim the run. */
    work?: () => Promise<void>;
  }

  /** Claims the slot's run and records its start; the items are collected by `work`. */
  async function beginRun(config: RunConfigurationDoc, slot: string): Promise<Begun> {
    const org = await store.get<OrganizationDoc>(ORGANIZATIONS, config.org_id);
    if (org?.runs_enabled === false) return { run: null };
    const run_id = derivedUuid(`run:${config.org_id}:${slot}`);
    const current = async () => (await store.get<PromptRunDoc>(PROMPT_RUNS, run_id)) ?? null;
    const done = await current();
    if (done && done.status !== 'running') return { run: done };
    const claim = `prompt-run:${run_id}`;
    // One holder per attempt, so two attempts inside one replica (a tick and a trigger) exclude each other too.
    const holder = `${owner}:${randomUUID()}`;
    const held = await holdLease(leases, claim, holder, {
      ttlMs: claimTtlMs,
      clock,
      onError: (err) => logger.warn({ err, run_id }, 'prompt run claim renewal failed'),
    });
    if (!held) return { run: await current() };
    // Read again under the claim: another replica may have finished the run between
    // the check above and the claim (it releases the claim when done), and must not be
    // followed by a second pass that would ask its failed items again.
    const settled = await current();
    if (settled && settled.status !== 'running') {
      await held.release();
      return { run: settled };
    }
    const at = () => clock.now().toISOString();
    const inRun = (command: Parameters<typeof promptRunDecider.decide>[0]) =>
      commands.transaction(system(config.org_id), (s) => s.execute(promptRunDecider, promptRunStream(run_id), command));
    let items: { prompt: PromptDoc; model: string; location: string }[];
    try {
      const prompts = await promptsFor(config);
      items = prompts.flatMap((p) =>
        config.models.flatMap((model) => config.locations.map((location) => ({ prompt: p, model, location }))),
      );
      await inRun({ type: 'start', run_id, org_id: config.org_id, slot, planned: items.length, models: config.models, at: at() });
    } catch (err) {
      await held.release();
      throw err;
    }
    const work = async () => {
      try {
        if (!engine) {
          await inRun({ type: 'finish', error: NO_ENGINE, at: at() });
          return;
        }
        // Items this run already attempted and recorded as failed (by a replica that lost
        // its claim or crashed): a slot asks each prompt x model x location at most once.
        const failed = new Set(
          asStreamEvents(await store.readStream(promptRunStream(run_id)))
            .filter((e) => e.type === 'prompt_run.item_failed')
            .map((e) => itemKey(e.data)),
        );
        for (const item of items) {
          // The organization's master switch can go off mid-run: stop asking at once.
          if ((await store.get<OrganizationDoc>(ORGANIZATIONS, config.org_id))?.runs_enabled === false) {
            await inRun({ type: 'finish', error: RUNS_SWITCHED_OFF, at: at() });
            return;
          }
          const answer_id = derivedUuid(`answer:${run_id}:${item.prompt.id}:${item.model}:${item.location}`);
          // Collected or failed before (another replica, or this run before a crash): never asked twice.
          if (failed.has(itemKey({ prompt_id: item.prompt.id, model: item.model, location: item.location }))) continue;
          if ((await store.readStream(answerStream(answer_id))).length > 0) continue;
          try {
            const reply = await engine.ask({ model: item.model, prompt: item.prompt.text, location: item.location });
            await answers.collect(
              config.org_id,
              {
                answer_id,
                prompt_id: item.prompt.id,
                model: item.model,
                location: item.location,
                run_at: at(),
                text: reply.text.slice(0, 200000),
                citations: reply.citations.slice(0, 500),
              },
              run_id,
            );
          } catch (err) {
            logger.warn({ err, run_id, model: item.model }, 'prompt run item failed');
            await inRun({
              type: 'item_failed',
              prompt_id: item.prompt.id,
              model: item.model,
              location: item.location,
              error: (err as Error).message,
              at: at(),
            });
          }
          // The heartbeat renews the claim; when it was lost (it ran out and another replica
          // took the run over), that replica carries on from the items recorded so far.
          if (held.lost) {
            logger.warn({ run_id }, 'prompt run claim lost; another replica continues the run');
            return;
          }
        }
        await inRun({ type: 'finish', at: at() });
      } finally {
        await held.release();
      }
    };
    return { run: await current(), work };
  }

  async function runSlot(config: RunConfigurationDoc, slot: string): Promise<PromptRunDoc | null> {
    const begun = await beginRun(config, slot);
    if (!begun.work) return begun.run;
    await begun.work();
    return (await store.get<PromptRunDoc>(PROMPT_RUNS, begun.run!.run_id)) ?? null;
  }

  async function tick() {
    const configs = await store.find<RunConfigurationDoc>(RUN_CONFIGURATIONS, { where: { enabled: true } });
    for (const config of configs) {
      if (config.models.length === 0) continue;
      try {
        await runSlot(config, slotStart(clock.now(), config.cadence));
      } catch (err) {
        logger.error({ err, org_id: config.org_id }, 'scheduled prompt run failed');
      }
    }
  }

  return {
    engineConfigured: engine !== null,
    tick,
    async runNow(orgId) {
      const config = await store.get<RunConfigurationDoc>(RUN_CONFIGURATIONS, orgId);
      if (!config || !config.enabled || config.models.length === 0)
        throw errors.unprocessable('The run configuration is not enabled or names no model', { code: 'runs_not_configured' });
      const org = await store.get<OrganizationDoc>(ORGANIZATIONS, orgId);
      if (org?.runs_enabled === false) throw errors.unprocessable('Runs are switched off for this organization', { code: 'runs_disabled' });
      const begun = await beginRun(config, slotStart(clock.now(), config.cadence));
      if (begun.work) {
        const work = begun.work().catch((err) => logger.error({ err, org_id: orgId }, 'triggered prompt run failed'));
        background.add(work);
        void work.finally(() => background.delete(work));
      }
      return begun.run;
    },
    start() {
      const loop = () => {
        if (stopped) return;
        running = tick().catch((err) => logger.error({ err }, 'scheduler tick failed'));
        timer = setTimeout(() => void running!.then(loop), deps.tickMs);
      };
      timer = setTimeout(loop, Math.min(deps.tickMs, 1000));
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.all(background);
    },
  };
}
