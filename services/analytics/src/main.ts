import { applyHeapSettings, createLogger, createShutdown, loadConfigOrExit, startTelemetry } from '@kb/platform';
import { analyticsConfigSpec } from './config.js';
import { SERVICE_NAME, startAnalytics } from './service.js';

applyHeapSettings('analytics');

/** Standalone entry point (one container per service in the distributed runtime). */
const config = loadConfigOrExit(analyticsConfigSpec, SERVICE_NAME);
const logger = createLogger({ level: config.LOG_LEVEL });
const telemetry = await startTelemetry({ serviceName: SERVICE_NAME, endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, logger });
const service = await startAnalytics({ config, logger });
const shutdown = createShutdown(logger);
shutdown.add('telemetry', () => telemetry.shutdown());
shutdown.add(SERVICE_NAME, () => service.stop());
shutdown.onSignals();
