import { errors } from '@kb/platform';
import type { CallContext, UnaryHandler } from '@kb/rpc';
import type { PiecesService } from '../app/pieces.js';
import type { DestinationsService } from '../app/destinations.js';
import type { DomainsService } from '../app/domains.js';
import type { SubscriptionsService } from '../app/subscriptions.js';
import type { OutcomesService } from '../app/outcomes.js';
import type { SitesService } from '../app/sites.js';
import { pageOf } from '../app/context.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type In = Record<string, any>;

/** JSON in, JSON out: the handler sees the parsed input and returns the response document. */
function json(fn: (input: In, ctx: CallContext) => Promise<unknown>): UnaryHandler {
  return async (r: { json?: string }, ctx) => {
    let input: In;
    try {
      input = r.json ? (JSON.parse(r.json) as In) : {};
    } catch {
      throw errors.validation('request is not JSON');
    }
    const result = await fn(input, ctx);
    return { json: JSON.stringify(result ?? null) };
  };
}

export function contentHandlers(pieces: PiecesService, outcomes: OutcomesService): Record<string, UnaryHandler> {
  return {
    ListPieces: json((i, ctx) => pieces.list(ctx, { ...pageOf(i), ...(i.status && { status: i.status }) })),
    ReviewQueue: json((i, ctx) => pieces.queue(ctx, pageOf(i))),
    GetPiece: json((i, ctx) => pieces.get(ctx, i.piece_id)),
    SubmitPiece: json((i, ctx) => pieces.submit(ctx, i.piece_id, i)),
    ApprovePiece: json((i, ctx) => pieces.approve(ctx, i.piece_id, i)),
    RejectPiece: json((i, ctx) => pieces.reject(ctx, i.piece_id, i)),
    PublishPiece: json((i, ctx) => pieces.publish(ctx, i.piece_id, i)),
    UnpublishPiece: json((i, ctx) => pieces.unpublish(ctx, i.piece_id, i)),
    PieceOutcome: json((i, ctx) => outcomes.outcome(ctx, i.piece_id)),
    MovedPieces: json((_i, ctx) => outcomes.moved(ctx)),
    CheckPublishers: json((i, ctx) => pieces.checkPublishers(ctx, i.destination_ids)),
  };
}

export function destinationHandlers(
  destinations: DestinationsService,
  domains: DomainsService,
  remove: (ctx: CallContext, id: string, onLive: 'leave' | 'unpublish' | 'delete') => Promise<void>,
): Record<string, UnaryHandler> {
  return {
    ListDestinations: json((_i, ctx) => destinations.list(ctx)),
    GetDestination: json((i, ctx) => destinations.get(ctx, i.destination_id)),
    CreateDestination: json((i, ctx) => destinations.create(ctx, i as never)),
    SetDestinationEnabled: json((i, ctx) => destinations.setEnabled(ctx, i.destination_id, i.enabled === true)),
    RemoveDestination: json((i, ctx) => remove(ctx, i.destination_id, i.on_live_content)),
    ListDestinationDeliveries: json((i, ctx) => destinations.deliveries(ctx, i.destination_id, pageOf(i))),
    ListDomains: json((_i, ctx) => domains.list(ctx)),
    GetDomain: json((i, ctx) => domains.get(ctx, i.domain_id)),
    RegisterDomain: json((i, ctx) => domains.register(ctx, i)),
    VerifyDomain: json((i, ctx) => domains.verify(ctx, i.domain_id)),
    RemoveDomain: json((i, ctx) => domains.remove(ctx, i.domain_id)),
  };
}

export function webhookHandlers(subscriptions: SubscriptionsService): Record<string, UnaryHandler> {
  return {
    ListSubscriptions: json((_i, ctx) => subscriptions.list(ctx)),
    GetSubscription: json((i, ctx) => subscriptions.get(ctx, i.subscription_id)),
    CreateSubscription: json((i, ctx) => subscriptions.create(ctx, i)),
    DeleteSubscription: json((i, ctx) => subscriptions.remove(ctx, i.subscription_id)),
    TestSubscription: json((i, ctx) => subscriptions.test(ctx, i.subscription_id, i)),
    ListSubscriptionDeliveries: json((i, ctx) => subscriptions.deliveries(ctx, i.subscription_id, pageOf(i))),
    Redeliver: json((i, ctx) => subscriptions.redeliver(ctx, i.delivery_id)),
  };
}

export function siteHandlers(sites: SitesService): Record<string, UnaryHandler> {
  return {
    Serve: async (r: { org_slug?: string; host?: string; path?: string }) =>
      sites.serve({ ...(r.org_slug && { org_slug: r.org_slug }), ...(r.host && { host: r.host }), path: r.path ?? '' }),
  };
}
