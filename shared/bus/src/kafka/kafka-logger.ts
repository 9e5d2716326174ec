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
 * What kafkajs says, at error or warn, while the broker cannot be reached or its
 * groups move: every connection attempt, retry and consumer restart of every
 * client, many lines a second during an outage.
 */
const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Connection (error|timeout|closed)|Closed connection|KafkaJSConnection|KafkaJSNumberOfRetriesExceeded|KafkaJSRequestTimeout|Request .* timed out|not connected|Restarting the consumer|COORDINATOR_NOT_AVAILABLE|NOT_LEADER|LEADER_NOT_AVAILABLE|not the leader|There is no leader|Failed to connect|Failed to fetch metadata|no leader|not the leader/i;
/** A group moving its partitions, or its coordinator moving or loading (a broker that just started): routine, though kafkajs says it at error. */
const REBALANCING =
  /rebalanc|NOT_COORDINATOR|COORDINATOR_LOAD_IN_PROGRESS|coordinator is (not available|loading)|not the correct coordinator/i;

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
      const said = `${message} ${String(fields.error ?? '')}`;
      if (outage && (level === logLevel.ERROR || level === logLevel.WARN)) {
        if (REBALANCING.test(said)) {
          logger.info(entry, message);
          return;
        }
        if (UNREACHABLE.test(said)) {
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
