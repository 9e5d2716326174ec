/**
 * The pure per-answer work of an import, current code against the code before
 * its fast paths (the oracle kept beside the domain modules), in the same run
 * and on the same answers: validateAnswerInput, answerFacts, findMentions
 * alone, eventFacts, and the row sums of the facts (addFacts and
 * tallySourceFacts per prompt, mergeSourceTally into a roll-up and compactOf
 * every tally, per batch of 1,000). Answers are shaped as in
 * analytics.bench.ts (a few brands, up to four citations of 200 domains).
 * Rounds alternate old and new; the figure is the median CPU time per answer,
 * and the first round checks both give equal results.
 *
 *   npm run bench:answer-facts   (ANSWERS, ROUNDS to scale)
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { validateAnswerInput } from '../../services/analytics/src/domain/answer-input.js';
import { findMentions } from '../../services/analytics/src/domain/brands.js';
import { answerFacts, eventFacts, type AnswerFacts, type FoldContext } from '../../services/analytics/src/domain/facts.js';
import { addFacts, emptyCounts, emptySourceTally, mergeSourceTally, tallySourceFacts } from '../../services/analytics/src/domain/counts.js';
import { compactOf } from '../../services/analytics/src/projections/source-rows.js';
import * as oracle from '../../services/analytics/src/domain/fold-oracle.test.js';
import { BRANDS, DOMAINS, prng } from './synthetic.js';

const ANSWERS = Number(process.env.ANSWERS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);

const rand = prng(3);
const promptIds = Array.from({ length: 200 }, () => randomUUID());
const items = Array.from({ length: ANSWERS }, (_, i) => {
  const words: string[] = [];
  const n = 2 + Math.floor(rand() * 5);
  for (let k = 0; k < n; k++) words.push(BRANDS[Math.floor(rand() * BRANDS.length)]!, 'is', 'good.');
  return {
    answer_id: randomUUID(),
    prompt_id: promptIds[i % promptIds.length]!,
    model: 'gpt-4o',
    location: 'us',
    run_at: new Date(Date.parse('2025-01-01T00:00:00Z') + Math.floor(rand() * 3 * 86_400_000)).toISOString(),
    text: words.join(' '),
    citations: Array.from(
      { length: Math.floor(rand() * 5) },
      () => `https://${DOMAINS[Math.floor(rand() * rand() * DOMAINS.length)]!}/page-${Math.floor(rand() * 10)}`,
    ),
    brands: [...new Set(words.filter((w) => BRANDS.includes(w)))],
  };
});
const context: FoldContext = {
  rules: DOMAINS.slice(0, 10).map((d, i) => ({ source_id: randomUUID(), match_type: 'domain', pattern: d, tier: 'primary', seq: i })),
  brands: [
    { key: 'org', names: ['Acme'] },
    { key: 'c1', names: ['Globex'] },
    { key: 'c2', names: ['Initech'] },
  ],
};
const now = new Date('2026-01-01T00:00:00Z');

/** CPU microseconds per answer of one pass, and its results. */
function pass<T>(fn: (item: (typeof items)[number], i: number) => T): [number, T[]] {
  const out: T[] = new Array(items.length);
  const c0 = process.cpuUsage();
  for (let i = 0; i < items.length; i++) out[i] = fn(items[i]!, i);
  const c = process.cpuUsage(c0);
  return [(c.user + c.system) / items.length, out];
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The row sums of a batch's facts, one leaf per prompt and a roll-up over
 * them, each tally in compact form; per answer, the batch's result (else undefined).
 */
const facts = items.map((a) => oracle.answerFacts(a, context));
const names = new Map([
  ['org', 'Acme'],
  ['c1', 'Globex'],
  ['c2', 'Initech'],
]);
type Fold = Pick<typeof oracle, 'addFacts' | 'tallySourceFacts' | 'mergeSourceTally' | 'compactOf'>;
const sumRows = (fns: Fold) => {
  let batch: AnswerFacts[] = [];
  return (_: unknown, i: number) => {
    batch.push(facts[i]!);
    if (batch.length < 1000 && i < items.length - 1) return undefined;
    const leaves = new Map<string, { counts: ReturnType<typeof emptyCounts>; sources: ReturnType<typeof emptySourceTally> }>();
    for (const f of batch) {
      let leaf = leaves.get(f.prompt_id);
      if (!leaf) leaves.set(f.prompt_id, (leaf = { counts: emptyCounts(), sources: emptySourceTally() }));
      fns.addFacts(leaf.counts, f);
      fns.tallySourceFacts(leaf.sources, f);
    }
    const all = emptySourceTally();
    for (const leaf of leaves.values()) fns.mergeSourceTally(all, leaf.sources);
    batch = [];
    return [...leaves.values()].map((l) => [l.counts, fns.compactOf(l.sources)]).concat([fns.compactOf(all)]);
  };
};

type Case = (a: (typeof items)[number], i: number) => unknown;
const cases: { name: string; old: Case; now: Case }[] = [
  { name: 'validateAnswerInput', old: (a) => oracle.validateAnswerInput(a, now), now: (a) => validateAnswerInput(a, now) },
  { name: 'answerFacts', old: (a) => oracle.answerFacts(a, context), now: (a) => answerFacts(a, context) },
  {
    name: 'findMentions',
    old: (a) => oracle.findMentions(a.text, context.brands, a.brands),
    now: (a) => findMentions(a.text, context.brands, a.brands),
  },
  {
    name: 'validate + facts',
    old: (a) =>
      oracle.answerFacts({ ...(oracle.validateAnswerInput(a, now) as { value: typeof a }).value, answer_id: a.answer_id }, context),
    now: (a) => answerFacts({ ...(validateAnswerInput(a, now) as { value: typeof a }).value, answer_id: a.answer_id }, context),
  },
  {
    name: 'eventFacts',
    old: (_, i) => oracle.eventFacts(facts[i]!, names),
    now: (_, i) => eventFacts(facts[i]!, names),
  },
  { name: 'row sums', old: sumRows(oracle), now: sumRows({ addFacts, tallySourceFacts, mergeSourceTally, compactOf }) },
];

console.log(`answer-facts bench: ${ANSWERS} answers, ${ROUNDS} rounds (median CPU µs per answer)`);
for (const c of cases) {
  const old: number[] = [];
  const cur: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const [o, a] = pass(c.old);
    const [n, b] = pass(c.now);
    old.push(o);
    cur.push(n);
    if (r === 0) assert.deepEqual(b, a, `${c.name}: results differ from the oracle`);
  }
  const [mo, mn] = [median(old), median(cur)];
  console.log(
    `  ${c.name.padEnd(22)} before ${mo.toFixed(2).padStart(6)} µs   after ${mn.toFixed(2).padStart(6)} µs   ${(mo / mn).toFixed(1)}x`,
  );
}
