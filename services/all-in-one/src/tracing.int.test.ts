import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemorySpanExporter, silentLogger, startTelemetry, systemClock } from '@kb/platform';
import { openStore } from '@kb/runtime';
import type { StoredEvent } from '@kb/store';
import { developmentDefaults, startSystem } from './system.js';

/**
 * The trace context travels gateway -> gRPC metadata -> event metadata -> bus
 * consumer, with telemetry on, and nothing is traced or stamped with it off.
 * The tests run in order in one process: "off" first, then telemetry is started.
 */

const CLIENT_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01`;
const SpanKind = { SERVER: 1, CLIENT: 2, CONSUMER: 4 } as const;

async function withSystem<T>(fn: (url: string, dir: string, stop: () => Promise<void>) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'kb-trace-'));
  const system = await startSystem({ env: { DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' }, logger: silentLogger() });
  let stopped = false;
  try {
    // The store is read after the stop (its file has one writer), so fn stops the system itself.
    return await fn(system.url, dir, async () => {
      await system.stop();
      stopped = true;
    });
  } finally {
    if (!stopped) await system.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/api/v1${path}`, {
    method: 'POST',
    headers: { 'x-api-key': developmentDefaults.BOOTSTRAP_API_KEY, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function eventsOf(dir: string, service: string): Promise<StoredEvent[]> {
  const store = await openStore({ DATA_DIR: dir, STORE: 'sqlite', BUS: 'sqlite' }, service, systemClock, silentLogger());
  try {
    return await store.readAll(0, 10_000);
  } finally {
    await store.close();
  }
}

async function eventually<T>(probe: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    assert.ok(Date.now() - start < timeoutMs, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('trace context propagation', () => {
  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT: a client traceparent is not passed on or stamped on events', async () => {
    await withSystem(async (url, dir, stop) => {
      const res = await post(url, '/categories', { name: 'Untraced' }, { traceparent: CLIENT_TRACEPARENT });
      assert.equal(res.status, 201);
      const { category_id } = (await res.json()) as { category_id: string };
      await stop();
      const event = (await eventsOf(dir, 'knowledge-base')).find((e) => e.data.category_id === category_id);
      assert.ok(event, 'category.created was stored');
      assert.equal(event.metadata.trace, undefined);
    });
  });

  it('with telemetry on, carries the trace from the HTTP request through gRPC into events and across the bus', async () => {
    const exporter = await createMemorySpanExporter();
    const telemetry = await startTelemetry({
      serviceName: 'kb-test',
      endpoint: 'http://127.0.0.1:4318',
      logger: silentLogger(),
      exporter,
    });
    try {
      await withSystem(async (url, dir, stop) => {
        const spans = () => exporter.getFinishedSpans();
        const parentOf = (s: { parentSpanContext?: { spanId: string } | undefined }) => s.parentSpanContext?.spanId;

        // 1. A category, under the client's own trace.
        const created = await post(
          url,
          '/categories',
          { name: 'Traced' },
          { traceparent: CLIENT_TRACEPARENT, 'x-request-id': 'trace-req-1' },
        );
        assert.equal(created.status, 201);
        const { category_id } = (await created.json()) as { category_id: string };

        const http = await eventually(
          () => spans().find((s) => s.kind === SpanKind.SERVER && s.name === 'POST /api/v1/categories'),
          'the gateway span',
        );
        assert.equal(http.spanContext().traceId, CLIENT_TRACE_ID, 'the gateway continues the client trace');
        assert.equal(parentOf(http), CLIENT_SPAN_ID);
        assert.equal(http.attributes['kb.request_id'], 'trace-req-1');
        assert.equal(http.attributes['http.response.status_code'], 201);

        const client = spans().find((s) => s.kind === SpanKind.CLIENT && parentOf(s) === http.spanContext().spanId);
        assert.ok(client, 'the gRPC client span is a child of the gateway span');
        assert.match(client.name, /CreateCategory$/);
        const server = spans().find((s) => s.kind === SpanKind.SERVER && parentOf(s) === client.spanContext().spanId);
        assert.ok(server, 'the knowledge-base server span is a child of the client span (traceparent in gRPC metadata)');
        assert.equal(server.name, 'knowledge_base.v1.CategoryService/CreateCategory');
        assert.equal(server.spanContext().traceId, CLIENT_TRACE_ID);

        // 2. A prompt: knowledge-base stores prompt.created, analytics consumes it from the bus.
        const prompt = await post(url, '/org/prompts', { name: 'Traced prompt', text: 'Which panels last longest?' });
        assert.equal(prompt.status, 201);
        const { prompt_id } = (await prompt.json()) as { prompt_id: string };
        const promptServer = await eventually(
          () => spans().find((s) => s.kind === SpanKind.SERVER && s.name.endsWith('/CreatePrompt')),
          'the CreatePrompt server span',
        );
        const consumer = await eventually(
          () => spans().find((s) => s.kind === SpanKind.CONSUMER && s.name === 'analytics.prompts prompt.created'),
          'the analytics consumer span',
        );
        assert.equal(parentOf(consumer), promptServer.spanContext().spanId, 'the consumer continues the trace of the event');
        assert.equal(consumer.spanContext().traceId, promptServer.spanContext().traceId);

        // 3. An upload: the extraction job has spans, and what it records continues the request's trace.
        const folder = await post(url, '/org/kb/folders', { name: 'Traced uploads' });
        assert.equal(folder.status, 201);
        const uploaded = await post(url, '/org/kb/raw', {
          title: 'Traced upload',
          text: 'A traced upload mentions aspirin.',
          parent_id: ((await folder.json()) as { kb_node_id: string }).kb_node_id,
        });
        assert.equal(uploaded.status, 202, await uploaded.clone().text());
        const uploadSpan = await eventually(
          () => spans().find((s) => s.kind === SpanKind.SERVER && s.name === 'POST /api/v1/org/kb/raw'),
          'the upload request span',
        );
        const traceId = uploadSpan.spanContext().traceId;
        const inTrace = () => spans().filter((s) => s.spanContext().traceId === traceId);
        const byName = (name: string) => inTrace().find((s) => s.name === name);
        const consumed = (type: string) => inTrace().find((s) => s.kind === SpanKind.CONSUMER && s.name.endsWith(` ${type}`));
        await eventually(
          () => (['content.processing_started', 'content.chunks_added', 'content.extracted'].every((t) => consumed(t)) ? true : undefined),
          "consumer spans of the job's events in the upload's trace",
        );
        for (const step of ['queued', 'extracting', 'stored']) assert.ok(byName(`ingest job ${step}`), `the job's ${step} span`);
        const queued = byName('ingest job queued')!;
        const started = consumed('content.processing_started')!;
        assert.equal(parentOf(started), queued.spanContext().spanId, 'processing_started was recorded in the queued span');
        assert.equal(started.links[0]?.context.spanId, queued.spanContext().spanId, 'the consumer span links to its producer');
        const stored = byName('ingest job stored')!;
        assert.equal(parentOf(consumed('content.extracted')!), stored.spanContext().spanId);
        // One tree: every span of the trace hangs off another of it, but the request's.
        const ids = new Set(inTrace().map((s) => s.spanContext().spanId));
        const roots = inTrace().filter((s) => !ids.has(parentOf(s) ?? ''));
        assert.deepEqual(
          roots.map((s) => s.name),
          ['POST /api/v1/org/kb/raw'],
        );

        // Events carry the span of the gRPC call that appended them.
        await stop();
        const kbEvents = await eventsOf(dir, 'knowledge-base');
        const categoryCreated = kbEvents.find((e) => e.type === 'category.created' && e.data.category_id === category_id);
        assert.equal(categoryCreated?.metadata.trace, `00-${CLIENT_TRACE_ID}-${server.spanContext().spanId}-01`);
        const promptCreated = kbEvents.find((e) => e.type === 'prompt.created' && e.data.prompt_id === prompt_id);
        assert.equal(promptCreated?.metadata.trace, `00-${promptServer.spanContext().traceId}-${promptServer.spanContext().spanId}-01`);
      });
    } finally {
      await telemetry.shutdown();
    }
  });
});
