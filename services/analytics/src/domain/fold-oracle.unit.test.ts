import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as oracle from './fold-oracle.test.js';
import { MEMO_MAX_URL, normalizeUrl, registrableDomain } from './urls.js';
import { countOccurrences, findMentions } from './brands.js';
import { answerFacts, dayOf, eventFacts, type FoldContext } from './facts.js';
import { UNPARSEABLE, validateAnswerInput } from './answer-input.js';
import { SOURCE_MAPS, addFacts, emptyCounts, emptySourceTally, mergeSourceTally, tallySourceFacts, type SourceTally } from './counts.js';
import type { AnswerFacts } from './facts.js';
import type { MatchType, SourceRule, TierName } from './sources.js';

/**
 * The fold's fast paths (memos, compiled names, fewer allocations) against the
 * implementations they replaced (fold-oracle.test.ts), on random inputs: equal
 * results, on the first call (computed) and the second (remembered).
 */

const hostArb = fc.oneof(
  fc.constantFrom(
    'example.com',
    'www.Example.com',
    'docs.example.co.uk',
    'a.b.github.io',
    'localhost',
    '127.0.0.1',
    'nohost',
    'EXAMPLE.com.',
  ),
  fc.domain(),
);
const pathArb = fc.oneof(fc.constantFrom('', '/', '/blog/', '/a%20b', '/%E0%A4%A', '/x//', '/Blog/Post'), fc.webPath());
const queryArb = fc.oneof(
  fc.constantFrom('', '?b=2&a=1', '?utm_source=x&id=3', '?gclid=z', '?REF=1&x', '?a=1&a=0'),
  fc.webQueryParameters().map((q) => `?${q}`),
);
/** URL spellings as answers cite them, with schemes, ports, fragments and garbage mixed in. */
const rawUrlArb = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('https://', 'http://', 'HTTP://', '', 'ftp://', 'mailto:', 'https://user:pw@', ' https://'),
      hostArb,
      fc.constantFrom('', ':80', ':443', ':8080'),
      pathArb,
      queryArb,
      fc.constantFrom('', '#top', ' '),
    )
    .map((parts) => parts.join('')),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string({ maxLength: 30 }),
);

describe('normalizeUrl and registrableDomain (memoised) against the oracle (fast-check)', () => {
  it('equal results for every spelling, computed and remembered', () => {
    fc.assert(
      fc.property(rawUrlArb, (raw) => {
        const expected = oracle.normalizeUrl(raw);
        assert.deepEqual(normalizeUrl(raw), expected);
        assert.deepEqual(normalizeUrl(raw), expected);
        if (expected) {
          assert.equal(registrableDomain(expected.host), oracle.registrableDomain(expected.host));
          assert.equal(registrableDomain(expected.host), oracle.registrableDomain(expected.host));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('a remembered result cannot be changed by a caller', () => {
    const url = normalizeUrl('https://example.com/frozen')!;
    assert.throws(() => {
      (url as { key: string }).key = 'other';
    }, TypeError);
    assert.equal(normalizeUrl('https://example.com/frozen')!.key, 'example.com/frozen');
  });

  it('a URL longer than the memo takes is still normalised', () => {
    const raw = `https://example.com/${'a'.repeat(MEMO_MAX_URL)}?utm_source=x`;
    assert.deepEqual(normalizeUrl(raw), oracle.normalizeUrl(raw));
  });
});

/** Words of answers and brand names alike: names that overlap, differ in case or spacing, or sit inside other words. */
const WORDS = [
  'Acme',
  'ACME',
  'acme',
  'Acme Corp',
  'Corp',
  'Corp Inc',
  'Acmeville',
  'Globex',
  'GBX',
  'Ünïcode',
  'ünïcode',
  'Straße',
  'a.b',
  'C++',
  '(x)',
  '**Hooli**',
  '1. Vandelay:',
  'is',
  '',
  ' ',
];
const SEPARATORS = [' ', '  ', '\n', ', ', '. ', '-', '', '\t', '\n- '];
const textArb = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 25 })
  .map((parts) => parts.map(([w, sep]) => w + sep).join(''));
const nameArb = fc.oneof(fc.constantFrom(...WORDS, 'acme  corp', ' Acme ', 'Corp\nInc'), fc.string({ maxLength: 6 }));
const trackedArb = fc
  .array(fc.array(nameArb, { minLength: 1, maxLength: 3 }), { maxLength: 4 })
  .map((lists) => lists.map((names, i) => ({ key: i === 0 ? 'org' : `c${i}`, names })));

describe('countOccurrences and findMentions (compiled names) against the oracle (fast-check)', () => {
  it('equal counts and first offsets for any names and text', () => {
    fc.assert(
      fc.property(textArb, fc.array(nameArb, { maxLength: 4 }), (text, names) => {
        assert.deepEqual(countOccurrences(text, names), oracle.countOccurrences(text, names));
        assert.deepEqual(countOccurrences(text, names), oracle.countOccurrences(text, names));
      }),
      { numRuns: 1000 },
    );
  });

  it('equal mentions for any tracked brands, with and without the producer list', () => {
    fc.assert(
      fc.property(textArb, trackedArb, fc.option(fc.array(nameArb, { maxLength: 6 }), { nil: undefined }), (text, tracked, listed) => {
        const expected = oracle.findMentions(text, tracked, listed);
        assert.deepEqual(findMentions(text, tracked, listed), expected);
        assert.deepEqual(findMentions(text, tracked, listed), expected);
      }),
      { numRuns: 1000 },
    );
  });
});

/** Rules over a few hosts and paths (so they match and compete), with their ids, tiers and order. */
const ruleArb = fc.record({
  source_id: fc.constantFrom('r1', 'r2', 'r3'),
  match_type: fc.constantFrom<MatchType>('domain', 'host', 'path_prefix', 'exact_url'),
  pattern: fc.constantFrom('example.com', 'docs.example.co.uk', 'example.com/blog', 'example.com/a b', 'a.b.github.io'),
  tier: fc.constantFrom<TierName>('primary', 'tracked', 'secondary'),
  seq: fc.nat({ max: 5 }),
});
const contextArb: fc.Arbitrary<FoldContext> = fc.record({ rules: fc.array(ruleArb, { maxLength: 5 }), brands: trackedArb });
const timestampArb = fc.oneof(
  fc
    .date({ min: new Date('1969-12-30T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '2026-01-05T23:59:59.999-01:00',
    '2026-01-05T00:00+14:00',
    '2025-02-29T00:00:00Z',
    'not a date',
    '+275760-09-13T00:00:00Z',
  ),
);
const answerArb = fc.record({
  answer_id: fc.uuid(),
  prompt_id: fc.uuid(),
  model: fc.constantFrom('gpt-4o', 'claude'),
  location: fc.constantFrom('us', 'global'),
  run_at: timestampArb,
  text: textArb,
  citations: fc.array(rawUrlArb, { maxLength: 6 }),
  brands: fc.option(fc.array(nameArb, { maxLength: 5 }), { nil: undefined }),
});
/** The result, or the error thrown, to compare either. */
const outcome = <T>(fn: () => T) => {
  try {
    return { value: fn() };
  } catch (e) {
    return { error: String(e) };
  }
};

describe('answerFacts (memoised citations, day names) against the oracle (fast-check)', () => {
  it('equal days for any timestamp, the error of one that is not a date included', () => {
    fc.assert(
      fc.property(timestampArb, (t) => {
        assert.deepEqual(
          outcome(() => dayOf(t)),
          outcome(() => oracle.dayOf(t)),
        );
        assert.deepEqual(
          outcome(() => dayOf(t)),
          outcome(() => oracle.dayOf(t)),
        );
      }),
    );
  });

  it('equal facts for any answer and context, a context seen before or a copy of one included', () => {
    fc.assert(
      fc.property(contextArb, fc.array(answerArb, { minLength: 1, maxLength: 4 }), (context, answers) => {
        const copy: FoldContext = { rules: context.rules.map((r) => ({ ...r })), brands: context.brands.map((b) => ({ ...b })) };
        for (const ctx of [context, context, copy])
          for (const a of answers)
            assert.deepEqual(
              outcome(() => answerFacts(a, ctx)),
              outcome(() => oracle.answerFacts(a, context)),
            );
      }),
      { numRuns: 500 },
    );
  });

  it('a URL longer than the memo takes gets the same facts', () => {
    const answer = {
      answer_id: 'a',
      prompt_id: 'p',
      model: 'm',
      location: 'l',
      run_at: '2026-01-05T00:00:00Z',
      text: '',
      citations: [`https://docs.example.com/${'a'.repeat(MEMO_MAX_URL)}`],
    };
    const context: FoldContext = {
      rules: [{ source_id: 'r', match_type: 'domain', pattern: 'example.com', tier: 'primary', seq: 0 }],
      brands: [],
    };
    assert.deepEqual(answerFacts(answer, context), oracle.answerFacts(answer, context));
    assert.equal(answerFacts(answer, context).citations[0]?.tier, 'primary');
  });

  it('the memo of one rule set never answers for another', () => {
    const rule = (tier: TierName): SourceRule => ({ source_id: 'r', match_type: 'domain', pattern: 'example.com', tier, seq: 0 });
    const facts = (tier: TierName) =>
      answerFacts(
        {
          answer_id: 'a',
          prompt_id: 'p',
          model: 'm',
          location: 'l',
          run_at: '2026-01-05T00:00:00Z',
          text: '',
          citations: ['https://example.com/x'],
        },
        { rules: [rule(tier)], brands: [] },
      ).citations[0]?.tier;
    assert.equal(facts('primary'), 'primary');
    assert.equal(facts('tracked'), 'tracked');
    assert.equal(facts('primary'), 'primary');
  });
});

/** Import items as clients send them: valid fields, wrong types, unknown fields, holes; each field present or not. */
const fieldArb = <T>(valid: fc.Arbitrary<T>) =>
  fc.option(fc.oneof(valid, valid, fc.constantFrom<unknown>(null, 7, '', '*', ' x ', [], {})), { nil: undefined });
const sparse = <T>(xs: T[]) => (xs.length > 1 ? Object.assign(new Array<T>(xs.length), xs.slice(1)) : xs);
const validItemArb = fc.record(
  {
    answer_id: fc.oneof(
      fc.uuid(),
      fc.uuid().map((u) => u.toUpperCase()),
    ),
    prompt_id: fc.uuid().map((u) => u.toUpperCase()),
    model: fc.constantFrom('gpt-4o', ' claude '),
    location: fc.constantFrom('us', ' de '),
    run_at: fc.oneof(timestampArb, fc.constantFrom('2026-01-05T10:00:00.5+02:00', '2026-01-05T10:00Z')),
    text: textArb,
    citations: fc.array(fc.webUrl(), { maxLength: 4 }),
    brands: fc.array(
      nameArb.filter((n) => n.trim() !== ''),
      { maxLength: 4 },
    ),
  },
  { requiredKeys: ['prompt_id', 'model', 'run_at', 'text', 'citations'] },
);
const itemArb = fc.oneof(
  validItemArb,
  fc.record(
    {
      answer_id: fieldArb(
        fc.oneof(
          fc.uuid(),
          fc.uuid().map((u) => u.toUpperCase()),
        ),
      ),
      prompt_id: fieldArb(fc.uuid()),
      model: fieldArb(fc.constantFrom('gpt-4o', ' claude ', 'x'.repeat(101))),
      location: fieldArb(fc.constantFrom('us', ' de ')),
      run_at: fieldArb(fc.oneof(timestampArb, fc.constantFrom('2026-01-05', '2999-01-01T00:00:00Z', '2026-01-05T10:00:00.5+02:00'))),
      text: fieldArb(textArb),
      citations: fieldArb(
        fc.array(fc.oneof(rawUrlArb, fc.constantFrom<unknown>(3, null)), { maxLength: 4 }).map((xs) => (xs.length === 3 ? sparse(xs) : xs)),
      ),
      brands: fieldArb(
        fc.array(fc.oneof(nameArb, fc.constantFrom<unknown>(' ', 4)), { maxLength: 4 }).map((xs) => (xs.length === 3 ? sparse(xs) : xs)),
      ),
      unexpected: fc.constantFrom(1),
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom<unknown>(UNPARSEABLE, null, [], 'text', 3),
);

describe('validateAnswerInput (one date parse, no spread copies) against the oracle (fast-check)', () => {
  it('equal verdicts, errors and values, fields in the same order', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    fc.assert(
      fc.property(itemArb, (item) => {
        const [got, expected] = [validateAnswerInput(item, now), oracle.validateAnswerInput(item, now)];
        assert.deepEqual(got, expected);
        assert.equal(JSON.stringify(got), JSON.stringify(expected));
      }),
      { numRuns: 3000 },
    );
  });
});

/** Facts with keys that repeat within and across answers; a few answers cite more than the short path takes. */
const citationArb = fc.record({
  page: fc.constantFrom('a.com/x', 'a.com/y', 'b.org', '__proto__', 'c.net/z'),
  domain: fc.constantFrom('a.com', 'b.org', 'constructor', 'c.net'),
  site: fc.constantFrom('a.com', 'b.org', 'c.net'),
  tier: fc.constantFrom<TierName>('primary', 'tracked', 'secondary', 'secondary', 'other' as TierName),
  source_id: fc.constantFrom<string | null>(null, 'r1', 'r2', 'none'),
});
const factsArb: fc.Arbitrary<AnswerFacts> = fc.record({
  answer_id: fc.constant('a'),
  prompt_id: fc.constant('p'),
  model: fc.constant('m'),
  location: fc.constant('l'),
  run_at: fc.constant('2026-01-05T00:00:00.000Z'),
  day: fc.constant('2026-01-05'),
  citations: fc.oneof(fc.array(citationArb, { maxLength: 6 }), fc.array(citationArb, { minLength: 7, maxLength: 14 })),
  tracked_mentions: fc.dictionary(fc.constantFrom('org', 'c1', 'c2'), fc.integer({ min: 1, max: 4 })),
  other_mentions: fc.array(fc.record({ name: fc.constantFrom('X', 'Y'), count: fc.integer({ min: 1, max: 3 }) }), { maxLength: 3 }),
  won: fc.boolean(),
  lost: fc.boolean(),
});
/** A tally's maps as entry lists: equal content and equal insertion order (stored rows of the earlier form keep it). */
const entries = (t: SourceTally) => SOURCE_MAPS.map((m) => [m, [...t[m]]]);

describe('addFacts, tallySourceFacts and mergeSourceTally (no Sets, no pairs) against the oracle (fast-check)', () => {
  it('equal rows and tallies, keys in the same order', () => {
    fc.assert(
      fc.property(fc.array(factsArb, { maxLength: 6 }), fc.array(factsArb, { maxLength: 6 }), (xs, ys) => {
        const fold = (fs: AnswerFacts[], add: typeof addFacts, tally: typeof tallySourceFacts) => {
          const counts = emptyCounts();
          const sources = emptySourceTally();
          for (const f of fs) tally(sources, add(counts, f) && f);
          return { counts, sources };
        };
        const [a, b] = [fold(xs, addFacts, tallySourceFacts), fold(ys, addFacts, tallySourceFacts)];
        const [oa, ob] = [fold(xs, oracle.addFacts, oracle.tallySourceFacts), fold(ys, oracle.addFacts, oracle.tallySourceFacts)];
        assert.deepEqual(a.counts, oa.counts);
        assert.equal(JSON.stringify(a.counts), JSON.stringify(oa.counts));
        assert.deepEqual(entries(a.sources), entries(oa.sources));
        assert.deepEqual(entries(mergeSourceTally(a.sources, b.sources)), entries(oracle.mergeSourceTally(oa.sources, ob.sources)));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('eventFacts (no spread of conditional objects) against the oracle (fast-check)', () => {
  it('equal event facts, fields in the same order', () => {
    const names = new Map([
      ['org', 'Acme'],
      ['c1', 'Globex'],
    ]);
    fc.assert(
      fc.property(factsArb, (f) => {
        const [got, expected] = [eventFacts(f, names), oracle.eventFacts(f, names)];
        assert.deepEqual(got, expected);
        assert.equal(JSON.stringify(got), JSON.stringify(expected));
      }),
    );
  });
});
