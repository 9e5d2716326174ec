import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { AsyncResource } from 'node:async_hooks';
import type { Logger } from 'pino';
import { errors, type Clock, type IdGenerator } from '@kb/platform';
import { createOutboundFetch, type ResolveAll } from '@kb/platform/outbound';
import { topics } from '@kb/events';
import { createRpcClient, loadProto, serviceConstructor, type CallContext } from '@kb/rpc';
import { grpcServer, startService } from '@kb/runtime';
import type { Subscription } from '@kb/bus';
import type { PublishingConfig } from './config.js';
import { publishingProjections } from './projections/index.js';
import { DRAFTS, PUBLICATIONS, type DraftDoc, type PublicationDoc } from './projections/collections.js';
import { createSecretBox } from './app/secrets.js';
import { metadataOf, type AppDeps } from './app/context.js';
import { createDestinationsService } from './app/destinations.js';
import { createSitesService } from './app/sites.js';
import { createPiecesService } from './app/pieces.js';
import { createDomainsService, type TxtResolver } from './app/domains.js';
import { createSubscriptionsService } from './app/subscriptions.js';
import { createAnalyticsPromptFigures, createOutcomesService, type PromptFigures } from './app/outcomes.js';
import { createHostedAdapter } from './destinations/hosted.js';
import { createWebhookAdapter } from './destinations/webhook.js';
import { createWordPressAdapter } from './destinations/wordpress.js';
import { createGhostAdapter } from './destinations/ghost.js';
import type { DestinationAdapter } from './destinations/port.js';
import { createDeliveryWorker } from './deliveries/worker.js';
import { createStoreWorkerLease } from './deliveries/lease.js';
import { AUTO_PUBLISH, startPublishingConsumers, type AutoPublishDoc } from './transport/consumers.js';
import { startSourceTitles } from './projections/source-titles.js';
import { contentHandlers, destinationHandlers, siteHandlers, webhookHandlers } from './transport/grpc.js';

export const SERVICE_NAME = 'publishing';

export interface RunningService {
  address: string;
  stop(): Promise<void>;
}

/** Composition root: adapters from config, use cases, gRPC, consumers, the delivery worker and the auto-publisher. */
export async function startPublishing(options: {
  config: PublishingConfig;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
  /** Overrides the DNS resolver (tests). */
  resolver?: TxtResolver;
  /** Overrides the analytics port (tests). */
  figures?: PromptFigures;
}): Promise<RunningService> {
  return startService<PublishingConfig>(
    {
      name: SERVICE_NAME,
      topic: topics.publishing,
      projections: publishingProjections,
      async compose(ctx) {
        const { config, store, bus, core, clock, ids, logger } = ctx;
        await store.ensureIndex(DRAFTS, ['org_id', 'deleted']);
        await store.ensureIndex('publishing_deliveries', ['status', 'next_attempt_at']);
        await store.ensureIndex('publishing_deliveries', ['org_id', 'target_id']);

        const secrets = createSecretBox(config.PUBLISHING_SECRET_KEY);
        // Every call to a user-given URL (webhooks, WordPress, Ghost) goes through the address policy.
        const policy = { allowPrivate: config.ALLOW_PRIVATE_DESTINATIONS };
        if (policy.allowPrivate)
          logger.warn('ALLOW_PRIVATE_DESTINATIONS is on: destinations and webhooks may reach loopback and private addresses');
        const outboundFetch = createOutboundFetch({
          policy,
          connectTimeoutMs: config.DELIVERY_TIMEOUT_MS,
          ...(config.DNS_SERVERS && { resolveAll: resolveWith(config.DNS_SERVERS.split(',')) }),
        });
        const owner = `${hostname()}:${process.pid}:${ids.uuid()}`;
        const worker = createDeliveryWorker({
          store,
          lease: createStoreWorkerLease({
            store,
            name: 'publishing.deliveries',
            owner,
            ttlMs: config.DELIVERY_TIMEOUT_MS * 3,
            clock,
          }),
          secrets,
          clock,
          logger,
          tickMs: config.DELIVERY_TICK_MS,
          backoffMs: config.DELIVERY_BACKOFF_MS,
          maxAttempts: config.DELIVERY_MAX_ATTEMPTS,
          timeoutMs: config.DELIVERY_TIMEOUT_MS,
          fetch: outboundFetch,
          publications: {
            settle: (tx, delivery, outcome) => pieces.settlePublication(tx, delivery, outcome),
            committed: () => core.relay.notify(),
          },
        });
        const deps: AppDeps = { store, commands: core.commands, ids, clock, secrets, onDeliveriesQueued: () => worker.notify() };
        const adapters: Record<string, DestinationAdapter> = {
          hosted: createHostedAdapter(),
          webhook: createWebhookAdapter({ policy }),
          wordpress: createWordPressAdapter({ timeoutMs: config.DELIVERY_TIMEOUT_MS, policy, fetch: outboundFetch }),
          ghost: createGhostAdapter({
            timeoutMs: config.DELIVERY_TIMEOUT_MS,
            policy,
            fetch: outboundFetch,
            now: () => clock.now().getTime(),
          }),
        };
        const destinations = createDestinationsService({ ...deps, adapters });
        const sites = createSitesService({ store, publicBaseUrl: config.PUBLIC_BASE_URL });
        const pieces = createPiecesService({ ...deps, adapters, destinations, sites });
        let resolver = options.resolver;
        if (!resolver) {
          const r = new Resolver();
          if (config.DNS_SERVERS) r.setServers(config.DNS_SERVERS.split(','));
          resolver = r;
        }
        const domains = createDomainsService({
          ...deps,
          resolver,
          random: randomBytes,
          verificationTtlSeconds: config.DOMAIN_VERIFICATION_TTL_SECONDS,
        });
        const subscriptions = createSubscriptionsService({ ...deps, policy });
        const analytics = createRpcClient(serviceConstructor(loadProto('analytics.proto'), 'analytics.v1.ReportService'), {
          address: config.ANALYTICS_GRPC,
          internalToken: config.INTERNAL_TOKEN,
          name: 'analytics',
        });
        const outcomes = createOutcomesService({ ...deps, figures: options.figures ?? createAnalyticsPromptFigures(analytics), pieces });

        /** Removal takes a choice for live content, applied to every piece live there, in the removal's transaction. */
        async function removeDestination(ctx: CallContext, id: string, onLive: 'leave' | 'unpublish' | 'delete') {
          const d = await destinations.load(ctx.org_id, id);
          if (onLive !== 'leave' && onLive !== 'unpublish' && onLive !== 'delete')
            throw errors.validation('on_live_content is required: leave, unpublish or delete', { details: { field: 'on_live_content' } });
          const live =
            onLive === 'leave'
              ? []
              : await store.find<PublicationDoc>(PUBLICATIONS, { where: { org_id: ctx.org_id, destination_id: id, status: 'live' } });
          if (live.length === 0) await core.commands.transaction(metadataOf(ctx), (s) => destinations.removeIn(s, ctx, d, onLive));
          else
            await pieces.takeDown(ctx, ctx.org_id, live, onLive as 'unpublish' | 'delete', (s, queued) =>
              destinations.removeIn(s, ctx, d, onLive, queued),
            );
        }

        // The auto-publisher: verified drafts that asked for it, published outside the consumer's transaction.
        let autoTimer: NodeJS.Timeout | undefined;
        let autoRunning: Promise<void> = Promise.resolve();
        let autoBusy = false;
        let stopped = false;
        const autoPass = async () => {
          if (autoBusy || stopped) return;
          autoBusy = true;
          try {
            const pending = await store.find<AutoPublishDoc>(AUTO_PUBLISH, { where: { status: 'pending' }, limit: 50 });
            for (const job of pending) {
              const doc = await store.get<DraftDoc>(DRAFTS, job.draft_id);
              if (doc && !doc.deleted && doc.revision === job.revision) await pieces.autoPublish(doc.draft);
              await store.transaction((tx) => tx.put<AutoPublishDoc>(AUTO_PUBLISH, { ...job, status: 'done' }));
            }
          } catch (err) {
            logger.error({ err }, 'auto-publish pass failed');
          } finally {
            autoBusy = false;
          }
        };
        // Runs in the service's own context, never in that of the consumer transaction that woke it.
        const autoRoot = new AsyncResource('publishing.auto-publish');
        const autoTick = autoRoot.bind(() => {
          autoRunning = autoPass().then(() => scheduleAuto(config.DELIVERY_TICK_MS));
        });
        const scheduleAuto = (ms: number) => {
          if (stopped) return;
          clearTimeout(autoTimer);
          autoTimer = setTimeout(autoTick, ms);
          autoTimer.unref?.();
        };

        let consumers: Subscription[] = [];
        return {
          server: grpcServer(ctx, (server) => {
            const proto = loadProto('publishing.proto');
            server.addService(serviceConstructor(proto, 'publishing.v1.ContentService'), contentHandlers(pieces, outcomes));
            server.addService(
              serviceConstructor(proto, 'publishing.v1.DestinationService'),
              destinationHandlers(destinations, domains, removeDestination),
            );
            server.addService(serviceConstructor(proto, 'publishing.v1.WebhookService'), webhookHandlers(subscriptions));
            server.addService(serviceConstructor(proto, 'publishing.v1.SiteService'), siteHandlers(sites));
          }),
          parts: [
            { start: () => destinations.seedShared() },
            {
              start: async () => {
                consumers = await startPublishingConsumers({
                  bus,
                  store,
                  logger,
                  subscriptions,
                  onAutoPublish: () => scheduleAuto(50),
                  onDeliveriesQueued: () => worker.notify(),
                });
                consumers.push(await startSourceTitles({ bus, store, logger }));
              },
              stop: async () => {
                for (const c of consumers) await c.stop();
              },
            },
            { start: () => worker.start(), stop: () => worker.stop() },
            {
              start: () => scheduleAuto(0),
              stop: async () => {
                stopped = true;
                clearTimeout(autoTimer);
                await autoRunning;
              },
            },
          ],
          resources: [() => analytics.close(), () => outboundFetch.close()],
        };
      },
    },
    options,
  );
}

/** Names resolved through the DNS servers of DNS_SERVERS (A and AAAA), for the outbound address policy. */
function resolveWith(servers: string[]): ResolveAll {
  const r = new Resolver();
  r.setServers(servers);
  const none = (err: NodeJS.ErrnoException) => (err.code === 'ENODATA' || err.code === 'ENOTFOUND' ? [] : Promise.reject(err));
  return async (hostname) => {
    const [v4, v6] = await Promise.all([r.resolve4(hostname).catch(none), r.resolve6(hostname).catch(none)]);
    const all = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
    if (all.length === 0) throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' });
    return all;
  };
}
