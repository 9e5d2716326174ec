import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import { asStreamEvents, type CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import type { FactChecker, Llm } from '@kb/ai';
import { splitSentences } from '@kb/ai';
import type { DraftRevision, EventsNamed } from '@kb/events';
import { draftDecider, draftStream } from '../domain/aggregates.js';
import { headingCase } from '../domain/composer.js';
import { citationOf, numberSentences, renderBody, sourcesOf, totalsOf, type DraftSection, type VerifiedSection } from '../domain/draft.js';
import type { ContentTypeConfig, Guidelines } from '../domain/settings.js';
import { describe } from '../drafting/description.js';
import { draftExtractive } from '../drafting/extractive-drafter.js';
import { draftWithLlm } from '../drafting/llm-drafter.js';
import { BRAND_KITS, DRAFTS, type BrandKitDoc, type DraftDoc } from '../projections/index.js';
import type { Retriever } from '../retrieval.js';
import { requireWithin } from '../domain/scope.js';
import { actorOf, isUuid, metadataOf } from './context.js';
import type { SettingsService } from './settings.js';
import { checkSentence, verifySections } from './verification.js';

/**
 * The builder (issue 9 item 6): one piece assembled step by step. The outline
 * comes from the content type; a section is generated (or regenerated) from the
 * knowledge base, edited by hand (the edit is fact-checked again) or moved.
 * Every step is a draft revision (draft.created, then draft.revised with the
 * step in `change`), so the piece's history is its event stream.
 */

const MAX_EDIT_CHARS = 10_000;
type Change = NonNullable<DraftRevision['change']>;

export function createBuilderService(deps: {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  settings: SettingsService;
  retriever: Retriever;
  checker: FactChecker;
  llm?: Llm | undefined;
}) {
  const { store, commands, ids, clock, settings, retriever, checker, llm } = deps;
  const now = () => clock.now().toISOString();

  async function piece(orgId: string, id: unknown): Promise<DraftDoc> {
    const doc = isUuid(id) ? await store.get<DraftDoc>(DRAFTS, id.toLowerCase()) : undefined;
    if (!doc || doc.org_id !== orgId) throw errors.notFound('Draft');
    return doc;
  }
  /** A piece the caller works on or reads: 403 when it draws on folders outside the caller's scope. */
  async function scopedPiece(ctx: CallContext, id: unknown): Promise<DraftDoc> {
    const doc = await piece(ctx.org_id, id);
    requireWithin(doc.source_folder_ids, ctx.folder_scope, 'a piece');
    return doc;
  }

  async function context(orgId: string, draft: DraftDoc) {
    const type = await settings.contentType(orgId, draft.content_type_id).catch(() => {
      throw errors.unprocessable('The draft’s content type was deleted', { code: 'content_type_deleted' });
    });
    const kit = await store.get<BrandKitDoc>(BRAND_KITS, orgId);
    return { config: type.config as unknown as ContentTypeConfig, guidelines: (kit?.guidelines ?? {}) as Guidelines };
  }

  function section(draft: DraftDoc, sectionId: unknown): DraftSection {
    const found = draft.sections.find((s) => s.section_id === sectionId);
    if (!found) throw errors.notFound('Section');
    return found;
  }

  /** A new revision from changed sections: renumbered, rendered, totalled. */
  async function revise(
    ctx: CallContext,
    draft: DraftDoc,
    sections: VerifiedSection[],
    config: ContentTypeConfig,
    guidelines: Guidelines,
    change: Change,
  ) {
    const numbered: DraftSection[] = numberSentences(sections);
    const totals = totalsOf(numbered);
    // A run's warnings were about what the run drafted; a builder step is judged by its editor.
    const { id: _id, seq: _seq, created_at: _c, warnings: _w, ...current } = draft;
    const next: DraftRevision = {
      ...current,
      sections: numbered,
      body: renderBody(numbered, config, { bullets: guidelines.formatting?.bullet_lists === true }),
      description: describe(
        draft.title,
        numbered.flatMap((s) => s.sentences),
      ),
      source_content_ids: sourcesOf(numbered),
      totals,
      verification: totals.unsupported === 0 ? 'verified' : 'needs_review',
      actor: actorOf(ctx),
      change,
      at: now(),
    };
    await commands.transaction(metadataOf(ctx), (s) =>
      s.execute(draftDecider, draftStream(draft.draft_id), { type: 'revise', draft: next }),
    );
    return piece(ctx.org_id, draft.draft_id);
  }

  const scopeOf = (draft: DraftDoc) => ({ folder_ids: draft.source_folder_ids, tags: [], category_ids: [] });

  return {
    /** The outline: the content type's sections, empty, as revision 1. */
    async create(
      ctx: CallContext,
      input: { content_type_id?: unknown; title?: unknown; geo_question_id?: unknown; product_line_id?: unknown; folder_ids?: unknown },
    ) {
      if (input.content_type_id === undefined)
        throw errors.validation('content_type_id is required', { details: { field: 'content_type_id' } });
      const type = await settings.contentType(ctx.org_id, input.content_type_id);
      const line = input.product_line_id === undefined ? null : await settings.productLine(ctx.org_id, input.product_line_id);
      if (input.geo_question_id !== undefined && !isUuid(input.geo_question_id))
        throw errors.validation('geo_question_id must be a uuid', { details: { field: 'geo_question_id' } });
      const folders = input.folder_ids ?? [];
      if (!Array.isArray(folders) || folders.length > 50 || !folders.every(isUuid))
        throw errors.validation('folder_ids must be a list of at most 50 uuids', { details: { field: 'folder_ids' } });
      const title = input.title === undefined ? type.name : typeof input.title === 'string' ? input.title.trim() : '';
      if (!title || title.length > 300) throw errors.validation('title must be 1 to 300 characters', { details: { field: 'title' } });
      // No folder named: a scoped key draws on its whole scope, and the piece records it.
      const folder_ids = folders.length > 0 ? folders.map((f) => f.toLowerCase()) : (ctx.folder_scope ?? []);
      // The folders must exist and lie inside the key's scope.
      if (folders.length || ctx.folder_scope !== null)
        await retriever.retrieve(ctx, title, { folder_ids: folders.map((f) => f.toLowerCase()), tags: [], category_ids: [] }, 1);
      const config = type.config as unknown as ContentTypeConfig;
      const kit = await store.get<BrandKitDoc>(BRAND_KITS, ctx.org_id);
      const guidelines = (kit?.guidelines ?? {}) as Guidelines;
      const draftId = ids.uuid();
      const sections = config.sections.map((s, i) => ({ section_id: `s${i + 1}`, title: headingCase(s.title, guidelines), sentences: [] }));
      const draft: DraftRevision = {
        draft_id: draftId,
        org_id: ctx.org_id,
        revision: 1,
        content_type_id: type.content_type_id,
        content_kind: config.kind,
        ...(line && { product_line_id: line.product_line_id }),
        title,
        description: '',
        format: config.format,
        body: '',
        sections,
        target_prompt_ids: isUuid(input.geo_question_id) ? [input.geo_question_id.toLowerCase()] : [],
        source_folder_ids: folder_ids,
        source_content_ids: [],
        verification: 'verified',
        totals: { sentences: 0, factual: 0, supported: 0, unsupported: 0 },
        stale_sources: [],
        auto_publish: false,
        publish_destination_ids: config.publish_destination_ids,
        actor: actorOf(ctx),
        change: { kind: 'outlined' },
        at: now(),
      };
      await commands.transaction(metadataOf(ctx), (s) => s.execute(draftDecider, draftStream(draftId), { type: 'create', draft }));
      return piece(ctx.org_id, draftId);
    },

    /** (Re)generates one section from the knowledge base, in the brand kit's voice, fact-checked. */
    async generateSection(ctx: CallContext, input: { draft_id?: unknown; section_id?: unknown; instructions?: unknown }) {
      const draft = await scopedPiece(ctx, input.draft_id);
      const target = section(draft, input.section_id);
      const { config, guidelines } = await context(ctx.org_id, draft);
      if (input.instructions !== undefined && (typeof input.instructions !== 'string' || input.instructions.length > 4000))
        throw errors.validation('instructions must be a string of at most 4000 characters', { details: { field: 'instructions' } });
      // Section sN is the content type's Nth section wherever it stands now (moved, or others left out of a run's draft).
      const spec = config.sections[Number(/^s(\d+)$/.exec(target.section_id)?.[1] ?? 0) - 1] ?? { title: target.title };
      const query = [draft.title, target.title, spec.instructions, input.instructions].filter(Boolean).join(' ');
      const passages = await retriever.retrieve(ctx, query, scopeOf(draft), 8);
      if (passages.length === 0)
        throw errors.unprocessable('The knowledge base holds nothing for this section within the draft’s scope', {
          code: 'nothing_to_draw_on',
        });
      const input1 = { section_id: target.section_id, spec: { ...spec, title: target.title }, query, passages };
      const budget = { max_words: Math.max(30, Math.floor(config.target_length.max_words / Math.max(1, draft.sections.length))) };
      const [drafted] = llm
        ? await draftWithLlm(llm, [input1], guidelines, {
            title: draft.title,
            instructions: typeof input.instructions === 'string' ? input.instructions : undefined,
            max_words: budget.max_words,
          }).catch(() => draftExtractive([input1], guidelines, { kind: config.kind, target_length: { min_words: 0, ...budget } }))
        : draftExtractive([input1], guidelines, { kind: config.kind, target_length: { min_words: 0, ...budget } });
      if (drafted!.sentences.length === 0)
        throw errors.unprocessable('The knowledge base holds nothing on this section’s subject within the draft’s scope', {
          code: 'nothing_to_draw_on',
        });
      const [verified] = await verifySections({
        sections: [{ ...drafted!, title: target.title }],
        checker,
        retrieve: (claim, limit) => retriever.retrieve(ctx, claim, scopeOf(draft), limit),
        guidelines,
        config,
        llm,
      });
      const sections = draft.sections.map((s) => (s.section_id === target.section_id ? verified! : s));
      return revise(ctx, draft, sections, config, guidelines, { kind: 'section_generated', section_id: target.section_id });
    },

    /** A hand edit: the text replaces the section's sentences, each checked against the knowledge base. */
    async editSection(ctx: CallContext, input: { draft_id?: unknown; section_id?: unknown; title?: unknown; text?: unknown }) {
      const draft = await scopedPiece(ctx, input.draft_id);
      const target = section(draft, input.section_id);
      if (typeof input.text !== 'string' || input.text.length > MAX_EDIT_CHARS)
        throw errors.validation(`text must be a string of at most ${MAX_EDIT_CHARS} characters`, { details: { field: 'text' } });
      if (input.title !== undefined && (typeof input.title !== 'string' || !input.title.trim() || input.title.length > 200))
        throw errors.validation('title must be 1 to 200 characters', { details: { field: 'title' } });
      const { config, guidelines } = await context(ctx.org_id, draft);
      const retrieve = (claim: string, limit: number) => retriever.retrieve(ctx, claim, scopeOf(draft), limit);
      const sentences = [];
      for (const text of splitSentences(input.text)) {
        const check = await checkSentence(checker, text, [], retrieve, guidelines.preferred_terms ?? []);
        sentences.push({
          text,
          verdict: check.verdict,
          citations: check.verdict === 'supported' ? check.support.slice(0, 2).map(citationOf) : [],
        });
      }
      const edited = {
        section_id: target.section_id,
        title: typeof input.title === 'string' ? input.title.trim() : target.title,
        sentences,
      };
      const sections = draft.sections.map((s) => (s.section_id === target.section_id ? edited : s));
      return revise(ctx, draft, sections, config, guidelines, { kind: 'section_edited', section_id: target.section_id });
    },

    /** A new order of the sections: every section id once. */
    async reorder(ctx: CallContext, input: { draft_id?: unknown; section_ids?: unknown }) {
      const draft = await scopedPiece(ctx, input.draft_id);
      const order = input.section_ids;
      const have = draft.sections.map((s) => s.section_id);
      if (
        !Array.isArray(order) ||
        order.length !== have.length ||
        new Set(order).size !== have.length ||
        !order.every((id) => have.includes(id))
      )
        throw errors.validation(`section_ids must list each of the draft's sections once: ${have.join(', ')}`, {
          details: { field: 'section_ids' },
        });
      const { config, guidelines } = await context(ctx.org_id, draft);
      const sections = (order as string[]).map((id) => draft.sections.find((s) => s.section_id === id)!);
      return revise(ctx, draft, sections, config, guidelines, { kind: 'sections_reordered' });
    },

    /** Every revision of the piece, oldest first: what changed, who, when, and the totals after it. */
    async history(ctx: CallContext, input: { draft_id?: unknown }) {
      const draft = await scopedPiece(ctx, input.draft_id);
      const events = await store.readStream(draftStream(draft.draft_id));
      return {
        items: asStreamEvents<EventsNamed<'draft'>>(events).map((e) => {
          const full = e.type === 'draft.created' || e.type === 'draft.revised' ? e.data : undefined;
          return {
            revision: e.type === 'draft.deleted' ? null : e.data.revision,
            type: e.type,
            change:
              full?.change ??
              (e.type === 'draft.created'
                ? { kind: 'generated' }
                : e.type === 'draft.sources_stale'
                  ? { kind: 'sources_stale' }
                  : { kind: 'revised' }),
            actor: e.metadata.actor ?? null,
            at: e.data.at,
            ...(full && { totals: full.totals, verification: full.verification }),
          };
        }),
      };
    },
  };
}

export type BuilderService = ReturnType<typeof createBuilderService>;
