import { applyHeapSettings, createLogger, createShutdown, loadConfigOrExit, startTelemetry } from '@kb/platform';
import { generationConfigSpec } from './config.js';
import { SERVICE_NAME, startGeneration } from './service.js';

applyHeapSettings('generation');

/** Standalone entry point (one container per service in the distributed runtime). */
const config = loadConfigOrExit(generationConfigSpec, SERVICE_NAME);
const logger = createLogger({ level: config.LOG_LEVEL });
const telemetry = await startTelemetry({ serviceName: SERVICE_NAME, endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, logger });
const service = await startGeneration({ config, logger });
const shutdown = createShutdown(logger);
shutdown.add('telemetry', () => telemetry.shutdown());
shutdown.add(SERVICE_NAME, () => service.stop());
shutdown.onSignals();
