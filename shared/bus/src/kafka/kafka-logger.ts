import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '@kb/platform';

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

/** Routes kafkajs's own logging into the injected pino logger as structured fields. */
export function kafkaLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      // kafkajs adds its own timestamp and logger name; pino already has both.
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log;
      const entry = { ...fields, kafka: namespace };
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
