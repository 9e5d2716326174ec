import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LoggerSettings {
  level: string;
  service: string;
  pretty?: boolean;
}

/** Structured JSON logs; one child per service so every line names its origin. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { service: settings.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.password', '*.api_key', '*.secret'],
      censor: '[redacted]',
    },
  };
  return pino(options);
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
