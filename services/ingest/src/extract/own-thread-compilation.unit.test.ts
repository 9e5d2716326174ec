import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { ownThreadCompilation } from './own-thread-compilation.js';

const fakeWorker = () => new EventEmitter() as unknown as Worker;

describe('ownThreadCompilation', () => {
  it('turns background compilation off while a worker starts and back on once it is online', () => {
    const flags: string[] = [];
    const start = ownThreadCompilation((f) => flags.push(f));
    const worker = start(fakeWorker);
    assert.deepEqual(flags, ['--no-concurrent-recompilation']);
    worker.emit('online');
    assert.deepEqual(flags, ['--no-concurrent-recompilation', '--concurrent-recompilation']);
    worker.emit('exit', 0);
    assert.equal(flags.length, 2, 'a later exit changes nothing');
    assert.equal(worker.listenerCount('exit') + worker.listenerCount('error') + worker.listenerCount('online'), 0, 'no listener is left');
  });

  it('keeps it off until the last of several starting workers is online', () => {
    const flags: string[] = [];
    const start = ownThreadCompilation((f) => flags.push(f));
    const a = start(fakeWorker);
    const b = start(fakeWorker);
    a.emit('online');
    assert.deepEqual(flags, ['--no-concurrent-recompilation'], 'the second worker may not have its isolate yet');
    b.emit('online');
    assert.deepEqual(flags, ['--no-concurrent-recompilation', '--concurrent-recompilation']);
    const c = start(fakeWorker);
    c.emit('online');
    assert.deepEqual(flags.slice(2), ['--no-concurrent-recompilation', '--concurrent-recompilation'], 'a later start toggles again');
  });

  it('turns it back on when a worker fails to start', () => {
    const flags: string[] = [];
    const start = ownThreadCompilation((f) => flags.push(f));
    const failing = start(fakeWorker);
    failing.on('error', () => {});
    failing.emit('error', new Error('module not found'));
    assert.equal(flags.at(-1), '--concurrent-recompilation');

    assert.throws(
      () =>
        start(() => {
          throw new Error('too many threads');
        }),
      /too many threads/,
    );
    assert.equal(flags.at(-1), '--concurrent-recompilation', 'a spawn that throws');
    const exited = start(fakeWorker);
    exited.emit('exit', 1);
    assert.deepEqual(flags.slice(-2), ['--no-concurrent-recompilation', '--concurrent-recompilation'], 'an exit before online');
  });
});
