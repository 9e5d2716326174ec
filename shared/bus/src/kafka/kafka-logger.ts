import { logLevel, type logCreator } from 'kafkajs';
import type { Logger, OutageLog } from '@kb/platform';

/** The kafkajs level matching the pino logger's, so kafkajs does not format lines pino would drop. */
export function kafkaLogLevel(logger: Logger): logLevel {
  switch (logger.level) {
    case 'silent':
      return logLevel.NOTHING;
    case 'fatal':
    case 'error':
      return logLevel.ERROR;
    case 'warn':
      return logLevel.WARN;
    case 'info':
      return logLevel.INFO;
    default:
      return logLevel.DEBUG;
  }
}

/**
 * What kafkajs says, at error or warn, while the broker cannot be reached: every
 * connection attempt, retry and consumer restart of every client, many lines a
 * second during an outage.
 */
const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Connection (error|timeout|closed)|Closed connection|KafkaJSConnection|KafkaJSNumberOfRetriesExceeded|KafkaJSRequestTimeout|Request .* timed out|not connected|Failed to connect|Failed to fetch metadata/i;
/**
 * A group moving its partitions, its coordinator moving or loading, a partition
 * electing its leader, a topic just created: routine (a broker that just started,
 * a member joining), though kafkajs says it at error.
 */
const ROUTINE =
  /rebalanc|NOT_COORDINATOR|COORDINATOR_LOAD_IN_PROGRESS|COORDINATOR_NOT_AVAILABLE|coordinator is (not available|loading)|not the correct coordinator|NOT_LEADER|LEADER_NOT_AVAILABLE|not the leader|no leader|does not host this topic-partition|UNKNOWN_TOPIC_OR_PARTITION/i;

/**
 * Errors the bus itself handles, which kafkajs logs at error for every response
 * that carries them: a topic another client created a moment before (every
 * start of several services at once), and a record batch over the broker's
 * limit (the bus sends it again in halves; a single message over it fails the
 * publish, which its caller reports), and a consumer restarting after a crash
 * (the crash's own line says why: the broker away, or its coordinator loading).
 */
const HANDLED =
  /Restarting the consumer|Topic creation errors|TOPIC_ALREADY_EXISTS|already exists|larger than the max message size|MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE/i;

/** How a kafkajs error reads: the broker is away, the cluster is moving things, the bus handles it, or none of these. */
export function kafkaTrouble(text: string): 'unreachable' | 'routine' | 'handled' | undefined {
  if (HANDLED.test(text)) return 'handled';
  if (ROUTINE.test(text)) return 'routine';
  if (UNREACHABLE.test(text)) return 'unreachable';
  return undefined;
}

/** The same error or warning line (namespace, message, error) is written at most once per this interval. */
export const REPEAT_INTERVAL_MS = 60_000;

/**
 * Routes kafkajs's own logging into the injected pino logger as structured fields.
 * Errors and warnings that only say the broker cannot be reached go to the
 * outage log (one warn per outage) instead; errors the bus handles go to debug;
 * any other error or warning repeated is written once per REPEAT_INTERVAL_MS,
 * with how many times it came meanwhile (`repeated`).
 */
export function kafkaLogCreator(logger: Logger, outage?: OutageLog, now: () => number = Date.now): logCreator {
  /** Per line: when it was last written and how often it came since. */
  const recent = new Map<string, { at: number; repeated: number }>();
  /** Whether a line may be written now; counts it otherwise. */
  const due = (key: string, entry: Record<string, unknown>): boolean => {
    const t = now();
    const seen = recent.get(key);
    if (seen && t - seen.at < REPEAT_INTERVAL_MS) {
      seen.repeated++;
      return false;
    }
    if (seen?.repeated) entry.repeated = seen.repeated;
    recent.set(key, { at: t, repeated: 0 });
    // Old lines are forgotten so the map stays small.
    if (recent.size > 500) for (const [k, v] of recent) if (t - v.at >= REPEAT_INTERVAL_MS) recent.delete(k);
    return true;
  };
  return () =>
    ({ namespace, level, log }) => {
      // kafkajs adds its own timestamp and logger name; pino already has both.
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log;
      const entry: Record<string, unknown> = { ...fields, kafka: namespace };
      if (level === logLevel.ERROR || level === logLevel.WARN) {
        const trouble = kafkaTrouble(`${message} ${String(fields.error ?? '')}`);
        if (trouble === 'handled') {
          logger.debug(entry, message);
          return;
        }
        if (outage && trouble === 'routine') {
          logger.info(entry, message);
          return;
        }
        if (outage && trouble === 'unreachable') {
          outage.failed(fields.error ?? message, { kafka: namespace, detail: message });
          return;
        }
        if (!due(`${namespace}|${message}|${String(fields.error ?? '')}`, entry)) return;
      }
      switch (level) {
        case logLevel.ERROR:
        case logLevel.NOTHING:
          logger.error(entry, message);
          break;
        case logLevel.WARN:
          logger.warn(entry, message);
          break;
        case logLevel.INFO:
          logger.info(entry, message);
          break;
        default:
          logger.debug(entry, message);
      }
    };
}
