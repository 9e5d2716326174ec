import type { Logger } from 'pino';
import { errors, isAppError, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext, RpcClient } from '@kb/rpc';
import type { FactChecker, Llm } from '@kb/ai';
import type { DraftRevision } from '@kb/events';
import { draftDecider, draftStream, runDecider, runStream } from '../domain/aggregates.js';
import { numberSentences, renderBody, sourcesOf, totalsOf } from '../domain/draft.js';
import type { ContentTypeConfig, Guidelines } from '../domain/settings.js';
import { coverageOf } from '../drafting/coverage.js';
import { describe } from '../drafting/description.js';
import { draftExtractive } from '../drafting/extractive-drafter.js';
import { draftWithLlm } from '../drafting/llm-drafter.js';
import { retrieveSections } from '../drafting/section-passages.js';
import { BRAND_KITS, DRAFTS, RUNS, type BrandKitDoc, type DraftDoc, type RunDoc } from '../projections/index.js';
import type { RetrievalScope, Retriever } from '../retrieval.js';
import { drawsWithin, requireWithin, runFolders } from '../domain/scope.js';
import { actorOf, checkPage, isUuid, metadataOf, visiblePage } from './context.js';
import type { SettingsService } from './settings.js';
import { verifySections } from './verification.js';
import { ORGANIZATIONS, type OrganizationDoc } from '../projections/organizations.js';

export interface RunInput {
  content_type_id?: unknown;
  geo_question_id?: unknown;
  product_line_id?: unknown;
  instructions?: unknown;
  scope?: { folder_ids?: unknown; tags?: unknown; category_ids?: unknown } | undefined;
}

export interface RunsDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  settings: SettingsService;
  retriever: Retriever;
  prompts: RpcClient;
  checker: FactChecker;
  llm?: Llm | undefined;
  logger: Logger;
}

const runJson = ({ id: _id, org_id: _o, seq: _s, active: _a, caller_folder_scope: _c, ...d }: RunDoc) => d;

function uuids(value: unknown, field: string, max = 50): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > max || !value.every(isUuid))
    throw errors.validation(`${field} must be a list of at most ${max} uuids`, { details: { field } });
  return value.map((v) => v.toLowerCase());
}

function scopeOf(input: RunInput['scope']): RetrievalScope {
  if (input !== undefined && (typeof input !== 'object' || input === null)) throw errors.validation('scope must be an object');
  const s = input ?? {};
  const tags = s.tags === undefined ? [] : s.tags;
  if (!Array.isArray(tags) || tags.length > 50 || !tags.every((t) => typeof t === 'string' && t.trim().length > 0 && t.length <= 100))
    throw errors.validation('scope.tags must be a list of at most 50 tag ids or names', { details: { field: 'scope.tags' } });
  return {
    folder_ids: uuids(s.folder_ids, 'scope.folder_ids'),
    tags: tags.map((t: string) => t.trim()),
    category_ids: uuids(s.category_ids, 'scope.category_ids', 20),
  };
}

/** The context a run retrieves with: the requester's organization and folder scope, as the system. */
export const runContext = (run: Pick<RunDoc, 'org_id' | 'run_id' | 'caller_folder_scope'>): CallContext => ({
  org_id: run.org_id,
  principal: { type: 'system', id: 'generation' },
  permissions: ['read:kb'],
  folder_scope: run.caller_folder_scope,
  request_id: run.run_id,
});

/** Generation runs (spec 2.7, 4.1 Content Generation): start (202), read, list, execute. */
export function createRunsService(deps: RunsDeps) {
  const { store, commands, ids, clock, settings, retriever, checker, llm, logger } = deps;
  const now = () => clock.now().toISOString();

  async function read(orgId: string, id: unknown): Promise<RunDoc> {
    const doc = isUuid(id) ? await store.get<RunDoc>(RUNS, id.toLowerCase()) : undefined;
    if (!doc || doc.org_id !== orgId) throw errors.notFound('Generation run');
    return doc;
  }

  async function promptText(ctx: CallContext, promptId: string): Promise<string> {
    const prompt = await deps.prompts.call<{ text: string; name: string }>('GetPrompt', { prompt_id: promptId }, ctx);
    return prompt.text || prompt.name;
  }

  async function step(run: RunDoc, state: 'retrieving' | 'drafting' | 'verifying', progress: number) {
    await commands.transaction({ metadata: { org_id: run.org_id, actor: 'system:generation' } }, (s) =>
      s.execute(runDecider, runStream(run.run_id), { type: 'progress', state, progress: Math.round(progress * 100) / 100, at: now() }),
    );
  }

  async function fail(run: RunDoc, reason: string) {
    await commands.transaction({ metadata: { org_id: run.org_id, actor: 'system:generation' } }, (s) =>
      s.execute(runDecider, runStream(run.run_id), { type: 'fail', reason, at: now() }),
    );
  }

  /** A run's source folders as one comparable value (order and repeats do not matter). */
  const folderKey = (folders: readonly string[]) => [...new Set(folders)].sort().join(',');

  /**
   * The piece an earlier run made for the same content type and subject (the same prompt, or the
   * same instructions, product line and source folders), if it still exists: the newest.
   */
  async function pieceOf(run: RunDoc): Promise<DraftDoc | undefined> {
    const earlier = await store.find<RunDoc>(RUNS, {
      where: { org_id: run.org_id, content_type_id: run.content_type_id, state: 'completed' },
      sort: [{ field: 'seq', order: 'desc' }],
      limit: 200,
    });
    for (const r of earlier) {
      if (r.run_id === run.run_id || !r.draft_id) continue;
      if (r.geo_question_id !== run.geo_question_id || r.product_line_id !== run.product_line_id) continue;
      // A prompt is the subject when there is one; otherwise the run's instructions are.
      if (!run.geo_question_id && (r.instructions ?? '').trim().toLowerCase() !== (run.instructions ?? '').trim().toLowerCase()) continue;
      // Other sources make another piece: a run never rewrites a piece drawn from folders it did not draw on
      // (a folder-scoped key must not overwrite what lies outside its scope).
      if (folderKey(runFolders(r)) !== folderKey(runFolders(run))) continue;
      const draft = await store.get<DraftDoc>(DRAFTS, r.draft_id);
      if (draft && draft.org_id === run.org_id) return draft;
    }
    return undefined;
  }

  /** Does the run's work; `alive` turns false when the worker lost the run's lease (another worker took it). */
  async function execute(run: RunDoc, alive: () => boolean): Promise<void> {
    const ctx = runContext(run);
    const guard = () => {
      if (!alive()) throw new LeaseLost();
    };
    try {
      await step(run, 'retrieving', 0.1);
      const type = await settings.contentType(run.org_id, run.content_type_id).catch(() => null);
      if (!type) return await fail(run, 'The content type was deleted before the run started');
      const config = type.config as unknown as ContentTypeConfig;
      const kit = await store.get<BrandKitDoc>(BRAND_KITS, run.org_id);
      const guidelines = (kit?.guidelines ?? {}) as Guidelines;
      const line = run.product_line_id ? await settings.productLine(run.org_id, run.product_line_id).catch(() => null) : null;
      const question = run.geo_question_id ? await promptText(ctx, run.geo_question_id).catch(() => null) : null;
      const subject = question ?? run.instructions ?? type.name;
      const title = (question ?? (line ? `${type.name}: ${line.name}` : type.name)).slice(0, 300);

      const retrieve = (claim: string, limit: number) => retriever.retrieve(ctx, claim, run.scope, limit);
      const sections = await retrieveSections(
        config.sections,
        [subject, line?.name].filter(Boolean).join(' '),
        (query, limit) => {
          guard();
          return retrieve(query, limit);
        },
        (done) => step(run, 'retrieving', 0.1 + (0.3 * done) / config.sections.length),
      );
      if (sections.every((s) => s.passages.length === 0))
        return await fail(run, 'The knowledge base holds nothing on this subject within the run’s scope');

      guard();
      await step(run, 'drafting', 0.4);
      const brief = { title, instructions: run.instructions ?? undefined, max_words: config.target_length.max_words };
      const extractive = () => draftExtractive(sections, guidelines, config);
      const drafted = llm
        ? await draftWithLlm(llm, sections, guidelines, brief).catch((err: unknown) => {
            logger.warn({ err, run_id: run.run_id }, 'LLM drafting failed; drafting extractively');
            return extractive();
          })
        : extractive();
      if (drafted.every((s) => s.sentences.length === 0))
        return await fail(
          run,
          `No source passage answers any of the sections (${config.sections.map((s) => `“${s.title}”`).join(', ')}) within the run’s scope`,
        );

      guard();
      await step(run, 'verifying', 0.7);
      const verified = await verifySections({
        sections: drafted,
        checker,
        retrieve,
        guidelines,
        config,
        llm,
        onProgress: async (done, total) => {
          guard();
          await step(run, 'verifying', 0.7 + (0.25 * done) / total);
        },
      });
      if (verified.every((s) => s.sentences.length === 0)) return await fail(run, 'No drafted sentence is supported by the knowledge base');
      // A section with nothing on its subject (or nothing the checker kept) is left out of the draft and
      // named in its warnings; an FAQ says under the question that the knowledge base does not answer it.
      const coverage = coverageOf(verified, config);
      const numbered = numberSentences(coverage.sections);
      const totals = totalsOf(numbered);
      guard();
      // One piece per content type and subject: a run on a subject that already has one revises it.
      const existing = await pieceOf(run);
      const draftId = existing?.draft_id ?? ids.uuid();
      const at = now();
      const draft: DraftRevision = {
        draft_id: draftId,
        org_id: run.org_id,
        run_id: run.run_id,
        revision: (existing?.revision ?? 0) + 1,
        content_type_id: type.content_type_id,
        content_kind: config.kind,
        ...(run.product_line_id && { product_line_id: run.product_line_id }),
        title,
        description: describe(
          title,
          numbered.flatMap((s) => s.sentences),
        ),
        format: config.format,
        body: renderBody(numbered, config, { bullets: guidelines.formatting?.bullet_lists === true }),
        sections: numbered,
        target_prompt_ids: run.geo_question_id ? [run.geo_question_id] : [],
        // A scoped key that named no folder drew on its whole scope: the draft says so (and stays readable by it).
        source_folder_ids: runFolders(run),
        source_content_ids: sourcesOf(numbered),
        ...(coverage.warnings.length > 0 && { warnings: coverage.warnings }),
        verification: totals.unsupported === 0 && coverage.warnings.length === 0 ? 'verified' : 'needs_review',
        totals,
        stale_sources: [],
        auto_publish: config.auto_publish,
        publish_destination_ids: config.publish_destination_ids,
        ...(run.actor && { actor: run.actor }),
        ...(existing && { change: { kind: 'regenerated' as const, run_id: run.run_id } }),
        at,
      };
      await commands.transaction({ metadata: { org_id: run.org_id, actor: 'system:generation' } }, async (s) => {
        const { state } = await s.load(runDecider, runStream(run.run_id));
        if (state.state === 'completed' || state.state === 'failed') return;
        if (existing) await s.execute(draftDecider, draftStream(draftId), { type: 'revise', draft });
        else await s.execute(draftDecider, draftStream(draftId), { type: 'create', draft });
        await s.execute(runDecider, runStream(run.run_id), { type: 'complete', draft_id: draftId, at });
      });
    } catch (err) {
      if (err instanceof LeaseLost) return;
      logger.warn({ err, run_id: run.run_id }, 'generation run failed');
      const reason = isAppError(err) && err.kind !== 'internal' ? err.message : 'An internal error stopped the run';
      await fail(run, reason);
    }
  }

  return {
    execute,
    async start(ctx: CallContext, input: RunInput) {
      const type = await settings.contentType(ctx.org_id, input.content_type_id).catch((err: unknown) => {
        if (input.content_type_id === undefined)
          throw errors.validation('content_type_id is required', { details: { field: 'content_type_id' } });
        throw err;
      });
      const line = input.product_line_id === undefined ? null : await settings.productLine(ctx.org_id, input.product_line_id);
      if (input.geo_question_id !== undefined) {
        if (!isUuid(input.geo_question_id)) throw errors.notFound('Prompt');
        await promptText(ctx, input.geo_question_id.toLowerCase());
      }
      if (input.instructions !== undefined && (typeof input.instructions !== 'string' || input.instructions.length > 4000))
        throw errors.validation('instructions must be a string of at most 4000 characters', { details: { field: 'instructions' } });
      const scope = scopeOf(input.scope);
      // Folder ids outside the key's scope are 403 (and unknown ones 404) now, not when the run starts working.
      if (scope.folder_ids.length || scope.category_ids.length || ctx.folder_scope !== null)
        await retriever.retrieve(ctx, type.name, scope, 1);
      const org = await store.get<OrganizationDoc>(ORGANIZATIONS, ctx.org_id);
      if (org?.runs_enabled === false)
        throw errors.unprocessable('Runs are switched off for this organization (PATCH /org/me/runs-enabled)', { code: 'runs_disabled' });

      const runId = ids.uuid();
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(runDecider, runStream(runId), {
          type: 'request',
          run_id: runId,
          org_id: ctx.org_id,
          content_type_id: type.content_type_id,
          ...(isUuid(input.geo_question_id) && { geo_question_id: input.geo_question_id.toLowerCase() }),
          ...(line && { product_line_id: line.product_line_id }),
          ...(typeof input.instructions === 'string' && input.instructions.trim() && { instructions: input.instructions.trim() }),
          scope,
          caller_folder_scope: ctx.folder_scope,
          actor: actorOf(ctx),
          at: now(),
        }),
      );
      return runJson(await read(ctx.org_id, runId));
    },
    async get(ctx: CallContext, id: unknown) {
      const run = await read(ctx.org_id, id);
      requireWithin(runFolders(run), ctx.folder_scope, 'a run');
      return runJson(run);
    },
    async list(ctx: CallContext, r: { limit?: number; offset?: number; geo_question_id?: string; state?: string }) {
      const page = checkPage(r);
      const where: Record<string, string> = { org_id: ctx.org_id };
      if (r.geo_question_id) where.geo_question_id = r.geo_question_id.toLowerCase();
      if (r.state) where.state = r.state;
      const scope = ctx.folder_scope;
      const visible = scope === null ? null : (run: RunDoc) => drawsWithin(runFolders(run), scope);
      const { items, total_count } = await visiblePage<RunDoc>(store, RUNS, where, page, visible);
      return { items: items.map(runJson), total_count };
    },
    /** Runs still to do (queued, or started by a worker that may have died). */
    pending: (limit: number) => store.find<RunDoc>(RUNS, { where: { active: 1 }, sort: [{ field: 'seq', order: 'asc' }], limit }),
  };
}

class LeaseLost extends Error {}

export type RunsService = ReturnType<typeof createRunsService>;
