import type { Logger } from 'pino';

/**
 * The log of one dependency's outages (the broker, say): an outage is logged
 * once at warn when it starts and once at info when it ends, however many
 * calls fail meanwhile (those go to debug). Retry loops report every attempt
 * here instead of logging it, so a 70 s broker outage is two lines, not
 * thousands.
 */
export interface OutageLog {
  /** A call to the dependency failed. */
  failed(err: unknown, fields?: Record<string, unknown>): void;
  /** A call to the dependency succeeded: ends the outage, if any. */
  recovered(): void;
  /** Whether an outage is going on. */
  readonly down: boolean;
}

export function createOutageLog(
  logger: Logger,
  dependency: string,
  now: () => number = Date.now,
  /**
   * How long a recovery must hold before it is said (default 0: at once). A
   * dependency that comes back in steps (one client reconnects, another still
   * fails) is then one outage, not several.
   */
  settleMs = 0,
): OutageLog {
  let since: number | undefined;
  let failures = 0;
  let settling: NodeJS.Timeout | undefined;
  const end = () => {
    settling = undefined;
    if (since === undefined) return;
    logger.info({ dependency, down_ms: now() - since, failed_calls: failures }, `${dependency} available again`);
    since = undefined;
    failures = 0;
  };
  return {
    failed(err, fields = {}) {
      failures++;
      if (settling) {
        clearTimeout(settling);
        settling = undefined;
      }
      if (since !== undefined) {
        logger.debug({ ...fields, err, dependency }, `${dependency} still unavailable`);
        return;
      }
      since = now();
      logger.warn({ ...fields, err, dependency }, `${dependency} unavailable; retrying in the background (logged again when it recovers)`);
    },
    recovered() {
      if (since === undefined || settling) return;
      if (settleMs <= 0) return end();
      settling = setTimeout(end, settleMs);
      settling.unref();
    },
    get down() {
      return since !== undefined && settling === undefined;
    },
  };
}
