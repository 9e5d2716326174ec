import type { Logger } from 'pino';
import { startEventConsumer } from '@kb/eventsourcing';
import { topics } from '@kb/events';
import type { EventBus, Subscription } from '@kb/bus';
import type { Store } from '@kb/store';
import type { Clock } from '@kb/platform';
import { ingestExtraUnits } from '../domain/ingest-metering.js';
import type { CreditsService } from './credits.js';

/**
 * Meters ingest by what was stored: each `content.extracted` (a version's text
 * stored as chunks) is charged the units beyond the one its request reserved
 * (see ingestExtraUnits), once per event (the consumer's inbox and the charge
 * commit together). The group reads the ingest topic from its beginning, so
 * versions extracted before metering first started on this store are skipped
 * (never a bill for history).
 */
export async function startIngestMetering(deps: {
  bus: EventBus;
  store: Store;
  credits: CreditsService;
  /** Credits per unit (CREDIT_COST_INGEST). */
  costPerUnit: number;
  /** Stored characters per unit (CREDIT_INGEST_CHARS). */
  charsPerUnit: number;
  logger: Logger;
  clock: Clock;
}): Promise<Subscription> {
  const since = await meteringSince(deps.store, deps.clock);
  return startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'gateway.ingest-metering',
    topics: [topics.ingest],
    logger: deps.logger,
    handlers: {
      'content.extracted': async (tx, event) => {
        const d = event.data;
        if (d.at < since) return;
        const amount = ingestExtraUnits(d.characters, deps.charsPerUnit) * deps.costPerUnit;
        if (amount === 0) return;
        await deps.credits.chargeWithin(tx, {
          org_id: d.org_id,
          charge_id: d.version_id,
          operation: 'ingest',
          amount,
          reason: `content ${d.content_id} version ${d.version_num}: ${d.characters.toLocaleString('en-US')} characters stored`,
        });
      },
    },
  });
}

const SETTINGS = 'gateway_settings';

/** When ingest metering first started on this store (recorded once). */
async function meteringSince(store: Store, clock: Clock): Promise<string> {
  return store.transaction(async (tx) => {
    const doc = await tx.get<{ id: string; since: string }>(SETTINGS, 'ingest-metering');
    if (doc) return doc.since;
    const since = clock.now().toISOString();
    await tx.put(SETTINGS, { id: 'ingest-metering', since });
    return since;
  });
}
