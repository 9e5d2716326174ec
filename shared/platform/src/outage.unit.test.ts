import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { createOutageLog } from './outage.js';

const recorder = () => {
  const lines: Array<[string, string]> = [];
  const at = (level: string) => (_fields: object, msg: string) => void lines.push([level, msg]);
  return { lines, logger: { warn: at('warn'), info: at('info'), debug: at('debug'), error: at('error') } as unknown as Logger };
};

describe('the outage log of a dependency', () => {
  it('says an outage once at warn however many calls fail, and its end once at info', () => {
    const { lines, logger } = recorder();
    let now = 1000;
    const outage = createOutageLog(logger, 'kafka', () => now);
    outage.recovered(); // nothing was down
    for (let i = 0; i < 1600; i++) outage.failed(new Error('connect ECONNREFUSED'));
    assert.equal(outage.down, true);
    now = 71_000;
    outage.recovered();
    outage.recovered();
    assert.equal(outage.down, false);
    const loud = lines.filter(([level]) => level !== 'debug');
    assert.deepEqual(loud, [
      ['warn', 'kafka unavailable; retrying in the background (logged again when it recovers)'],
      ['info', 'kafka available again'],
    ]);
    assert.equal(lines.filter(([level]) => level === 'debug').length, 1599);
    // The next outage is said again.
    outage.failed(new Error('again'));
    assert.equal(lines.at(-1)![0], 'warn');
  });
});
