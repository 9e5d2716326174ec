import { applyHeapSettings, createLogger, createShutdown, loadConfigOrExit, startTelemetry } from '@kb/platform';
import { gatewayConfigSpec } from './config.js';
import { SERVICE_NAME, startGateway } from './service.js';

applyHeapSettings('gateway');

/** Standalone entry point (its own container in the distributed runtime). */
const config = loadConfigOrExit(gatewayConfigSpec, SERVICE_NAME);
const logger = createLogger({ level: config.LOG_LEVEL });
const telemetry = await startTelemetry({ serviceName: SERVICE_NAME, endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, logger });
const gateway = await startGateway({ config, logger });
logger.info({ url: gateway.url }, 'gateway listening');
const shutdown = createShutdown(logger);
shutdown.add('telemetry', () => telemetry.shutdown());
shutdown.add(SERVICE_NAME, () => gateway.stop());
shutdown.onSignals();
