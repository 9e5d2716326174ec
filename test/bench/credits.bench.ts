/**
 * Credits on the hot path: every metered request (upload, search, generation)
 * reserves its cost before the work and settles it after, each a decision over
 * the organization's open credits stream, which a decision reads whole. The
 * stream is bounded by its epoch size (then the state is carried forward into
 * the next one). This measures a reserve + settle pair through the real store,
 * command bus and projections at the default epoch size against 500 (the
 * default before) in the same run, and a few sizes between.
 *
 *   npm run bench:credits            (PAIRS per size, default 2000; ROUNDS, default 2)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { randomIds, systemClock } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { CallContext } from '@kb/rpc';
import { gatewayBench } from '@kb/gateway/bench';

const { gatewayProjections, createCreditsService, DEFAULT_EPOCH_SIZE } = gatewayBench;
const PAIRS = Number(process.env.PAIRS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const BEFORE = 500;
const SIZES = [...new Set([BEFORE, 128, 64, DEFAULT_EPOCH_SIZE, 16])];

/** CPU milliseconds (this process, all threads) and wall milliseconds per reserve + settle pair at one epoch size. */
async function pairCost(epochSize: number): Promise<{ cpu: number; wall: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'kb-bench-credits-'));
  const store = createSqliteStore({ path: join(dir, 'gateway.db') });
  try {
    const commands = createCommandBus({
      store,
      catalog: eventCatalog,
      projections: gatewayProjections,
      ids: randomIds,
      clock: systemClock,
    });
    const credits = createCreditsService({
      store,
      commands,
      ids: randomIds,
      clock: systemClock,
      costs: { ingest: 1, query: 1, generation: 10 },
      epochSize,
    });
    const ctx: CallContext = {
      org_id: randomUUID(),
      principal: { type: 'user', id: randomUUID() },
      permissions: [],
      folder_scope: null,
      request_id: randomUUID(),
    };
    await credits.grant(ctx, 10 * PAIRS, 'bench');
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < PAIRS; i++) {
      const r = await credits.reserve(ctx, 'ingest', 1);
      await credits.settle(r!);
    }
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    const left = (await credits.balance(ctx)).balance;
    if (left !== 9 * PAIRS) throw new Error(`balance ${left}, expected ${9 * PAIRS}`);
    return { cpu: (c.user + c.system) / 1000 / PAIRS, wall: wall / PAIRS };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`credits bench: ${PAIRS} reserve + settle pairs per epoch size, ${ROUNDS} rounds (sizes alternate within a round)`);
const results = new Map<number, { cpu: number[]; wall: number[] }>(SIZES.map((s) => [s, { cpu: [], wall: [] }]));
for (let round = 0; round < ROUNDS; round++)
  for (const size of SIZES) {
    const { cpu, wall } = await pairCost(size);
    results.get(size)!.cpu.push(cpu);
    results.get(size)!.wall.push(wall);
  }
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const base = results.get(BEFORE)!;
for (const [size, r] of results) {
  const label = size === DEFAULT_EPOCH_SIZE ? `${size} (default)` : size === BEFORE ? `${size} (before)` : String(size);
  console.log(
    `  epoch ${label.padEnd(13)} ${mean(r.wall).toFixed(3)} ms wall, ${mean(r.cpu).toFixed(3)} ms CPU per pair; ` +
      `CPU ${(mean(r.cpu) / mean(base.cpu)).toFixed(2)}x of epoch ${BEFORE}'s`,
  );
}
