import type { Logger } from 'pino';
import type { tracing } from '@opentelemetry/sdk-node';

export interface Telemetry {
  /** Exports what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

export type SpanExporter = tracing.SpanExporter;
export type MemorySpanExporter = tracing.InMemorySpanExporter;

export interface TelemetryOptions {
  serviceName: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: telemetry is off when it is unset. */
  endpoint: string | undefined;
  logger: Logger;
  /**
   * Replaces the OTLP exporter, e.g. with `createMemorySpanExporter()` in tests.
   * Spans then go out one by one as they end instead of in batches.
   */
  exporter?: SpanExporter;
  /** How often metrics are exported over OTLP (default 15 s). */
  metricIntervalMs?: number;
}

/**
 * OpenTelemetry bootstrap: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. The SDK is
 * imported lazily so the embedded runtime pays nothing for it.
 *
 * Only a tracer provider is registered (with the AsyncLocalStorage context manager
 * and the W3C propagator); there is no monkey-patching auto-instrumentation. The
 * services are ES modules whose transport libraries are imported before this runs,
 * so patching would be hit and miss. Instead the kit makes the spans that matter
 * itself, and carries the context explicitly: the gateway's HTTP span
 * (@kb/gateway), gRPC client and server spans with `traceparent` in the call
 * metadata (@kb/rpc), the event's `metadata.trace` stamped from the active span
 * (@kb/eventsourcing), and a consumer span continuing that trace on the bus.
 */
export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  if (!options.endpoint) return { shutdown: async () => {} };
  const { node, tracing, resources } = await import('@opentelemetry/sdk-node');
  let processor: tracing.SpanProcessor;
  if (options.exporter) processor = new tracing.SimpleSpanProcessor(options.exporter);
  else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/$/, '')}/v1/traces` });
    processor = new tracing.BatchSpanProcessor(exporter as unknown as SpanExporter);
  }
  const provider = new node.NodeTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [processor],
  });
  provider.register();
  // Metrics (e.g. the Kafka bus's consumer lag gauge) go to the same collector.
  // Set before the services start, since a meter taken earlier would be the no-op one.
  const meterProvider = options.exporter ? undefined : await startMetrics(options);
  options.logger.info({ endpoint: options.endpoint }, 'telemetry started');
  return {
    async shutdown() {
      await meterProvider?.shutdown();
      await provider.shutdown();
      // Unregister, so a later start in the same process (tests) gets a fresh provider.
      const api = await import('@opentelemetry/api');
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
      if (meterProvider) api.metrics.disable();
    },
  };
}

/** OTLP/HTTP metrics to `<endpoint>/v1/metrics`, every `metricIntervalMs` (default 15 s). */
async function startMetrics(options: TelemetryOptions) {
  const [{ metrics, resources }, { OTLPMetricExporter }, api] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/api'),
  ]);
  const exporter = new OTLPMetricExporter({ url: `${options.endpoint!.replace(/\/$/, '')}/v1/metrics` });
  const meterProvider = new metrics.MeterProvider({
    resource: resources.resourceFromAttributes({ 'service.name': options.serviceName }),
    readers: [
      new metrics.PeriodicExportingMetricReader({
        exporter: exporter as unknown as ConstructorParameters<typeof metrics.PeriodicExportingMetricReader>[0]['exporter'],
        exportIntervalMillis: options.metricIntervalMs ?? 15_000,
      }),
    ],
  });
  api.metrics.setGlobalMeterProvider(meterProvider);
  return meterProvider;
}

/** An exporter that keeps finished spans in memory, for tests that check what was traced. */
export async function createMemorySpanExporter(): Promise<MemorySpanExporter> {
  const { tracing } = await import('@opentelemetry/sdk-node');
  return new tracing.InMemorySpanExporter();
}
