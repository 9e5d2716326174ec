import { afterAll, beforeAll, beforeEach, it } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { AssignerProtocol, Kafka, logLevel } from 'kafkajs';
import { topics } from '@kb/events';
import { consumerGroupLag } from '@kb/bus/kafka';
import { checkHealth } from '@kb/rpc';
import {
  KafkaBroker,
  RunLogs,
  SERVICES,
  startMultiProcessSystem,
  startOtlpReceiver,
  waitUntil,
  type MultiProcessSystem,
} from './multiprocess-harness.js';

/**
 * The distributed runtime for real: gateway, ingest, knowledge-base and
 * analytics each in their own OS process, the bus on a real Apache Kafka
 * broker, driven through the gateway's public API only. Then the faults a
 * distributed runtime has: kill -9 a process mid-stream, replicas in one
 * consumer group, the broker restarting.
 *
 * The suite runs its own broker (scripts/kafka.sh, from the jars CI fetched)
 * so that restarting it disturbs no other suite; it runs whenever CI started a
 * broker (KAFKA_BROKERS set).
 */
const skip = process.env.KAFKA_BROKERS
  ? false
  : 'skipped: KAFKA_BROKERS is not set (CI starts a broker with scripts/kafka.sh; run `scripts/kafka.sh start` and export KAFKA_BROKERS)';

const TIMEOUT = { timeout: 240_000 };
/** The knowledge base's consumer group that indexes ingest's events for search. */
const SEARCH_INDEX_GROUP = 'knowledge-base.search-index';

describeOrSkip('every service its own process, on a real Kafka broker', skip, () => {
  let broker: KafkaBroker;
  let sys: MultiProcessSystem;
  let kafka: Kafka;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  /** Every process's output on disk; on a failure its last lines are printed and the files kept under test/artifacts. */
  const logs = new RunLogs();

  beforeAll(async () => {
    broker = new KafkaBroker();
    broker.start();
    kafka = new Kafka({ clientId: 'multiprocess-test', brokers: [broker.brokers], logLevel: logLevel.NOTHING });
    otlp = await startOtlpReceiver();
    sys = await startMultiProcessSystem({
      brokers: broker.brokers,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
        // A loaded machine must not drop a batch of spans on the exporter's 10 s default.
        OTEL_EXPORTER_OTLP_TIMEOUT: '60000',
        OTEL_BSP_EXPORT_TIMEOUT: '60000',
      },
      logs,
    });
  }, TIMEOUT.timeout);

  beforeEach(({ task, onTestFailed }) => {
    onTestFailed(() => {
      logs.attach('kafka-broker.log', broker.logFile);
      logs.reportFailure(`"${task.name}" failed`);
    });
  });

  afterAll(async () => {
    await sys?.stop();
    await otlp?.close();
    broker?.destroy();
    logs.close();
  });

  /**
   * A write through the gateway, sent as a client sends it: right after a replica is killed
   * or restarted the gateway's channel to it may still be reconnecting; it answers 503 with
   * Retry-After, and the client sends again (for up to 60 s).
   */
  const send = async (path: string, body: object, expected: number) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await sys.api('POST', path, { body });
      if (res.status === 503 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
        continue;
      }
      assert.equal(res.status, expected, res.text);
      return res;
    }
  };
  const folder = async (name: string) => (await send('/org/kb/folders', { name }, 201)).body.kb_node_id as string;
  /** Raw text through the gateway; 202 means ingest has it durably (its outbox publishes it). */
  const ingest = async (title: string, text: string, parent_id: string) => {
    const res = await send('/org/kb/raw', { title, text, parent_id }, 202);
    return (res.body.content_id ?? res.body.id) as string;
  };
  /** Content ids search returns for a word every document of a batch carries. */
  const searchIds = async (word: string) => {
    const res = await sys.api('POST', '/search', { body: { query: word, max_results: 100 } });
    assert.equal(res.status, 200, res.text);
    return (res.body.results as { content_id: string }[]).map((r) => r.content_id);
  };
  /** Every id found by search exactly once (nothing lost, nothing applied twice). */
  const assertAllSearchable = async (word: string, ids: string[]) => {
    let seen = 0;
    const found = await waitUntil(
      async () => {
        const got = await searchIds(word);
        seen = new Set(got).size;
        return seen >= ids.length ? got : undefined;
      },
      `${ids.length} documents searchable by "${word}"`,
      60_000,
      () => [seen, sys.progress()],
    );
    assert.deepEqual([...found].sort(), [...ids].sort(), 'each document found once');
  };
  /**
   * Starts a killed service again and measures it: when it listens (serves its API) and when
   * its readiness says SERVING (its consumer groups took it in, which after a kill -9 waits for
   * the dead member's session to end). It listens first: serving does not wait for the group.
   */
  const restartMeasured = async (name: string) => {
    const started = Date.now();
    const restarted = await sys.start(name);
    const listening = Date.now() - started;
    await waitUntil(
      async () =>
        (await checkHealth(`127.0.0.1:${restarted.port}`, 5000)) === 'SERVING' && /Consumer has joined the group/.test(restarted.output())
          ? true
          : undefined,
      `${name} ready after its restart`,
      60_000,
      () => sys.progress(),
    );
    const ready = Date.now() - started;
    const out = restarted.output();
    const listenedAt = out.search(/"msg":"[a-z-]+ listening"/);
    const joinedAt = out.search(/Consumer has joined the group/);
    assert.ok(listenedAt >= 0 && joinedAt >= 0, `${name} logged listening and its group join`);
    assert.ok(listenedAt < joinedAt, `${name} listened before its consumer group took it in`);
    console.info(`[figures] ${name} after kill -9: listening in ${listening} ms, ready (consumers joined) in ${ready} ms`);
    return { listening, ready };
  };
  const batchWord = () =>
    `zq${randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 10)}`;

  it('ingest to search, prompts, analytics import to reports: across processes and Kafka', TIMEOUT, async () => {
    const science = await folder('Science');
    const word = batchWord();
    const id = await ingest('Aspirin and colorectal cancer', `Daily low-dose aspirin reduced colorectal cancer ${word}.`, science);
    await assertAllSearchable(word, [id]);

    const prompt = await sys.api('POST', '/org/prompts', {
      body: { name: 'Best CRM', text: 'What is the best CRM for {{industry}}?', tags: ['crm'] },
    });
    assert.equal(prompt.status, 201, prompt.text);
    assert.deepEqual(prompt.body.variables, ['industry']);
    const got = await sys.api('GET', `/org/prompts/${prompt.body.prompt_id}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body, prompt.body);

    const promptId = randomUUID();
    const imported = await sys.api('POST', '/org/analytics/answers/import', {
      body: [
        {
          answer_id: randomUUID(),
          prompt_id: promptId,
          model: 'gpt-4o',
          location: 'us',
          run_at: '2026-03-02T10:00:00Z',
          text: 'Acme is the best.',
          citations: ['https://news.example.org/a'],
          brands: ['Acme'],
        },
        {
          answer_id: randomUUID(),
          prompt_id: promptId,
          model: 'sonar',
          location: 'de',
          run_at: '2026-03-03T10:00:00Z',
          text: 'Globex is fine.',
          citations: [],
          brands: ['Globex'],
        },
      ],
    });
    assert.equal(imported.status, 200, imported.text);
    assert.equal(imported.body.accepted, 2);
    await waitUntil(async () => {
      const res = await sys.api('GET', '/org/analytics/overview?from=2026-03-01&to=2026-03-07');
      return res.status === 200 && res.body.totals.answer_count === 2 ? res : undefined;
    }, 'the imported answers in the analytics report');
  });

  it(
    'one upload is one trace across HTTP, gRPC, its extraction job and Kafka, in every process it reaches; probes make none',
    TIMEOUT,
    async () => {
      otlp.spans.length = 0; // only this test's requests from here on
      // Probes (what Kubernetes and compose ask every few seconds) make no spans.
      for (let i = 0; i < 3; i++) assert.equal((await fetch(`${sys.url}/health/ready`)).status, 200);
      const parent = await folder('Traced');
      const word = batchWord();
      const id = await ingest('Traced document', `A traced document mentions ${word}.`, parent);
      await assertAllSearchable(word, [id]);
      const SERVER = 2;
      const CONSUMER = 5;
      /** The consumers of what the upload's job recorded, by event type: each has a span in the upload's trace. */
      const jobEvents = ['content.processing_started', 'content.chunks_added', 'content.extracted'];
      let seen = 0;
      const trace = await waitUntil(
        () => {
          // The request's trace: the gateway's HTTP server span for POST /org/kb/raw.
          const root = otlp.spans.find((s) => s.service === 'gateway' && s.kind === SERVER && s.name.includes('/org/kb/raw'));
          if (!root) return undefined;
          const spans = otlp.spans.filter((s) => s.traceId === root.traceId);
          seen = spans.length;
          const has = (service: string, name: (n: string) => boolean) => spans.some((s) => s.service === service && name(s.name));
          const expected: [string, string, (n: string) => boolean][] = [
            ...['queued', 'extracting', 'stored'].map((step): [string, string, (n: string) => boolean] => [
              'ingest',
              `ingest job ${step}`,
              (n) => n === `ingest job ${step}`,
            ]),
            ...jobEvents.map((type): [string, string, (n: string) => boolean] => ['knowledge-base', type, (n) => n.endsWith(` ${type}`)]),
            ['gateway', 'content.extracted', (n) => n.endsWith(' content.extracted')],
            ['publishing', 'content.extracted', (n) => n.endsWith(' content.extracted')],
          ];
          // Thrown, so that a wait that gives up names what never arrived.
          const missing = expected.filter(([service, , name]) => !has(service, name)).map(([service, what]) => `${service}: ${what}`);
          if (missing.length > 0) throw new Error(`not yet in the trace: ${missing.join(', ')}`);
          return spans;
        },
        "the upload's spans: gateway, ingest and its job, and the consumers of the job's events",
        60_000,
        () => [seen, otlp.spans.length],
      );
      // Every span hangs off another span of the same trace (one tree, no orphan roots but the request).
      const ids = new Set(trace.map((s) => s.spanId));
      const roots = trace.filter((s) => !ids.has(s.parentSpanId));
      assert.equal(roots.length, 1, JSON.stringify(roots));
      assert.equal(roots[0]!.service, 'gateway');
      // Every process the upload reaches is in it; analytics and generation take no part in an upload.
      const services = new Set(trace.map((s) => s.service));
      assert.deepEqual([...services].sort(), ['gateway', 'ingest', 'knowledge-base', 'publishing']);
      for (const type of jobEvents) {
        const consumers = trace.filter((s) => s.kind === CONSUMER && s.name.endsWith(` ${type}`));
        assert.ok(consumers.length > 0 && consumers.every((c) => ids.has(c.parentSpanId)), `${type} consumed in the trace`);
      }
      assert.deepEqual(
        otlp.spans.filter((s) => /health/i.test(s.name)),
        [],
        'no spans for health probes',
      );
    },
  );

  it('kill -9 the knowledge base while it indexes, restart it: every document indexed, none twice', TIMEOUT, async () => {
    const parent = await folder('Stream A');
    const word = batchWord();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await ingest(`Stream A ${i}`, `Document ${i} of stream A mentions ${word}.`, parent));
    // Events are in flight: the consumer has some, not all, of them.
    await sys.kill('knowledge-base');
    await restartMeasured('knowledge-base');
    await assertAllSearchable(word, ids);
  });

  it('kill -9 ingest while requests arrive, restart it: every accepted document reaches search', TIMEOUT, async () => {
    const parent = await folder('Stream B');
    const word = batchWord();
    const sent = Array.from({ length: 16 }, (_, i) =>
      sys
        .api('POST', '/org/kb/raw', {
          body: { title: `Stream B ${i}`, text: `Document ${i} of stream B mentions ${word}.`, parent_id: parent },
        })
        .then(
          (res) => (res.status === 202 ? ((res.body.content_id ?? res.body.id) as string) : undefined),
          () => undefined,
        ),
    );
    await new Promise((r) => setTimeout(r, 150));
    await sys.kill('ingest');
    const accepted = (await Promise.all(sent)).filter((id): id is string => id !== undefined);
    await restartMeasured('ingest');
    // Accepted (202) means durable in ingest's store; its outbox publishes after the restart.
    const more = await ingest('Stream B after restart', `A later document of stream B mentions ${word}.`, parent);
    // A request cut off by the kill has an unknown outcome: ingest may have stored it
    // before its answer was lost. So: every accepted document found, none twice, and
    // nothing beyond what was sent.
    const expected = [...accepted, more];
    let seen = 0;
    const found = await waitUntil(
      async () => {
        const got = await searchIds(word);
        seen = got.length;
        return expected.every((id) => got.includes(id)) ? got : undefined;
      },
      `${expected.length} documents searchable by "${word}"`,
      60_000,
      () => [seen, sys.progress()],
    );
    assert.equal(new Set(found).size, found.length, 'no document found twice');
    assert.ok(found.length <= sent.length + 1, `${found.length} found, ${sent.length + 1} sent`);
  });

  it(
    'two knowledge-base replicas in one consumer group: kill the one that owns the partition, the other takes it over',
    TIMEOUT,
    async () => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        await sys.start('knowledge-base', 1);
        const assignments = async () => {
          const [group] = (await admin.describeGroups([SEARCH_INDEX_GROUP])).groups;
          return (group?.members ?? []).map((m) => ({
            clientId: m.clientId,
            partitions: AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topics.ingest] ?? [],
          }));
        };
        const split = await waitUntil(async () => {
          const members = await assignments();
          return members.length === 2 && members.every((m) => m.partitions.length > 0) ? members : undefined;
        }, 'both replicas to hold partitions of the ingest topic');

        // One organization: all of its events are on one partition (key = org_id).
        const offsets = await admin.fetchTopicOffsets(topics.ingest);
        const used = offsets.filter((o) => Number(o.high) > 0).map((o) => o.partition);
        assert.equal(used.length, 1, JSON.stringify(offsets));
        const owner = split.find((m) => m.partitions.includes(used[0]!))!;
        const victim = sys.processes.find((p) => p.name === 'knowledge-base' && owner.clientId === `knowledge-base-${p.pid}`);
        assert.ok(victim, `the owner ${owner.clientId} is one of the replicas`);
        await sys.kill('knowledge-base', victim.replica);

        const parent = await folder('After takeover');
        const word = batchWord();
        const ids: string[] = [];
        for (let i = 0; i < 6; i++) ids.push(await ingest(`Takeover ${i}`, `Document ${i} after the takeover mentions ${word}.`, parent));
        await assertAllSearchable(word, ids);
        const survivors = await assignments();
        assert.equal(survivors.length, 1);
        assert.notEqual(survivors[0]!.clientId, owner.clientId);
        assert.ok(survivors[0]!.partitions.includes(used[0]!), 'the survivor holds the partition now');
      } finally {
        await admin.disconnect();
      }
    },
  );

  it(
    'restart the broker mid-stream: a service started meanwhile serves, each process says the outage once, readiness waits for the groups, nothing lost',
    TIMEOUT,
    async () => {
      const parent = await folder('Broker restart');
      const word = batchWord();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(await ingest(`Before ${i}`, `Document ${i} before the broker restart mentions ${word}.`, parent));
      // Readiness (grpc.health.v1 Check, what a Kubernetes probe asks) follows the bus.
      const grpcServices = () =>
        sys.processes.filter((p) => p.name !== 'gateway' && p.child.exitCode === null && p.child.signalCode === null);
      const health = () => Promise.all(grpcServices().map((p) => checkHealth(`127.0.0.1:${p.port}`, 10_000)));
      assert.deepEqual(new Set(await health()), new Set(['SERVING']));
      // The gateway's own readiness names its dependencies: its bus and every service it calls.
      const gatewayReady = async () => {
        const res = await fetch(`${sys.url}/health/ready`);
        return {
          status: res.status,
          text: await res.clone().text(),
          body: (await res.json()) as { checks: Record<string, string>; failing?: string[] },
        };
      };
      assert.equal((await gatewayReady()).status, 200);
      const beforeOutage = logs.mark();
      broker.stop();
      await waitUntil(
        async () => (await health()).every((s) => s === 'NOT_SERVING') || undefined,
        'every service not ready without its bus',
      );
      const down = await waitUntil(async () => {
        const r = await gatewayReady();
        return r.status === 503 ? r : undefined;
      }, 'the gateway not ready without its bus');
      assert.ok(down.body.failing!.includes('bus'), down.text);
      assert.ok(down.body.failing!.includes('knowledge_base'), down.text);
      // Anonymous callers learn which check failed, not addresses or gRPC errors.
      assert.doesNotMatch(down.text, /127\.0\.0\.1|UNAVAILABLE|DEADLINE_EXCEEDED|ECONNREFUSED/);
      // A service started while the broker is down starts (no crash), and serves what it can:
      // ingest accepts uploads into its outbox.
      await sys.kill('ingest');
      const restarted = await sys.start('ingest');
      for (let i = 0; i < 5; i++) ids.push(await ingest(`During ${i}`, `Document ${i} while the broker is down mentions ${word}.`, parent));
      assert.equal(restarted.child.exitCode, null, 'ingest started without its broker is still running');
      // Long enough for every client to fail many times over (connections, retries, consumer restarts).
      await new Promise((r) => setTimeout(r, 15_000));
      broker.start();
      const back = Date.now();
      // The gateway is ready only once every service's consumers are in their groups again.
      await waitUntil(
        async () => ((await gatewayReady()).status === 200 ? true : undefined),
        'the gateway ready again',
        60_000,
        () => sys.progress(),
      );
      const readyAfter = Date.now() - back;
      const admin = kafka.admin();
      await admin.connect();
      try {
        const [group] = (await admin.describeGroups([SEARCH_INDEX_GROUP])).groups;
        assert.equal(group?.state, 'Stable', `the search-index group when the gateway said ready: ${group?.state}`);
        assert.ok(
          group.members.some(
            (m) => (AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topics.ingest] ?? []).length > 0,
          ),
          'a member holds the ingest partitions',
        );
      } finally {
        await admin.disconnect();
      }
      assert.deepEqual(new Set(await health()), new Set(['SERVING']));
      for (let i = 0; i < 5; i++) ids.push(await ingest(`After ${i}`, `Document ${i} after the broker restart mentions ${word}.`, parent));
      const searchable = Date.now();
      await assertAllSearchable(word, ids);
      console.info(
        `[figures] broker answering again: gateway ready ${readyAfter} ms later; the 15 documents searchable ${Date.now() - searchable} ms after the last upload`,
      );
      // Each process said the outage once at warn (and its end at info), not once per retry.
      for (const [file, lines] of logs.linesSince(beforeOutage)) {
        if (!file.endsWith('.log') || file.startsWith('kafka')) continue;
        const loud = lines.filter((l) => /"level":(40|50|60)/.test(l));
        const outages = loud.filter((l) => /unavailable; retrying in the background/.test(l));
        assert.ok(loud.length <= 8, `${file}: ${loud.length} warn/error lines during the outage:\n${loud.slice(0, 20).join('\n')}`);
        assert.ok(outages.length <= 4, `${file}: the outage said ${outages.length} times`);
      }
    },
  );

  it(
    'a gateway whose INTERNAL_TOKEN the services refuse is not ready and answers 503 internal_auth_misconfigured, not 401',
    TIMEOUT,
    async () => {
      const gateway = SERVICES.find((s) => s.name === 'gateway')!;
      const wrongToken = 'not-the-token-the-services-share';
      const kbLog = logs.mark();
      const misconfigured = await sys.startExtra({
        ...gateway,
        name: 'gateway-wrong-token',
        // Its own embedded bus: it must not join the real gateway's consumer groups or publish its bootstrap organization.
        env: { ...gateway.env, INTERNAL_TOKEN: wrongToken, BUS: 'sqlite' },
      });
      const url = `http://127.0.0.1:${misconfigured.port}`;
      const ready = await waitUntil(async () => {
        const res = await fetch(`${url}/health/ready`);
        const text = await res.text();
        return res.status === 503 && /knowledge_base/.test(text) ? { text, body: JSON.parse(text) as { failing: string[] } } : undefined;
      }, 'the misconfigured gateway not ready');
      for (const service of ['knowledge_base', 'ingest', 'analytics', 'generation', 'publishing'])
        assert.ok(ready.body.failing.includes(service), ready.text);
      assert.doesNotMatch(ready.text, /127\.0\.0\.1|token/i, 'anonymous callers get no details');
      const detailed = (await (await fetch(`${url}/health/ready`, { headers: { 'x-internal-token': wrongToken } })).json()) as {
        checks: Record<string, string>;
      };
      assert.match(detailed.checks.knowledge_base!, /refused this service's internal token: set the same INTERNAL_TOKEN on every service/);
      const search = await fetch(`${url}/api/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': gateway.env!.BOOTSTRAP_API_KEY! },
        body: JSON.stringify({ query: 'aspirin' }),
      });
      const body = (await search.json()) as { error: { code: string; message: string } };
      assert.equal(search.status, 503, JSON.stringify(body));
      assert.equal(body.error.code, 'internal_auth_misconfigured');
      assert.match(body.error.message, /misconfigured.*not a fault of your request/);
      // Operators read it in the logs: the refusing service (whichever replica serves) and the gateway both name INTERNAL_TOKEN.
      await waitUntil(() => {
        const lines = logs.linesSince(kbLog);
        const kb = [...lines]
          .filter(([file]) => file.startsWith('knowledge-base.'))
          .flatMap(([, l]) => l)
          .some((l) => /wrong internal token: every service must run with the same INTERNAL_TOKEN/.test(l));
        const gw = (lines.get('gateway-wrong-token.0.log') ?? []).some((l) => /refused this service's internal token/.test(l));
        return kb && gw ? true : undefined;
      }, 'the log lines that tell the operator');
      await sys.kill('gateway-wrong-token');
    },
  );

  it(
    'SIGTERM the knowledge base mid-stream: it finishes in-flight work, commits, exits 0; the group drains to lag 0',
    TIMEOUT,
    async () => {
      const parent = await folder('Graceful');
      const word = batchWord();
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(await ingest(`Graceful ${i}`, `Document ${i} of the graceful stop mentions ${word}.`, parent));
      const signalled = Date.now();
      assert.equal(await sys.terminate('knowledge-base'), 0);
      // Within Kubernetes' default termination grace period (30 s), after which it would be killed.
      assert.ok(Date.now() - signalled < 30_000, `stopped ${Date.now() - signalled} ms after SIGTERM`);
      await sys.start('knowledge-base');
      await assertAllSearchable(word, ids);
      const admin = kafka.admin();
      await admin.connect();
      try {
        await waitUntil(async () => {
          const lag = await consumerGroupLag(admin, SEARCH_INDEX_GROUP, [topics.ingest, topics.knowledgeBase]);
          return lag.lag === 0 || undefined;
        }, 'the search-index group to have committed everything');
      } finally {
        await admin.disconnect();
      }
    },
  );
});
