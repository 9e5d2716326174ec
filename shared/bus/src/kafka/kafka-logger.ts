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
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Connection (error|timeout|closed)|Closed connection|KafkaJSConnection|KafkaJSNumberOfRetriesExceeded|KafkaJSRequestTimeout|Request .* timed out|not connected|Restarting the consumer|Failed to connect|Failed to fetch metadata/i;
/**
 * A group moving its partitions, its coordinator moving or loading, a partition
 * electing its leader, a topic just created: routine (a broker that just started,
 * a member joining), though kafkajs says it at error.
 */
const ROUTINE =
  /rebalanc|NOT_COORDINATOR|COORDINATOR_LOAD_IN_PROGRESS|COORDINATOR_NOT_AVAILABLE|coordinator is (not available|loading)|not the correct coordinator|NOT_LEADER|LEADER_NOT_AVAILABLE|not the leader|no leader|does not host this topic-partition|UNKNOWN_TOPIC_OR_PARTITION/i;

/** How a kafkajs error reads: the broker is away, the cluster is moving things, or neither. */
export function kafkaTrouble(text: string): 'unreachable' | 'routine' | undefined {
  if (ROUTINE.test(text)) return 'routine';
  if (UNREACHABLE.test(text)) return 'unreachable';
  return undefined;
}

/**
 * Routes kafkajs's own logging into the injected pino logger as structured fields.
 * Errors and warnings that only say the broker cannot be reached go to the
 * outage log (one warn per outage) instead.
 */
export function kafkaLogCreator(logger: Logger, outage?: OutageLog): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      // kafkajs adds its own timestamp and logger name; pino already has both.
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log;
      const entry = { ...fields, kafka: namespace };
      if (outage && (level === logLevel.ERROR || level === logLevel.WARN)) {
        const trouble = kafkaTrouble(`${message} ${String(fields.error ?? '')}`);
        if (trouble === 'routine') {
          logger.info(entry, message);
          return;
        }
        if (trouble === 'unreachable') {
          outage.failed(fields.error ?? message, { kafka: namespace, detail: message });
          return;
        }
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
