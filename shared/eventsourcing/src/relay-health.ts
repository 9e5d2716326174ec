import type { Logger } from 'pino';
import type { Meter } from '@opentelemetry/api';
import type { Clock } from '@kb/platform';

/** The outbox lag gauge's name (OpenTelemetry): seconds the oldest unpublished event has waited, per service. */
export const OUTBOX_LAG_METRIC = 'messaging.outbox.lag';

export interface RelayStatus {
  /** Whether the relay counts as stuck (readiness `events` fails). */
  failing: boolean;
  /** How long the oldest unpublished event has waited, in ms (0: nothing waits). */
  lagMs: number;
  /** Publishes that failed in a row. */
  failures: number;
  /** The last publish error's message, while publishes fail. */
  lastError?: string;
}

export interface Backlog {
  events: number;
  /** Bytes of event data. */
  bytes: number;
  /** More than `events` wait (the count stopped early). */
  more: boolean;
}

export interface RelayHealthOptions {
  /** The relay's name (its service), an attribute of the gauge. */
  name: string;
  clock: Clock;
  logger: Logger;
  lagAlertMs: number;
  failuresBeforeAlert: number;
  meter: Meter;
  /** What waits to be published (counted once per incident and at most every 30 s while it lasts). */
  countBehind: () => Promise<Backlog>;
}

const RECOUNT_MS = 30_000;

const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;

/**
 * Whether an outbox relay advances: fed by the relay after each pass, read by
 * readiness (`check`) and the lag gauge. An incident (oldest unpublished event
 * older than `lagAlertMs`, or `failuresBeforeAlert` failed publishes in a row) is
 * logged once at error with what waits, and once at info when it ends.
 */
export function createRelayHealth(options: RelayHealthOptions) {
  const { clock, logger } = options;
  /** When the oldest unpublished event was recorded (ms), as of the last pass (undefined: caught up). */
  let oldest: number | undefined;
  let failures = 0;
  let lastError: string | undefined;
  /** When the current incident began (undefined: none). */
  let incidentSince: number | undefined;
  let backlog: { counted: number; value: Backlog } | undefined;

  const now = () => clock.now().getTime();
  const lagMs = () => (oldest === undefined ? 0 : Math.max(0, now() - oldest));
  const stuck = () => lagMs() > options.lagAlertMs || failures >= options.failuresBeforeAlert;

  async function behind(): Promise<Backlog | undefined> {
    if (backlog && now() - backlog.counted < RECOUNT_MS) return backlog.value;
    try {
      backlog = { counted: now(), value: await options.countBehind() };
      return backlog.value;
    } catch (err) {
      logger.debug({ err }, 'outbox backlog not counted');
      return backlog?.value;
    }
  }

  const describeBacklog = (b: Backlog | undefined) =>
    b ? `${b.more ? 'more than ' : ''}${b.events.toLocaleString('en-US')} events (${megabytes(b.bytes)}) behind` : 'behind';

  function reason(b: Backlog | undefined): string {
    const parts = [`outbox relay of ${options.name} cannot advance: ${describeBacklog(b)}`];
    if (oldest !== undefined) parts.push(`the oldest unpublished for ${Math.round(lagMs() / 1000)} s`);
    if (failures > 0) parts.push(`${failures} publishes failed in a row, the last: ${lastError ?? 'unknown error'}`);
    return parts.join('; ');
  }

  /** Starts or ends the incident as the state says, logging each edge once. */
  async function evaluate(): Promise<void> {
    if (stuck()) {
      if (incidentSince !== undefined) return;
      incidentSince = now();
      backlog = undefined;
      const b = await behind();
      logger.error(
        {
          outbox: options.name,
          behind_events: b?.events,
          behind_bytes: b?.bytes,
          lag_ms: lagMs(),
          failures,
          last_error: lastError,
        },
        `${reason(b)} (logged again when it advances)`,
      );
      return;
    }
    if (incidentSince === undefined) return;
    logger.info({ outbox: options.name, stuck_ms: now() - incidentSince }, `outbox relay of ${options.name} advances again`);
    incidentSince = undefined;
    backlog = undefined;
  }

  const gauge = options.meter.createObservableGauge(OUTBOX_LAG_METRIC, {
    description: 'how long the oldest event not yet published to the bus has waited in the outbox',
    unit: 's',
  });
  const observe = (result: { observe(value: number, attributes: Record<string, string>): void }) => {
    result.observe(lagMs() / 1000, { 'service.name': options.name });
  };
  gauge.addCallback(observe);

  return {
    /** A pass found events waiting, the first recorded at `recordedAt` (ms). */
    waiting(recordedAt: number) {
      oldest = recordedAt;
    },
    /** A pass found nothing waiting. */
    caughtUp() {
      oldest = undefined;
    },
    /** Another replica holds the lease and relays: this one has nothing to say. */
    notHolding() {
      oldest = undefined;
      failures = 0;
      lastError = undefined;
    },
    /** The relay published all it read, to the end of the outbox or the lease. */
    async published() {
      failures = 0;
      lastError = undefined;
      await evaluate();
    },
    async failed(err: unknown) {
      failures++;
      lastError = err instanceof Error ? err.message : String(err);
      await evaluate();
    },
    /** Resolves while the relay advances; rejects with the reason when it is stuck. */
    async check(): Promise<void> {
      await evaluate();
      if (incidentSince !== undefined) throw new Error(reason(await behind()));
    },
    status(): RelayStatus {
      return { failing: stuck(), lagMs: lagMs(), failures, ...(lastError !== undefined && { lastError }) };
    },
    close() {
      gauge.removeCallback(observe);
    },
  };
}
