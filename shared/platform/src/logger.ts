import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LoggerSettings {
  level: string;
  /** Omitted for a process that hosts several services (each adds its own child binding). */
  service?: string;
  /** Where lines go; stdout when omitted (benchmarks pass a sink). */
  destination?: DestinationStream;
}

/** Structured JSON logs; one child per service so every line names its origin. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: settings.service ? { service: settings.service } : {},
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.password', '*.api_key', '*.secret'],
      censor: '[redacted]',
    },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
