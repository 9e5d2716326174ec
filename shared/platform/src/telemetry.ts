import type { Logger } from 'pino';

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry bootstrap: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. The SDK is
 * imported lazily so the embedded runtime pays nothing for it. HTTP and gRPC
 * instrumentation carry the trace context across the gateway -> service hops.
 */
export async function startTelemetry(options: { serviceName: string; endpoint: string | undefined; logger: Logger }): Promise<Telemetry> {
  if (!options.endpoint) return { shutdown: async () => {} };
  const [{ NodeSDK }, { OTLPTraceExporter }, { HttpInstrumentation }, { GrpcInstrumentation }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-grpc'),
      import('@opentelemetry/resources'),
    ]);
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    traceExporter: new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/$/, '')}/v1/traces` }),
    instrumentations: [new HttpInstrumentation(), new GrpcInstrumentation()],
  });
  sdk.start();
  options.logger.info({ endpoint: options.endpoint }, 'telemetry started');
  return { shutdown: () => sdk.shutdown() };
}
