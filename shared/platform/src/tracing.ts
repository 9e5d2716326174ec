import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { isAppError } from './errors.js';

/**
 * The few tracing moves the kit needs, on the OpenTelemetry API only. Until
 * startTelemetry registers a provider and the W3C propagator, every one of them
 * is a no-op: no span is recorded and no trace context is read or written, so
 * telemetry stays off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */

export { SpanKind, type Context, type Span };

const tracer = () => trace.getTracer('kb');

/** The current trace context (ROOT when telemetry is off). */
export const activeContext = (): Context => context.active();

/** The W3C traceparent of the span in `ctx` (the active context by default), or undefined. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** A context whose current span is the remote parent named by these headers (`traceparent`, `tracestate`). */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** A context whose current span is the remote parent named by a W3C traceparent. */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

export interface StartedSpan {
  span: Span;
  /** `parent` with this span as the current one: run work in it, or derive its traceparent. */
  context: Context;
  /** This span as a W3C traceparent, to hand to the next hop (undefined when telemetry is off). */
  traceparent: string | undefined;
}

export interface SpanSettings {
  kind: SpanKind;
  attributes?: Attributes;
  /** When the span began, if before now (epoch ms): e.g. a job's time in its queue. */
  startTime?: number;
  /** Other spans this one follows from (a consumer's link to the producer of its message). */
  links?: Link[];
}

/** A link to the span that is current in `ctx` (none when there is none, e.g. telemetry off). */
export function linkTo(ctx: Context): Link[] {
  const spanContext = trace.getSpanContext(ctx);
  return spanContext ? [{ context: spanContext }] : [];
}

export function startSpan(name: string, options: SpanSettings, parent: Context): StartedSpan {
  const span = tracer().startSpan(name, options, parent);
  const ctx = trace.setSpan(parent, span);
  return { span, context: ctx, traceparent: traceparentOf(ctx) };
}

/**
 * Ends a span; a failure marks it as an error unless it is the caller's fault
 * (a 4xx AppError is an answer, not a fault of this service).
 */
export function endSpan(span: Span, err?: unknown): void {
  if (err !== undefined) {
    if (isAppError(err)) span.setAttribute('kb.error.code', err.code);
    if (!isAppError(err) || err.httpStatus >= 500) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

/** Runs `fn` in a child span of `parent` that is the active span meanwhile, so work inside it (appends) sees it. */
export async function inSpan<T>(
  name: string,
  options: SpanSettings,
  parent: Context,
  fn: (started: StartedSpan) => Promise<T>,
): Promise<T> {
  const started = startSpan(name, options, parent);
  try {
    const result = await context.with(started.context, () => fn(started));
    endSpan(started.span);
    return result;
  } catch (err) {
    endSpan(started.span, err);
    throw err;
  }
}
