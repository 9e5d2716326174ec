import { afterAll, beforeAll, beforeEach, it } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { topics } from '@kb/events';
import { checkHealth } from '@kb/rpc';
import { missingModelFiles } from '@kb/ai/local';
import { API_KEY, KafkaBroker, RunLogs, startMultiProcessSystem, waitUntil, type MultiProcessSystem } from './multiprocess-harness.js';

/**
 * Large documents on the distributed runtime (every service its own process, a
 * real Kafka broker with its default 1 MB message limit): a document whose chunk
 * events together are over the broker's limit, a crash of ingest with megabytes
 * of chunk events not yet published, and an upload answered 503 before its body
 * was read while ingest is down. The outbox relay must never send a record batch
 * the broker refuses, and the gateway's connections must never go dead.
 */
const skip = process.env.KAFKA_BROKERS
  ? false
  : 'skipped: KAFKA_BROKERS is not set (CI starts a broker with scripts/kafka.sh; run `scripts/kafka.sh start` and export KAFKA_BROKERS)';

const TIMEOUT = { timeout: 300_000 };
/** The services' shared secret: the gateway's readiness says why a check fails to a caller presenting it. */
const INTERNAL_TOKEN = randomBytes(24).toString('hex');

/**
 * Plain text of about `bytes` bytes, every paragraph naming `word` so search finds the document; `last`, when
 * given, only in its closing line, so search finds it by that word once its last chunk is indexed.
 */
function largeText(word: string, bytes: number, last?: string): string {
  const paragraphs: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const p =
      `Section ${i}. The ${word} survey measured ${(i * 7) % 1000} samples in region ${i % 17}; ` +
      `the readings drifted by ${(i * 13) % 97} per cent against the baseline, and the team noted ` +
      `that calibration ${i % 5 === 0 ? 'failed' : 'held'} for the ${i}th run of the series.\n\n`;
    paragraphs.push(p);
    size += Buffer.byteLength(p);
  }
  if (last) paragraphs.push(`The closing remark of the survey mentions ${last}.\n`);
  return paragraphs.join('');
}

const batchWord = () =>
  `zq${randomUUID()
    .replace(/[^a-f]/g, '')
    .slice(0, 10)}`;

/** The suites' client of a running system: uploads, searches and readiness. */
function helpersFor(current: () => MultiProcessSystem) {
  /** Text files through the gateway's upload; the content ids of the accepted ones. */
  const upload = async (files: { name: string; text: string }[]): Promise<string[]> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const form = new FormData();
      for (const f of files) form.append('files', new Blob([f.text], { type: 'text/plain' }), f.name);
      const res = await fetch(`${current().url}/api/v1/org/kb/upload`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } });
      const text = await res.text();
      // Right after a restart the gateway's channel may still be reconnecting: a client sends again.
      if (res.status === 503 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
        continue;
      }
      assert.equal(res.status, 202, text);
      const body = JSON.parse(text) as { files: { status: string; content_id: string }[] };
      assert.ok(
        body.files.every((f) => f.status === 'accepted'),
        text,
      );
      return body.files.map((f) => f.content_id);
    }
  };
  const searchIds = async (word: string) => {
    const res = await current().api('POST', '/search', { body: { query: word, max_results: 100 } });
    assert.equal(res.status, 200, res.text);
    return new Set((res.body.results as { content_id: string }[]).map((r) => r.content_id));
  };
  /**
   * Waits until search finds each document by its own word (a large document's chunks would fill every result
   * slot of a word they share with others); how long it took.
   */
  const searchable = async (documents: { word: string; id: string }[], timeoutMs = 120_000) => {
    const started = Date.now();
    let seen = 0;
    await waitUntil(
      async () => {
        seen = 0;
        for (const { word, id } of documents) if ((await searchIds(word)).has(id)) seen++;
        return seen === documents.length ? true : undefined;
      },
      `${documents.length} documents searchable`,
      timeoutMs,
      () => [seen, current().progress()],
    );
    return Date.now() - started;
  };
  const statusOf = async (id: string) =>
    (await current().api('GET', `/org/kb/content/${id}`)).body?.processing_status as string | undefined;
  /** Ingest's gRPC readiness, which includes its outbox relay (events). */
  const ingestServing = async () => (await checkHealth(`127.0.0.1:${current().process('ingest').port}`, 5000)) === 'SERVING';

  return { upload, searchIds, searchable, statusOf, ingestServing };
}

describeOrSkip('large documents on the distributed runtime, on a real Kafka broker', skip, () => {
  let broker: KafkaBroker;
  let sys: MultiProcessSystem;
  const logs = new RunLogs();

  beforeAll(async () => {
    broker = new KafkaBroker();
    broker.start();
    sys = await startMultiProcessSystem({ brokers: broker.brokers, logs, env: { INTERNAL_TOKEN } });
  }, TIMEOUT.timeout);

  beforeEach(({ task, onTestFailed }) => {
    onTestFailed(() => {
      logs.attach('kafka-broker.log', broker.logFile);
      logs.reportFailure(`"${task.name}" failed`);
    });
  });

  afterAll(async () => {
    await sys?.stop();
    broker?.destroy();
    logs.close();
  });

  const { upload, searchable, statusOf, ingestServing } = helpersFor(() => sys);

  it('a 1.4 MB text upload, then a small one: both searchable, and ingest stays ready', TIMEOUT, async () => {
    const word = batchWord();
    const last = batchWord();
    const other = batchWord();
    const big = largeText(word, 1_400_000, last);
    const accepted = Date.now();
    const [bigId] = await upload([{ name: 'large.txt', text: big }]);
    const [smallId] = await upload([{ name: 'small.txt', text: `A small note about ${other}.` }]);
    const took = await searchable([
      { word, id: bigId! },
      { word: last, id: bigId! },
      { word: other, id: smallId! },
    ]);
    console.info(
      `[figures] a ${(Buffer.byteLength(big) / 1e6).toFixed(1)} MB text upload: accepted to searchable in ${Date.now() - accepted} ms (${took} ms waiting on search)`,
    );
    assert.equal(await statusOf(bigId!), 'completed');
    assert.ok(await ingestServing(), 'ingest ready: its outbox relay advances');
    assert.doesNotMatch(sys.process('ingest').output(), /larger than the max message size/);
  });

  it(
    'the largest text ingest takes (9.5 MB, near MAX_EXTRACTED_CHARS): searchable, its chunk events in many batches',
    TIMEOUT,
    async () => {
      const word = batchWord();
      const text = largeText(word, 9_500_000);
      const accepted = Date.now();
      const [id] = await upload([{ name: 'largest.txt', text }]);
      await searchable([{ word, id: id! }], 240_000);
      const item = await sys.api('GET', `/org/kb/content/${id}`);
      assert.equal(item.body.processing_status, 'completed', item.text);
      const chunks = await sys.api('GET', `/org/kb/content/${id}/chunks?limit=1`);
      console.info(
        `[figures] a ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB text upload (${String(chunks.body.total_count)} chunks): accepted to searchable in ${Date.now() - accepted} ms`,
      );
      assert.ok(await ingestServing(), 'ingest ready: its outbox relay advances');
      assert.doesNotMatch(sys.process('ingest').output(), /larger than the max message size|cannot advance/);
    },
  );

  it('kill -9 ingest with about 5 MB of chunk events behind, restart it: every document searchable', TIMEOUT, async () => {
    const words = Array.from({ length: 11 }, () => batchWord());
    // Each found by the word of its closing line: indexed to its end.
    const files = words.map((word, i) => ({ name: `part-${i}.txt`, text: `Part ${i}.\n\n${largeText(batchWord(), 470_000, word)}` }));
    const ids: string[] = [];
    // Acknowledged (202: durable in ingest's store), then ingest dies before it extracted and published them all.
    for (let i = 0; i < files.length; i += 4) ids.push(...(await upload(files.slice(i, i + 4))));
    await sys.kill('ingest');
    const restarted = await sys.start('ingest');
    const took = await searchable(
      ids.map((id, i) => ({ word: words[i]!, id })),
      240_000,
    );
    console.info(`[figures] 11 uploads of 0.47 MB (5.2 MB) after kill -9 of ingest: searchable ${took} ms after its restart`);
    for (const id of ids) assert.equal(await statusOf(id), 'completed');
    // Readiness after a restart also waits for the consumer groups: wait for it rather than sample it once.
    await waitUntil(
      async () => ((await ingestServing()) ? true : undefined),
      'ingest ready after its restart: its outbox relay caught up',
      120_000,
      () => sys.progress(),
    );
    assert.doesNotMatch(restarted.output(), /larger than the max message size|cannot advance/);
  });

  it("a topic that refuses ingest's events: readiness fails naming ingest, one error line, then it advances again", TIMEOUT, async () => {
    const admin = new Kafka({ clientId: 'large-documents-admin', brokers: [broker.brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const limitTopic = (value: string) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topics.ingest, configEntries: [{ name: 'max.message.bytes', value }] }],
      });
    const ready = async () => (await fetch(`${sys.url}/health/ready`)).json() as Promise<{ status: string; failing?: string[] }>;
    const incidents = () =>
      sys
        .process('ingest')
        .output()
        .split('\n')
        .filter((l) => l.includes('cannot advance'));
    try {
      // The earlier cases restarted ingest and loaded the knowledge base: start from a ready system.
      await waitUntil(
        async () => ((await ready()).status === 'ready' ? true : undefined),
        'ready before the topic is limited',
        120_000,
        () => sys.progress(),
      );
      // An operator lowers the topic's limit below the services' BUS_MAX_MESSAGE_BYTES.
      await limitTopic('50000');
      const word = batchWord();
      // Random words: gzip cannot shrink its chunk event (about 330 kB) under the topic's 50 kB.
      const random = (
        randomBytes(150_000)
          .toString('hex')
          .match(/.{1,8}/g) ?? []
      ).join(' ');
      const [id] = await upload([{ name: 'refused.txt', text: `${random}\n\nThe closing line mentions ${word}.\n` }]);
      const failing = await waitUntil(
        async () => {
          const r = await ready();
          return r.status === 'not_ready' && r.failing?.includes('ingest') ? r : undefined;
        },
        'readiness naming ingest',
        120_000,
        () => sys.progress(),
      );
      assert.deepEqual(failing.failing, ['ingest']);
      const why = (await (await fetch(`${sys.url}/health/ready`, { headers: { 'x-internal-token': INTERNAL_TOKEN } })).json()) as {
        checks: Record<string, string>;
      };
      assert.match(why.checks.ingest!, /^NOT_SERVING \(events: outbox relay of ingest cannot advance: \d+ events .* behind;/);
      assert.match(why.checks.ingest!, /over the broker's message size limit/);
      assert.equal(incidents().length, 1, incidents().join('\n'));
      assert.match(incidents()[0]!, /"level":50/);
      assert.match(incidents()[0]!, /over the broker's message size limit/);
      assert.match(incidents()[0]!, /"behind_events":\d+/);

      // The operator puts the limit back: the outbox drains by itself.
      await limitTopic('1048588');
      await waitUntil(
        async () => ((await ready()).status === 'ready' ? true : undefined),
        'ready again',
        120_000,
        () => sys.progress(),
      );
      await searchable([{ word, id: id! }]);
      assert.match(sys.process('ingest').output(), /outbox relay of ingest advances again/);
      assert.equal(incidents().length, 1, 'one line per incident');
    } finally {
      await limitTopic('1048588').catch(() => undefined);
      await admin.disconnect();
    }
  });

  it(
    'an upload answered 503 before its body was read (ingest down) leaves the connection usable; the gateway stops at once',
    TIMEOUT,
    async () => {
      await sys.kill('ingest');
      const port = Number(new URL(sys.url).port);
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      socket.on('error', () => {});
      const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      const boundary = 'kb-early-503';
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
        ),
        Buffer.from(largeText(batchWord(), 1_400_000)),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      socket.write(
        `POST /api/v1/org/kb/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nx-api-key: ${API_KEY}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body);
      await waitUntil(() => (statuses().length >= 1 ? true : undefined), 'the answer to the upload', 60_000);
      assert.equal(statuses()[0], 503, received.slice(0, 300));
      socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
      await waitUntil(() => (statuses().length >= 2 ? true : undefined), 'the answer to the next request on the connection', 30_000);
      assert.equal(statuses()[1], 200);

      // The connection is idle again: a graceful stop does not wait on it.
      const stopping = Date.now();
      assert.equal(await sys.terminate('gateway'), 0);
      const stopMs = Date.now() - stopping;
      console.info(`[figures] gateway SIGTERM with a keep-alive connection after an early 503: stopped in ${stopMs} ms`);
      assert.ok(stopMs < 5_000, `stopped in ${stopMs} ms`);
      socket.destroy();
      await sys.start('ingest');
      await sys.start('gateway');
      await waitUntil(
        async () => ((await fetch(`${sys.url}/health/ready`)).status === 200 ? true : undefined),
        'the system ready again',
        120_000,
      );
    },
  );
});

/** The model of the default's hybrid search (scripts/fetch-embedding-model.sh). */
const modelDir = process.env.EMBEDDINGS_MODEL_DIR ?? join(import.meta.dirname, '../../.models/bge-small-en-v1.5-q');
const skipVectors = skip || (missingModelFiles(modelDir) ? `skipped: ${missingModelFiles(modelDir)}` : false);

/**
 * The same backlogs with vectors on, as the distributed runtime runs by default where the model is:
 * the knowledge base embeds chunks in the background (on a thread of its own, at a lower priority),
 * and documents must still become searchable by their words at keyword speed.
 */
describeOrSkip('large documents on the distributed runtime with vectors on (the default)', skipVectors, () => {
  let broker: KafkaBroker;
  let sys: MultiProcessSystem;
  const logs = new RunLogs();

  beforeAll(async () => {
    broker = new KafkaBroker();
    broker.start();
    sys = await startMultiProcessSystem({
      brokers: broker.brokers,
      logs,
      env: { INTERNAL_TOKEN, EMBEDDINGS: 'local', EMBEDDINGS_MODEL_DIR: modelDir },
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
    broker?.destroy();
    logs.close();
  });

  const { upload, searchable, statusOf } = helpersFor(() => sys);
  const searchState = async (id: string) =>
    (await sys.api('GET', `/org/kb/content/${id}`)).body?.search as { keyword: string; semantic: string } | undefined;
  /** Waits until every document is searchable by its words (the item's own readiness); how long it took. */
  const keywordReady = async (ids: string[], timeoutMs: number) => {
    const started = Date.now();
    let ready = 0;
    await waitUntil(
      async () => {
        ready = 0;
        for (const id of ids) if ((await searchState(id))?.keyword === 'ready') ready++;
        return ready === ids.length ? true : undefined;
      },
      `${ids.length} documents searchable by their words`,
      timeoutMs,
      () => [ready, sys.progress()],
    );
    return Date.now() - started;
  };

  it('a 1.4 MB text and then a 9.5 MB one: searchable by their words while their vectors are still being computed', TIMEOUT, async () => {
    const first = batchWord();
    const word = batchWord();
    const accepted = Date.now();
    const [firstId] = await upload([{ name: 'large.txt', text: largeText(first, 1_400_000) }]);
    await keywordReady([firstId!], 240_000);
    // The first document's vectors are being computed while the largest text goes through.
    const [id] = await upload([{ name: 'largest.txt', text: largeText(word, 9_500_000) }]);
    const took = await keywordReady([id!], 240_000);
    const state = await searchState(id!);
    console.info(
      `[figures] vectors on: a 9.5 MB text upload searchable by its words ${took} ms after it was accepted, ` +
        `${Date.now() - accepted} ms after the 1.4 MB one (semantic: ${state?.semantic}, the 1.4 MB one: ${(await searchState(firstId!))?.semantic})`,
    );
    assert.equal(await statusOf(id!), 'completed');
    await searchable([{ word, id: id! }], 60_000);
  });

  it('kill -9 ingest with about 5 MB of chunk events behind, restart it: every document searchable by its words', TIMEOUT, async () => {
    const words = Array.from({ length: 11 }, () => batchWord());
    const files = words.map((word, i) => ({ name: `part-${i}.txt`, text: `Part ${i}.\n\n${largeText(batchWord(), 470_000, word)}` }));
    const ids: string[] = [];
    for (let i = 0; i < files.length; i += 4) ids.push(...(await upload(files.slice(i, i + 4))));
    await sys.kill('ingest');
    await sys.start('ingest');
    const took = await keywordReady(ids, 240_000);
    console.info(
      `[figures] vectors on: 11 uploads of 0.47 MB (5.2 MB) after kill -9 of ingest: searchable by their words ${took} ms after its restart`,
    );
    for (const id of ids) assert.equal(await statusOf(id), 'completed');
    // Found by the word of each one's closing line.
    await searchable(
      ids.map((id, i) => ({ word: words[i]!, id })),
      60_000,
    );
  });
});
