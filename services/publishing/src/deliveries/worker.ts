import { AsyncResource } from 'node:async_hooks';
import type { Logger } from 'pino';
import type { Clock } from '@kb/platform';
import type { Store, StoreTransaction } from '@kb/store';
import { outboundFailureReason, redactUrl } from '@kb/platform/outbound';
import { webhookHeaders } from '../domain/signing.js';
import type { SecretBox } from '../app/secrets.js';
import { DELIVERIES, type DeliveryDoc } from '../projections/collections.js';
import type { WorkerLease } from './lease.js';

export interface DeliveryWorkerOptions {
  store: Store;
  lease: WorkerLease;
  secrets: SecretBox;
  clock: Clock;
  logger: Logger;
  tickMs: number;
  backoffMs: number;
  maxAttempts: number;
  timeoutMs: number;
  /** Parallel requests per tick. */
  concurrency?: number;
  /** The guarded fetch of @kb/platform/outbound in the service (user-given URLs). */
  fetch?: typeof fetch;
  /** Deliveries that carry a publication (a webhook destination's publish). */
  publications?: {
    /** Acknowledged or out of attempts: record it on the piece, in the transaction that settles the delivery. */
    settle(tx: StoreTransaction, delivery: DeliveryDoc, outcome: { ok: boolean; error: string | null }): Promise<void>;
    /** After that transaction committed (wakes the outbox relay). */
    committed(): void;
  };
}

/**
 * Sends due webhook deliveries: at least once, the same webhook-id on every
 * attempt, so a receiver that dedupes by it sees each exactly once. A delivery
 * is marked done only after the receiver answered 2xx; a crash in between
 * resends it on restart. Failures retry with exponential backoff up to
 * maxAttempts; every attempt is logged on the delivery.
 */
export function createDeliveryWorker(o: DeliveryWorkerOptions) {
  const doFetch = o.fetch ?? fetch;
  const concurrency = o.concurrency ?? 16;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  let again = false;

  async function attempt(d: DeliveryDoc): Promise<void> {
    const started = Date.now();
    const now = o.clock.now();
    const ts = Math.floor(now.getTime() / 1000);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await doFetch(d.url, {
        method: 'POST',
        headers: webhookHeaders(o.secrets.open(d.secret_ciphertext), d.id, ts, d.payload),
        body: d.payload,
        signal: AbortSignal.timeout(o.timeoutMs),
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 300 && res.status < 400) error = `receiver answered ${res.status} (redirects are not followed)`;
      else if (!res.ok) error = `receiver answered ${res.status}`;
    } catch (err) {
      error = outboundFailureReason(err).slice(0, 300);
    }
    const ok = error === null;
    let settled = false;
    await o.store.transaction(async (tx) => {
      settled = false;
      const cur = await tx.get<DeliveryDoc>(DELIVERIES, d.id);
      if (!cur || cur.status !== 'pending') return;
      const attempts = cur.attempts + 1;
      const log = [
        ...cur.log,
        { attempt: attempts, at: now.toISOString(), status_code: status, error, duration_ms: Date.now() - started },
      ].slice(-50);
      const after = o.clock.now().getTime();
      const next: DeliveryDoc = {
        ...cur,
        attempts,
        log,
        status: ok ? 'delivered' : attempts >= o.maxAttempts ? 'failed' : 'pending',
        next_attempt_at: ok ? cur.next_attempt_at : after + o.backoffMs * 2 ** (attempts - 1),
        ...(ok && { delivered_at: now.toISOString() }),
      };
      await tx.put<DeliveryDoc>(DELIVERIES, next);
      if (next.publication && next.status !== 'pending' && o.publications) {
        await o.publications.settle(tx, next, { ok, error });
        settled = true;
      }
    });
    if (settled) o.publications!.committed();
    if (!ok) o.logger.warn({ delivery: d.id, url: redactUrl(d.url), error }, 'webhook delivery failed');
  }

  /** One pass: everything due now, in order of due time. */
  async function tick(): Promise<number> {
    if (!(await o.lease.hold())) return 0;
    const now = o.clock.now().getTime();
    const pending = await o.store.find<DeliveryDoc>(DELIVERIES, {
      where: { status: 'pending' },
      sort: [{ field: 'next_attempt_at', order: 'asc' }],
      limit: 500,
    });
    const due = pending.filter((d) => d.next_attempt_at <= now);
    let next = 0;
    const lanes = Array.from({ length: Math.min(concurrency, due.length) }, async () => {
      while (next < due.length && !stopped) await attempt(due[next++]!);
    });
    await Promise.all(lanes);
    return due.length;
  }

  let busy = false;
  // Passes run in the context the worker was created in, never in that of the
  // transaction whose commit woke it (the store refuses nested transactions).
  const root = new AsyncResource('publishing.delivery-worker');
  const pass = root.bind(() => {
    running = run();
  });
  function schedule(ms: number) {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(pass, ms);
    timer.unref?.();
  }

  /** Passes never overlap: a delivery is never sent twice at once by one worker. */
  async function run(): Promise<void> {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    let n = 0;
    try {
      n = await tick();
    } catch (err) {
      o.logger.error({ err }, 'delivery worker pass failed');
    } finally {
      busy = false;
    }
    const more = n > 0 || again;
    again = false;
    schedule(more ? 0 : o.tickMs);
  }

  return {
    tick,
    start() {
      stopped = false;
      schedule(0);
    },
    /** Something was queued: look now rather than at the next tick. */
    notify() {
      if (stopped) return;
      if (busy) again = true;
      else schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
