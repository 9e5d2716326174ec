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

  it('with a settle time, a dependency that comes back in steps is one outage: one warn, one info', async () => {
    const { lines, logger } = recorder();
    const outage = createOutageLog(logger, 'kafka', Date.now, 50);
    outage.failed(new Error('connect ECONNREFUSED'));
    // The admin client answers, a consumer still fails, then everything answers.
    outage.recovered();
    outage.failed(new Error('connect ECONNREFUSED'));
    outage.recovered();
    assert.equal(outage.down, false);
    for (let i = 0; lines.filter(([level]) => level === 'info').length === 0; i++) {
      assert.ok(i < 100, 'the recovery is said once it held');
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(
      lines.filter(([level]) => level !== 'debug'),
      [
        ['warn', 'kafka unavailable; retrying in the background (logged again when it recovers)'],
        ['info', 'kafka available again'],
      ],
    );
  });
});
