import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createExtractionPool } from './pool.js';
import { DEFAULT_LIMITS } from './types.js';

const pool = (timeoutMs: number) => createExtractionPool({ size: 1, timeoutMs, memoryMb: 512, limits: DEFAULT_LIMITS });

/** How long a new pool takes for its first (tiny) file: mostly the worker loading its extraction code. */
async function coldStartMs(): Promise<number> {
  const p = pool(600_000);
  try {
    const started = performance.now();
    await p.extract({ bytes: Buffer.from('warm-up text'), filename: 'warm.txt' });
    return performance.now() - started;
  } finally {
    await p.close();
  }
}

describe('the extraction pool', () => {
  it(
    'limits the time a file takes to extract, not the time a new worker takes to load (slow on a busy machine)',
    { timeout: 120_000 },
    async () => {
      await coldStartMs(); // the first start also fills tsx's transform cache
      const start = await coldStartMs();
      // A limit shorter than a worker's start: a file that extracts in milliseconds must still pass.
      const limited = pool(Math.max(100, Math.floor(start / 2)));
      try {
        const result = await limited.extract({ bytes: Buffer.from('A short note about aspirin.'), filename: 'note.txt' });
        assert.match(result.blocks.map((b) => b.text).join(' '), /aspirin/);
      } finally {
        await limited.close();
      }
    },
  );

  it('still stops a file that takes longer than the limit once the worker is ready', { timeout: 120_000 }, async () => {
    const limited = pool(1);
    try {
      // Warm the worker with a limit it cannot meet for a real file, then check the message.
      const failed = await limited.extract({ bytes: Buffer.from('x'.repeat(2_000_000)), filename: 'big.txt' }).then(
        () => undefined,
        (err: Error & { permanent?: boolean }) => err,
      );
      assert.ok(failed, 'a 2 MB text file does not extract within 1 ms');
      assert.match(failed.message, /longer than 0 s, the limit per file/);
      assert.equal(failed.permanent, true);
    } finally {
      await limited.close();
    }
  });
});
