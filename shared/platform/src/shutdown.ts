import type { Logger } from 'pino';

export type Closer = () => Promise<void> | void;

/**
 * Graceful shutdown: closers run in reverse order of registration (last started,
 * first stopped) once, on SIGINT/SIGTERM or when called.
 */
export function createShutdown(logger: Logger) {
  const closers: { name: string; close: Closer }[] = [];
  let closing: Promise<void> | undefined;

  const run = (): Promise<void> => {
    closing ??= (async () => {
      for (const { name, close } of closers.reverse()) {
        try {
          await close();
        } catch (err) {
          logger.error({ err, name }, 'error during shutdown');
        }
      }
    })();
    return closing;
  };

  return {
    add(name: string, close: Closer) {
      closers.push({ name, close });
    },
    run,
    onSignals() {
      const handler = (signal: string) => {
        logger.info({ signal }, 'shutting down');
        void run().then(() => process.exit(0));
      };
      process.once('SIGINT', handler);
      process.once('SIGTERM', handler);
    },
  };
}
