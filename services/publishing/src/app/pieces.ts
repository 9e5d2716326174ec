import { errors, isAppError } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import { acquireLease, fold, releaseLease, type CommandSession } from '@kb/eventsourcing';
import type { DraftRevision } from '@kb/events';
import type { StoreTransaction } from '@kb/store';
import { checkGate, withinScope } from '../domain/gate.js';
import { pieceDecider, pieceStream } from '../domain/aggregates.js';
import { renderArticleBody, slugify } from '../domain/render.js';
import { sourceTitles } from '../projections/source-titles.js';
import type { DestinationAdapter, PublishEffect, ResolvedDestination } from '../destinations/port.js';
import { enqueueDelivery, webhookBody } from '../deliveries/outbox.js';
import {
  DELIVERIES,
  DESTINATIONS,
  DRAFTS,
  PAGES,
  PIECE_STATES,
  PUBLICATIONS,
  derivedUuid,
  pageId,
  type DeliveryDoc,
  type DeliveryPublication,
  type DestinationDoc,
  type DraftDoc,
  type PageDoc,
  type PieceStateDoc,
  KB_FOLDERS,
  type KbFolderDoc,
  type PublicationDoc,
} from '../projections/collections.js';
import { actorOf, metadataOf, type AppDeps, type Page } from './context.js';
import type { DestinationsService } from './destinations.js';
import type { SitesService } from './sites.js';

type Reader = Pick<StoreTransaction, 'get' | 'find' | 'count'>;

/** How long a publish may hold its piece, and how long another waits for it. */
const PUBLISH_LEASE_MS = 120_000;
const PUBLISH_WAIT_MS = 30_000;

/**
 * How long a publish call waits for a webhook destination's first delivery
 * attempt, so that the answer says live or failed rather than pending when
 * the receiver answers promptly.
 */
const ACK_WAIT_MS = 5_000;

export interface PublishOutcome {
  destination_id: string;
  type: string;
  /**
   * published: live (the destination acknowledged); pending: handed to a
   * destination that has not acknowledged yet (a webhook: retried until it
   * does or runs out of attempts); failed: not published there.
   */
  result: 'published' | 'pending' | 'unchanged' | 'failed';
  url?: string;
  error?: string;
  /** pending and failed webhooks: the delivery, its attempts so far and when the next one is due. */
  delivery_id?: string;
  attempts?: number;
  next_attempt_at?: string;
}

/** The content lifecycle (tag Content): review, the publish gate, publishing and taking down. */
export function createPiecesService(
  deps: AppDeps & {
    adapters: Record<string, DestinationAdapter>;
    destinations: DestinationsService;
    sites: SitesService;
    /** How long a publish waits for a webhook's first attempt (default ACK_WAIT_MS; 0 without a delivery worker). */
    ackWaitMs?: number;
  },
) {
  const { store, commands, clock, adapters, destinations, sites } = deps;
  const now = () => clock.now().toISOString();

  async function loadDraft(orgId: string, id: string, reader: Reader = store): Promise<DraftRevision> {
    const doc = await reader.get<DraftDoc>(DRAFTS, id);
    if (!doc || doc.deleted || doc.org_id !== orgId) throw errors.notFound('Piece');
    return doc.draft;
  }

  /** Each source folder's ancestors, nearest first, from the folder tree publishing keeps (KB_FOLDERS). */
  async function ancestorsOf(orgId: string, folderIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const id of folderIds) {
      const chain: string[] = [];
      let doc = await store.get<KbFolderDoc>(KB_FOLDERS, id);
      for (let depth = 0; doc && doc.org_id === orgId && doc.parent_id && depth < 100; depth++) {
        chain.push(doc.parent_id);
        doc = await store.get<KbFolderDoc>(KB_FOLDERS, doc.parent_id);
      }
      out.set(id, chain);
    }
    return out;
  }

  /** Whether the caller's folder scope covers everything the draft drew on (reads and writes alike). */
  async function inScope(ctx: CallContext, draft: DraftRevision): Promise<boolean> {
    if (ctx.folder_scope === null) return true;
    const ancestors = await ancestorsOf(ctx.org_id, draft.source_folder_ids);
    return withinScope(draft, ctx.folder_scope, (f) => ancestors.get(f) ?? []);
  }

  async function requireScope(ctx: CallContext, draft: DraftRevision, verb: 'publish' | 'read' = 'publish') {
    if (!(await inScope(ctx, draft)))
      throw errors.forbidden(`This key may not ${verb} content drawn from outside its folders`, { code: 'folder_scope' });
  }

  /** A piece's draft as the caller may read it: 404 when missing, 403 outside its folders. */
  async function readDraft(ctx: CallContext, id: string): Promise<DraftRevision> {
    const draft = await loadDraft(ctx.org_id, id);
    await requireScope(ctx, draft, 'read');
    return draft;
  }

  /** The drafts the caller's folder scope covers (all of them for an unscoped caller). */
  async function visibleTo(ctx: CallContext, docs: DraftDoc[]): Promise<DraftDoc[]> {
    if (ctx.folder_scope === null) return docs;
    const keep = await Promise.all(docs.map((d) => inScope(ctx, d.draft)));
    return docs.filter((_, i) => keep[i]);
  }

  async function view(orgId: string, id: string, reader: Reader = store) {
    const draft = await loadDraft(orgId, id, reader);
    const [state, publications] = await Promise.all([
      reader.get<PieceStateDoc>(PIECE_STATES, id),
      reader.find<PublicationDoc>(PUBLICATIONS, { where: { piece_id: id }, sort: [{ field: 'published_at', order: 'asc' }] }),
    ]);
    const gate = checkGate(draft);
    return {
      piece_id: draft.draft_id,
      revision: draft.revision,
      status: state?.status ?? 'draft',
      title: draft.title,
      description: draft.description,
      content_kind: draft.content_kind,
      content_type_id: draft.content_type_id,
      format: draft.format,
      body: draft.body,
      sections: draft.sections,
      verification: draft.verification,
      totals: draft.totals,
      target_prompt_ids: draft.target_prompt_ids,
      source_folder_ids: draft.source_folder_ids,
      source_content_ids: draft.source_content_ids,
      stale_sources: draft.stale_sources,
      publishable: gate.ok,
      unsupported_sentences: gate.sentences,
      reviewer: state?.reviewer ?? null,
      review_comment: state?.review_comment ?? null,
      approved_revision: state?.approved_revision ?? null,
      published_at: state?.published_at ?? null,
      publications: publications.map((p) => ({
        destination_id: p.destination_id,
        type: p.destination_type,
        status: p.status,
        revision: p.revision,
        ...(p.pending_revision !== undefined && { pending_revision: p.pending_revision }),
        ...(p.error !== undefined && { error: p.error }),
        url: p.url ?? null,
        published_at: p.published_at,
        updated_at: p.updated_at,
      })),
      history: state?.history ?? [],
      created_at: draft.at,
      updated_at: state?.updated_at ?? draft.at,
    };
  }

  /** The page slug: the one it already has on this site, else from the title (made unique on the site). */
  async function slugFor(orgId: string, draft: DraftRevision, reader: Reader): Promise<string> {
    const [existing] = await reader.find<PublicationDoc>(PUBLICATIONS, { where: { piece_id: draft.draft_id }, limit: 1 });
    if (existing) return existing.slug;
    const slug = slugify(draft.title);
    const taken = await reader.get<PageDoc>(PAGES, pageId(orgId, slug));
    return taken && taken.piece_id !== draft.draft_id ? `${slug}-${draft.draft_id.slice(0, 8)}` : slug;
  }

  async function targets(orgId: string, ids: string[] | undefined, reader: Reader = store): Promise<DestinationDoc[]> {
    if (ids && ids.length > 0) {
      const out: DestinationDoc[] = [];
      for (const id of [...new Set(ids)]) {
        const d = await destinations.load(orgId, id, reader);
        if (!(await destinations.enabledFor(orgId, d, reader)))
          throw errors.unprocessable(`Destination ${d.name} is switched off for this organization`, { code: 'destination_disabled' });
        out.push(d);
      }
      return out;
    }
    const set = await destinations.defaultSet(orgId, reader);
    if (set.length === 0)
      throw errors.unprocessable('No publisher: name destinations or enable one of the default shared set', { code: 'no_publisher' });
    return set;
  }

  /** Writes the effect's delivery (webhook destinations) in the session's transaction; true when one was queued. */
  async function queueEffect(
    s: CommandSession,
    orgId: string,
    d: DestinationDoc,
    effect: PublishEffect,
    deliveryId: string,
    publication?: DeliveryPublication,
  ) {
    if (!effect.delivery || !d.secret_ciphertext) return false;
    const at = now();
    await enqueueDelivery(s.tx, {
      id: deliveryId,
      ...(publication && { publication }),
      org_id: orgId,
      source: 'destination',
      target_id: d.id,
      url: String(d.config.url),
      secret_ciphertext: d.secret_ciphertext,
      event_type: effect.delivery.event_type,
      payload: webhookBody(effect.delivery.event_type, at, effect.delivery.payload),
      created_at: at,
      next_attempt_at: clock.now().getTime(),
    });
    deps.onDeliveriesQueued();
    return true;
  }

  /**
   * Publishes the latest revision to each target. Remote destinations are
   * called first; each success and each failure is recorded; a failure answers
   * 502 after the others committed.
   */
  /** Every check of a publish (the gate, approval, the destinations), with nothing written and no destination called. */
  async function preparePublish(ctx: CallContext, draft: DraftRevision, ids: string[] | undefined, auto: boolean) {
    const orgId = draft.org_id;
    const gate = checkGate(draft);
    const { state } = await store.transaction(async (tx) => {
      const events = await tx.readStream(pieceStream(draft.draft_id));
      return { state: fold(pieceDecider, events) };
    });
    // Dry run of the decision (gate, approval) before any destination is called.
    const who = { piece_id: draft.draft_id, org_id: orgId, revision: draft.revision, actor: actorOf(ctx), at: now() };
    pieceDecider.decide(
      { type: 'publish', gate, auto, destination: { destination_id: '', destination_type: '', slug: '' }, ...who },
      state,
    );
    const dests = await targets(orgId, ids);
    const slug = await slugFor(orgId, draft, store);
    const url = await sites.pageUrl(orgId, slug);
    return { orgId, gate, state, who, dests, slug, url };
  }

  /**
   * What a publish would do (dry run): per destination, whether it would be
   * published or left unchanged, the slug and URL, or why its configuration
   * would fail. No event, no delivery, no remote call.
   */
  async function planPublish(ctx: CallContext, draft: DraftRevision, ids: string[] | undefined) {
    const { state, dests, slug, url } = await preparePublish(ctx, draft, ids, false);
    const pubs = await store.find<PublicationDoc>(PUBLICATIONS, { where: { piece_id: draft.draft_id } });
    return dests.map((d) => {
      const base = { destination_id: d.id, type: d.type, name: d.name, slug };
      const pub = pubs.find((p) => p.destination_id === d.id);
      const known = d.type === 'hosted' ? (url ?? pub?.url) : pub?.url;
      const at = { ...base, url: known ?? null };
      if (state.live[d.id] === draft.revision) return { ...at, result: 'unchanged' as const };
      try {
        adapters[d.type]!.validateConfig(d.config);
        if (adapters[d.type]!.secret === 'required' && d.secret_ciphertext === undefined)
          throw errors.validation(`Destination ${d.name} has no secret`);
        destinations.resolve(d);
      } catch (err) {
        if (!isAppError(err)) throw err;
        return { ...at, result: 'would_fail' as const, error: err.message };
      }
      return { ...at, result: 'would_publish' as const };
    });
  }

  /**
   * One publish of a piece at a time, across replicas (a lease in the store):
   * two first publishes at once would otherwise both create a remote post. The
   * second waits, then finds the first's publication (unchanged, or an update
   * of the same remote post). 409 publish_in_progress after PUBLISH_WAIT_MS.
   */
  async function oneAtATime<T>(pieceId: string, fn: () => Promise<T>): Promise<T> {
    const name = `publish:${pieceId}`;
    const owner = deps.ids.uuid();
    const until = clock.now().getTime() + PUBLISH_WAIT_MS;
    while (!(await acquireLease(store, name, owner, PUBLISH_LEASE_MS, clock))) {
      if (clock.now().getTime() > until)
        throw errors.conflict('Another publish of this piece is in progress; retry shortly', { code: 'publish_in_progress' });
      await new Promise((r) => setTimeout(r, 50));
    }
    try {
      return await fn();
    } finally {
      await releaseLease(store, name, owner);
    }
  }

  async function publishInternal(ctx: CallContext, draft: DraftRevision, ids: string[] | undefined, auto: boolean) {
    return oneAtATime(draft.draft_id, () => publishLocked(ctx, draft, ids, auto));
  }

  async function publishLocked(ctx: CallContext, draft: DraftRevision, ids: string[] | undefined, auto: boolean) {
    const { orgId, gate, state, who, dests, slug, url } = await preparePublish(ctx, draft, ids, auto);
    // Remote destinations name each cited source by its knowledge-base title, as hosted pages do.
    const html = renderArticleBody(draft, await sourceTitles(store, orgId, draft.source_content_ids));
    const pubs = await store.find<PublicationDoc>(PUBLICATIONS, { where: { piece_id: draft.draft_id } });
    /** unchanged: already live there at this revision, or (awaiting) already on its way. */
    type Step = {
      d: DestinationDoc;
      effect?: PublishEffect;
      error?: string;
      unchanged?: boolean;
      awaiting?: boolean;
      delivery_id?: string;
    };
    const results: Step[] = [];
    for (const d of dests) {
      if (state.live[d.id] === draft.revision || state.pending[d.id] === draft.revision) {
        results.push({ d, unchanged: true, awaiting: state.pending[d.id] === draft.revision });
        continue;
      }
      const adapter = adapters[d.type]!;
      const pub = pubs.find((p) => p.destination_id === d.id);
      try {
        const effect = await adapter.publish(destinations.resolve(d), {
          draft,
          slug,
          html,
          ...(url && { canonical_url: url }),
          ...(pub?.remote_id && { remote_id: pub.remote_id }),
        });
        // A destination that acknowledges through a delivery (a webhook) is live only once it does.
        results.push({ d, effect, ...(effect.delivery && { delivery_id: deps.ids.uuid() }) });
      } catch (err) {
        if (!isAppError(err) || err.kind !== 'downstream') throw err;
        results.push({ d, error: err.message });
      }
    }
    await commands.transaction(metadataOf(ctx), async (s) => {
      for (const r of results) {
        if (r.unchanged) continue;
        if (r.error !== undefined) {
          await s.execute(pieceDecider, pieceStream(draft.draft_id), {
            type: 'record_failure',
            destination_id: r.d.id,
            error: r.error,
            ...who,
          });
          continue;
        }
        const effect = r.effect!;
        const destination = {
          destination_id: r.d.id,
          destination_type: r.d.type,
          slug,
          ...((effect.url ?? (r.d.type === 'hosted' ? url : undefined)) !== undefined && { url: effect.url ?? url! }),
          ...(effect.remote_id !== undefined && { remote_id: effect.remote_id }),
        };
        const { events } = await s.execute(pieceDecider, pieceStream(draft.draft_id), {
          type: 'publish',
          gate,
          auto,
          destination,
          ...(r.delivery_id !== undefined && { delivery_id: r.delivery_id }),
          ...who,
        });
        if (events.length > 0 && effect.delivery) {
          const { remote_id: _r, ...where } = destination;
          await queueEffect(s, orgId, r.d, effect, r.delivery_id!, { piece_id: draft.draft_id, revision: draft.revision, ...where });
        }
      }
    });
    return results;
  }

  /**
   * What each destination made of a publish: webhooks get a few seconds for
   * their first attempt, so a prompt receiver's answer (live, or the error of a
   * failed attempt) is in the response; a slower one is reported pending.
   */
  async function outcomesOf(pieceId: string, steps: Awaited<ReturnType<typeof publishLocked>>): Promise<PublishOutcome[]> {
    const queued = steps.flatMap((r) => (r.delivery_id !== undefined ? [r.delivery_id] : []));
    const until = Date.now() + (deps.ackWaitMs ?? ACK_WAIT_MS);
    let deliveries = new Map<string, DeliveryDoc>();
    for (;;) {
      const docs = await Promise.all(queued.map((id) => store.get<DeliveryDoc>(DELIVERIES, id)));
      deliveries = new Map(docs.filter((d): d is DeliveryDoc => d !== null).map((d) => [d.id, d]));
      const waiting = [...deliveries.values()].some((d) => d.status === 'pending' && d.attempts === 0);
      if (!waiting || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const pubs = await store.find<PublicationDoc>(PUBLICATIONS, { where: { piece_id: pieceId } });
    return steps.map((r): PublishOutcome => {
      const base = { destination_id: r.d.id, type: r.d.type };
      if (r.error !== undefined) return { ...base, result: 'failed', error: r.error };
      const pub = pubs.find((p) => p.destination_id === r.d.id);
      const url = pub?.url !== undefined ? { url: pub.url } : {};
      if (r.unchanged) return { ...base, ...url, result: r.awaiting ? 'pending' : 'unchanged' };
      const d = r.delivery_id !== undefined ? deliveries.get(r.delivery_id) : undefined;
      if (!d || d.status === 'delivered') return { ...base, ...url, result: 'published' };
      const last = d.log.at(-1);
      return {
        ...base,
        ...url,
        result: d.status === 'failed' ? 'failed' : 'pending',
        delivery_id: d.id,
        attempts: d.attempts,
        ...(last?.error != null && { error: last.error }),
        ...(d.status === 'pending' && d.attempts > 0 && { next_attempt_at: new Date(d.next_attempt_at).toISOString() }),
      };
    });
  }

  /**
   * Publishes and answers per destination. A destination that failed during
   * the call, or a webhook whose first attempt failed (it is retried), answers
   * 502 with every destination's result; the others committed.
   */
  async function publishAndReport(ctx: CallContext, draft: DraftRevision, ids: string[] | undefined, auto: boolean) {
    const steps = await publishInternal(ctx, draft, ids, auto);
    const outcomes = await outcomesOf(draft.draft_id, steps);
    const failed = outcomes.filter((o) => o.error !== undefined);
    if (failed.length > 0)
      throw errors.downstream(`Publishing failed on ${failed.length} destination(s): ${failed.map((f) => f.error).join('; ')}`, {
        code: 'destination_failed',
        details: { results: outcomes },
        publicDetails: true,
      });
    return outcomes;
  }

  /**
   * A queued publication's delivery was acknowledged or ran out of attempts
   * (called by the delivery worker in the transaction that settles it).
   */
  async function settlePublication(tx: StoreTransaction, delivery: DeliveryDoc, outcome: { ok: boolean; error: string | null }) {
    const p = delivery.publication!;
    const who = { piece_id: p.piece_id, org_id: delivery.org_id, revision: p.revision, actor: 'system:delivery', at: now() };
    const context = { metadata: { org_id: delivery.org_id, actor: who.actor, causation_id: delivery.id } };
    await commands.within(tx, context, (s) =>
      s.execute(
        pieceDecider,
        pieceStream(p.piece_id),
        outcome.ok
          ? {
              type: 'confirm',
              delivery_id: delivery.id,
              destination: {
                destination_id: p.destination_id,
                destination_type: p.destination_type,
                slug: p.slug,
                ...(p.url !== undefined && { url: p.url }),
              },
              ...who,
            }
          : {
              type: 'record_failure',
              delivery_id: delivery.id,
              destination_id: p.destination_id,
              error: `delivery failed after ${delivery.attempts} attempt(s): ${outcome.error ?? 'unknown error'}`,
              ...who,
            },
      ),
    );
  }

  /** Takes the piece off destinations (remote calls first; a failure is recorded and answers 502). */
  async function takeDown(
    ctx: CallContext,
    orgId: string,
    pubs: PublicationDoc[],
    mode: 'unpublish' | 'delete',
    /** More writes in the take-downs' transaction, given the ids of the deliveries the take-downs queued. */
    alsoIn?: (s: CommandSession, queued: string[]) => Promise<void>,
  ) {
    const done: { pub: PublicationDoc; d: DestinationDoc; resolved: ResolvedDestination; effect: PublishEffect }[] = [];
    const failures: { pub: PublicationDoc; error: string }[] = [];
    for (const pub of pubs) {
      const d = (await store.get<DestinationDoc>(DESTINATIONS, pub.destination_id))!;
      const resolved = destinations.resolve(d);
      try {
        const effect = await adapters[d.type]!.unpublish(
          resolved,
          { piece_id: pub.piece_id, revision: pub.revision, ...(pub.remote_id && { remote_id: pub.remote_id }) },
          mode,
        );
        done.push({ pub, d, resolved, effect });
      } catch (err) {
        if (!isAppError(err) || err.kind !== 'downstream') throw err;
        failures.push({ pub, error: err.message });
      }
    }
    await commands.transaction(metadataOf(ctx), async (s) => {
      const queued: string[] = [];
      for (const { pub, d, effect } of done) {
        const { events } = await s.execute(pieceDecider, pieceStream(pub.piece_id), {
          type: 'unpublish',
          destination_id: pub.destination_id,
          mode,
          piece_id: pub.piece_id,
          org_id: orgId,
          revision: pub.revision,
          actor: actorOf(ctx),
          at: now(),
        });
        if (events.length > 0) {
          const deliveryId = derivedUuid(`destination:${d.id}:${events[0]!.id}`);
          if (await queueEffect(s, orgId, d, effect, deliveryId)) queued.push(deliveryId);
        }
      }
      for (const f of failures)
        await s.execute(pieceDecider, pieceStream(f.pub.piece_id), {
          type: 'record_failure',
          destination_id: f.pub.destination_id,
          error: f.error,
          piece_id: f.pub.piece_id,
          org_id: orgId,
          revision: f.pub.revision,
          actor: actorOf(ctx),
          at: now(),
        });
      if (failures.length === 0 && alsoIn) await alsoIn(s, queued);
    });
    if (failures.length > 0)
      throw errors.downstream(`Taking the piece down failed: ${failures.map((f) => f.error).join('; ')}`, { code: 'destination_failed' });
  }

  async function review(ctx: CallContext, id: string, build: (draft: DraftRevision) => Parameters<typeof pieceDecider.decide>[0]) {
    await commands.transaction(metadataOf(ctx), async (s) => {
      const draft = await loadDraft(ctx.org_id, id, s.tx);
      await requireScope(ctx, draft);
      await s.execute(pieceDecider, pieceStream(id), build(draft));
    });
    return view(ctx.org_id, id);
  }

  const whoOf = (ctx: CallContext, draft: DraftRevision) => ({
    piece_id: draft.draft_id,
    org_id: draft.org_id,
    revision: draft.revision,
    actor: actorOf(ctx),
    at: now(),
  });

  return {
    view,
    loadDraft,
    readDraft,
    takeDown,
    settlePublication,
    async list(ctx: CallContext, q: { status?: string } & Page) {
      // A folder-scoped caller's list is filtered below, over every piece (the store cannot express the rule).
      if (q.status && ctx.folder_scope === null) {
        const where = q.status === 'draft' ? null : { org_id: ctx.org_id, status: q.status };
        if (where) {
          const [states, total_count] = await Promise.all([
            store.find<PieceStateDoc>(PIECE_STATES, {
              where,
              sort: [{ field: 'updated_at', order: 'desc' }],
              limit: q.limit,
              offset: q.offset,
            }),
            store.count(PIECE_STATES, where),
          ]);
          return {
            items: await Promise.all(states.map((s) => view(ctx.org_id, s.id).catch(() => null))).then((v) => v.filter((x) => x !== null)),
            total_count,
          };
        }
      }
      const found = await store.find<DraftDoc>(DRAFTS, {
        where: { org_id: ctx.org_id, deleted: false },
        sort: [{ field: 'seq', order: 'desc' }],
      });
      const all = await visibleTo(ctx, found);
      const views = await Promise.all(all.map((d) => view(ctx.org_id, d.id)));
      const filtered = q.status ? views.filter((v) => v.status === q.status) : views;
      return { items: filtered.slice(q.offset, q.offset + q.limit), total_count: filtered.length };
    },
    /** What waits for whom: pieces in review (for their reviewer, or anyone) and approved pieces waiting for a publisher. */
    async queue(ctx: CallContext, page: Page) {
      const states = await store.find<PieceStateDoc>(PIECE_STATES, {
        where: { org_id: ctx.org_id, status: { $in: ['in_review', 'approved'] } },
        sort: [{ field: 'updated_at', order: 'asc' }],
      });
      const items = [];
      for (const st of states) {
        const draft = await store.get<DraftDoc>(DRAFTS, st.id);
        if (!draft || draft.deleted || !(await inScope(ctx, draft.draft))) continue;
        const since =
          [...st.history].reverse().find((h) => h.event === (st.status === 'in_review' ? 'submitted' : 'approved'))?.at ?? st.updated_at;
        items.push({
          piece_id: st.id,
          title: draft.draft.title,
          status: st.status,
          waiting_for: st.status === 'in_review' ? (st.reviewer ?? 'any reviewer') : 'a publisher',
          waiting_since: since,
          revision: draft.revision,
          publishable: checkGate(draft.draft).ok,
        });
      }
      return { items: items.slice(page.offset, page.offset + page.limit), total_count: items.length };
    },
    async get(ctx: CallContext, id: string) {
      await readDraft(ctx, id);
      return view(ctx.org_id, id);
    },
    submit: (ctx: CallContext, id: string, input: { reviewer?: string; comment?: string }) =>
      review(ctx, id, (draft) => ({
        type: 'submit',
        ...whoOf(ctx, draft),
        ...(input.reviewer !== undefined && { reviewer: input.reviewer }),
        ...(input.comment !== undefined && { comment: input.comment }),
      })),
    approve: (ctx: CallContext, id: string, input: { comment?: string }) =>
      review(ctx, id, (draft) => ({
        type: 'approve',
        gate: checkGate(draft),
        ...whoOf(ctx, draft),
        ...(input.comment !== undefined && { comment: input.comment }),
      })),
    reject: (ctx: CallContext, id: string, input: { comment?: string }) => {
      const comment = (input.comment ?? '').trim();
      if (!comment) throw errors.validation('A rejection needs a comment', { details: { field: 'comment' } });
      return review(ctx, id, (draft) => ({ type: 'reject', comment, ...whoOf(ctx, draft) }));
    },
    async publish(ctx: CallContext, id: string, input: { destination_ids?: string[]; dry_run?: boolean }) {
      const draft = await loadDraft(ctx.org_id, id);
      await requireScope(ctx, draft);
      if (input.dry_run === true) {
        const planned = await planPublish(ctx, draft, input.destination_ids);
        return { ...(await view(ctx.org_id, id)), dry_run: true, results: planned };
      }
      const results = await publishAndReport(ctx, draft, input.destination_ids, false);
      return { ...(await view(ctx.org_id, id)), results };
    },
    /**
     * The destinations an auto-publish would go to (named and enabled, or the
     * default shared set), checked when auto-publish is switched on or a run that
     * will auto-publish starts: 422 no_publisher, destination_disabled, 404.
     */
    async checkPublishers(ctx: CallContext, ids: unknown) {
      if (ids !== undefined && (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')))
        throw errors.validation('destination_ids must be a list of ids');
      const found = await targets(ctx.org_id, ids as string[] | undefined);
      return { destinations: found.map((d) => ({ destination_id: d.id, name: d.name, type: d.type })) };
    },
    /** Auto-publish of a verified draft (the content type asked for it); failures are recorded on the piece. */
    async autoPublish(draft: DraftRevision) {
      const ctx: CallContext = {
        org_id: draft.org_id,
        principal: { type: 'system', id: 'auto-publish' },
        permissions: [],
        folder_scope: null,
        request_id: `auto-publish:${draft.draft_id}:${draft.revision}`,
      };
      try {
        await publishInternal(ctx, draft, draft.publish_destination_ids.length > 0 ? draft.publish_destination_ids : undefined, true);
      } catch (err) {
        if (!isAppError(err) || err.kind === 'downstream') return;
        await commands.transaction(metadataOf(ctx), (s) =>
          s.execute(pieceDecider, pieceStream(draft.draft_id), {
            type: 'record_failure',
            error: `${err.code}: ${err.message}`,
            ...whoOf(ctx, draft),
          }),
        );
      }
    },
    async unpublish(ctx: CallContext, id: string, input: { destination_ids?: string[]; mode?: 'unpublish' | 'delete' }) {
      const draft = await loadDraft(ctx.org_id, id);
      await requireScope(ctx, draft);
      const live = await store.find<PublicationDoc>(PUBLICATIONS, { where: { piece_id: id, status: 'live' } });
      const chosen =
        input.destination_ids && input.destination_ids.length > 0
          ? live.filter((p) => input.destination_ids!.includes(p.destination_id))
          : live;
      if (chosen.length === 0) throw errors.conflict('The piece is not live on those destinations', { code: 'not_published' });
      await takeDown(ctx, ctx.org_id, chosen, input.mode ?? 'unpublish');
      return view(ctx.org_id, id);
    },
  };
}

export type PiecesService = ReturnType<typeof createPiecesService>;
