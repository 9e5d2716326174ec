import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { logLevel, type KafkaMessage } from 'kafkajs';
import { createOutageLog, type Logger } from '@kb/platform';
import { toReceivedMessage } from './kafka-messages.js';
import { kafkaLogCreator, kafkaLogLevel } from './kafka-logger.js';

describe('kafkajs message mapping', () => {
  it('turns buffers into the strings the port promises', () => {
    const message = {
      key: Buffer.from('org-1'),
      value: Buffer.from('{"a":"ü"}'),
      offset: '9007199254740993',
      timestamp: '1700000000000',
      attributes: 0,
      headers: { 'x-type': Buffer.from('a.created'), plain: 'text', repeated: [Buffer.from('first'), 'last'], missing: undefined },
    } as KafkaMessage;
    assert.deepEqual(toReceivedMessage('t', 2, message), {
      topic: 't',
      partition: 2,
      offset: '9007199254740993',
      key: 'org-1',
      value: '{"a":"ü"}',
      headers: { 'x-type': 'a.created', plain: 'text', repeated: 'last' },
      timestamp: '2023-11-14T22:13:20.000Z',
    });
  });

  it('reads a null key or value as an empty string', () => {
    const message = { key: null, value: null, offset: '0', timestamp: '0', attributes: 0 } as KafkaMessage;
    const received = toReceivedMessage('t', 0, message);
    assert.equal(received.key, '');
    assert.equal(received.value, '');
    assert.deepEqual(received.headers, {});
  });
});

describe('kafkajs logging', () => {
  const fakeLogger = (level: string) => {
    const lines: Array<[string, Record<string, unknown>, string]> = [];
    const at = (name: string) => (fields: Record<string, unknown>, msg: string) => lines.push([name, fields, msg]);
    return { lines, logger: { level, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } as unknown as Logger };
  };

  it('maps the pino level to the kafkajs level', () => {
    assert.equal(kafkaLogLevel(fakeLogger('silent').logger), logLevel.NOTHING);
    assert.equal(kafkaLogLevel(fakeLogger('error').logger), logLevel.ERROR);
    assert.equal(kafkaLogLevel(fakeLogger('warn').logger), logLevel.WARN);
    assert.equal(kafkaLogLevel(fakeLogger('info').logger), logLevel.INFO);
    assert.equal(kafkaLogLevel(fakeLogger('trace').logger), logLevel.DEBUG);
  });

  it('writes kafkajs entries as structured pino lines', () => {
    const { lines, logger } = fakeLogger('debug');
    const write = kafkaLogCreator(logger)(logLevel.DEBUG);
    const log = { timestamp: 'ts', logger: 'kafkajs', message: 'Connection error', broker: 'b:9092' };
    write({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log });
    write({ namespace: 'Runner', level: logLevel.INFO, label: 'INFO', log: { timestamp: 'ts', message: 'joined' } });
    assert.deepEqual(lines, [
      ['error', { broker: 'b:9092', kafka: 'Connection' }, 'Connection error'],
      ['info', { kafka: 'Runner' }, 'joined'],
    ]);
  });

  it('turns the error lines of an unreachable broker into one outage warning, and says rebalances at info', () => {
    const { lines, logger } = fakeLogger('info');
    const write = kafkaLogCreator(logger, createOutageLog(logger, 'kafka'))(logLevel.INFO);
    for (let i = 0; i < 50; i++) {
      write({
        namespace: 'Connection',
        level: logLevel.ERROR,
        label: 'ERROR',
        log: { timestamp: 'ts', message: 'Connection error: connect ECONNREFUSED 127.0.0.1:9092' },
      });
      write({
        namespace: 'Consumer',
        level: logLevel.ERROR,
        label: 'ERROR',
        log: { timestamp: 'ts', message: 'Crash: KafkaJSNumberOfRetriesExceeded: connect ECONNREFUSED' },
      });
    }
    write({
      namespace: 'Runner',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { timestamp: 'ts', message: 'The group is rebalancing, re-joining' },
    });
    write({ namespace: 'Producer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: 'ts', message: 'Invalid record batch' } });
    assert.deepEqual(
      lines.filter(([level]) => level !== 'debug').map(([level, , msg]) => [level, msg]),
      [
        ['warn', 'kafka unavailable; retrying in the background (logged again when it recovers)'],
        ['info', 'The group is rebalancing, re-joining'],
        ['error', 'Invalid record batch'],
      ],
    );
  });

  it('says at debug what the bus handles itself: a topic another client just created, a batch over the limit', () => {
    const { lines, logger } = fakeLogger('info');
    const write = kafkaLogCreator(logger, createOutageLog(logger, 'kafka'))(logLevel.INFO);
    const response = (error: string) =>
      write({
        namespace: 'Connection',
        level: logLevel.ERROR,
        label: 'ERROR',
        log: { timestamp: 'ts', message: 'Response CreateTopics(key: 19, version: 3)', error },
      });
    response('Topic creation errors');
    // After a crash whose own line said why (here: the coordinator loading, at info).
    write({
      namespace: 'Consumer',
      level: logLevel.WARN,
      label: 'WARN',
      log: { timestamp: 'ts', message: 'Restarting the consumer in 300ms' },
    });
    response('The request included a message larger than the max message size the server will accept');
    assert.deepEqual(
      lines.filter(([level]) => level !== 'debug'),
      [],
    );
  });

  it('writes a repeated error line once a minute, with how often it came meanwhile', () => {
    const { lines, logger } = fakeLogger('info');
    let now = 0;
    const write = kafkaLogCreator(logger, createOutageLog(logger, 'kafka'), () => now)(logLevel.INFO);
    const invalid = () =>
      write({
        namespace: 'Connection',
        level: logLevel.ERROR,
        label: 'ERROR',
        log: { timestamp: 'ts', message: 'Response Produce(key: 0, version: 7)', error: 'Invalid record batch' },
      });
    // Eight a second for a minute and a half.
    for (; now < 90_000; now += 125) invalid();
    const errors = lines.filter(([level]) => level === 'error');
    assert.equal(errors.length, 2);
    assert.equal((errors[0]![1] as { repeated?: number }).repeated, undefined);
    assert.equal((errors[1]![1] as { repeated?: number }).repeated, 479);
  });
});
