import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { MeterProvider, MetricReader, type GaugeMetricData } from '@opentelemetry/sdk-metrics';
import { createLogger, fixedClock } from '@kb/platform';
import { createRelayHealth, OUTBOX_LAG_METRIC, type Backlog } from './relay-health.js';

/** Collects on demand, as the OTLP exporter's periodic reader would. */
class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

function setup(backlog: Backlog = { events: 54, bytes: 5_400_000, more: false }) {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Line);
      done();
    },
  });
  const clock = fixedClock('2026-11-28T03:00:00Z');
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  let counted = 0;
  const health = createRelayHealth({
    name: 'ingest',
    clock,
    logger: createLogger({ level: 'debug', destination: sink }),
    lagAlertMs: 60_000,
    failuresBeforeAlert: 5,
    meter: provider.getMeter('test'),
    countBehind: async () => {
      counted++;
      return backlog;
    },
  });
  const gauge = async () => {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === OUTBOX_LAG_METRIC) as
      GaugeMetricData | undefined;
    return metric?.dataPoints.map((p) => ({ value: p.value, attributes: p.attributes }));
  };
  return { health, clock, lines, gauge, counted: () => counted };
}

type Line = { level: number; msg: string; [field: string]: unknown };
const errorsIn = (lines: Line[]) => lines.filter((l) => l.level >= 50);

describe('outbox relay health', () => {
  it('is ready while events flow, and the gauge says how long the oldest unpublished event waited', async () => {
    const { health, clock, gauge } = setup();
    await health.check();
    assert.deepEqual(await gauge(), [{ value: 0, attributes: { 'service.name': 'ingest' } }]);
    health.waiting(clock.now().getTime());
    clock.advance(30_000);
    await health.check();
    assert.deepEqual(await gauge(), [{ value: 30, attributes: { 'service.name': 'ingest' } }]);
    health.caughtUp();
    await health.published();
    assert.equal((await gauge())?.[0]?.value, 0);
  });

  it('fails readiness once the oldest unpublished event is older than the threshold, saying what waits', async () => {
    const { health, clock, lines } = setup();
    health.waiting(clock.now().getTime());
    clock.advance(61_000);
    await assert.rejects(health.check(), (err: Error) => {
      assert.match(err.message, /outbox relay of ingest cannot advance: 54 events \(5\.4 MB\) behind; the oldest unpublished for 61 s/);
      return true;
    });
    assert.equal(health.status().failing, true);
    assert.equal(errorsIn(lines).length, 1);
  });

  it('fails readiness after repeated publish failures, and logs the incident once however often it is checked', async () => {
    const { health, clock, lines, counted } = setup();
    health.waiting(clock.now().getTime());
    const refusal = new Error('The request included a message larger than the max message size the server will accept');
    for (let i = 0; i < 4; i++) await health.failed(refusal);
    await health.check();
    assert.equal(errorsIn(lines).length, 0, 'a few failures are not an incident');
    for (let i = 0; i < 40; i++) {
      await health.failed(refusal);
      clock.advance(250);
    }
    await assert.rejects(health.check(), /44 publishes failed in a row, the last: The request included a message larger/);
    await assert.rejects(health.check());
    const logged = errorsIn(lines);
    assert.equal(logged.length, 1, 'one line per incident');
    assert.equal(logged[0]!.behind_events, 54);
    assert.equal(logged[0]!.behind_bytes, 5_400_000);
    assert.match(logged[0]!.msg, /54 events \(5\.4 MB\) behind/);
    assert.equal(counted(), 1, 'the backlog is counted once, not per failure or check');
  });

  it('ends the incident with one info line when publishing succeeds again', async () => {
    const { health, clock, lines } = setup();
    health.waiting(clock.now().getTime());
    for (let i = 0; i < 5; i++) await health.failed(new Error('refused'));
    await assert.rejects(health.check());
    clock.advance(5_000);
    health.caughtUp();
    await health.published();
    await health.check();
    const info = lines.filter((l) => l.level === 30);
    assert.equal(info.length, 1);
    assert.match(info[0]!.msg, /outbox relay of ingest advances again/);
    assert.equal(info[0]!.stuck_ms, 5_000);
    assert.deepEqual(health.status(), { failing: false, lagMs: 0, failures: 0 });
  });

  it('says nothing while another replica holds the lease', async () => {
    const { health, clock } = setup();
    health.waiting(clock.now().getTime());
    clock.advance(120_000);
    health.notHolding();
    await health.check();
  });
});
