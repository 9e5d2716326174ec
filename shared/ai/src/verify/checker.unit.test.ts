import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createFactChecker } from './checker.js';
import type { EvidencePassage } from './port.js';

const passage = (id: string, text: string): EvidencePassage => ({ content_id: id, version_id: `${id}-v1`, chunk_id: `${id}-v1:0`, text });

const HANDBOOK = passage(
  'handbook',
  'Employees receive 25 days of paid vacation every year. Travel expenses are reimbursed within 30 days. ' +
    'The new onboarding programme increased retention by 12% in 2023. Remote work did not reduce productivity. ' +
    'The company was founded in Berlin by Anna Weber.',
);
const PRICING = passage(
  'pricing',
  'The Pro plan costs $49 per month and includes 10 seats. Annual billing is 20% cheaper than monthly billing.',
);

const checker = createFactChecker();
const retrieve = async () => [HANDBOOK, PRICING];
const one = async (text: string, extra: Partial<Parameters<typeof checker.check>[0]> = {}) => {
  const [s, ...rest] = await checker.check({ text, retrieve, ...extra });
  assert.equal(rest.length, 0, 'one sentence expected');
  return s!;
};

describe('the embedded fact checker', () => {
  it('supports a sentence a source states, quoting the span verbatim with its offsets in the text', async () => {
    const text = 'Intro words aside. Employees receive 25 days of paid vacation every year.';
    const [, s] = await checker.check({ text, retrieve });
    assert.equal(s!.verdict, 'supported');
    assert.equal(text.slice(s!.start, s!.end), s!.text);
    assert.deepEqual(s!.support[0], {
      content_id: 'handbook',
      version_id: 'handbook-v1',
      chunk_id: 'handbook-v1:0',
      quote: 'Employees receive 25 days of paid vacation every year.',
      score: 1,
    });
    assert.ok(HANDBOOK.text.includes(s!.support[0]!.quote));
  });

  it('supports a shorter restatement of part of a sentence', async () => {
    const s = await one('Travel expenses are reimbursed within 30 days.');
    assert.equal(s.verdict, 'supported');
  });

  it('catches a changed number and names both values', async () => {
    const s = await one('Employees receive 21 days of paid vacation every year.');
    assert.equal(s.verdict, 'contradicted');
    assert.match(s.reason!, /21 days differs from the source's 25 days/);
    assert.equal(s.support[0]!.content_id, 'handbook');
  });

  it('catches a changed unit', async () => {
    const s = await one('Travel expenses are reimbursed within 30 weeks.');
    assert.equal(s.verdict, 'contradicted');
    assert.match(s.reason!, /unit of 30 weeks/);
  });

  it('catches a changed percentage and a changed price', async () => {
    assert.equal((await one('The new onboarding programme increased retention by 21% in 2023.')).verdict, 'contradicted');
    assert.equal((await one('The Pro plan costs $59 per month and includes 10 seats.')).verdict, 'contradicted');
  });

  it('catches a flipped direction', async () => {
    const s = await one('The new onboarding programme decreased retention by 12% in 2023.');
    assert.equal(s.verdict, 'contradicted');
    assert.match(s.reason!, /"decreased" where the source says "increased"/);
    assert.equal((await one('Annual billing is 20% more expensive than monthly billing.')).verdict === 'supported', false);
  });

  it('catches an added and a dropped negation', async () => {
    const added = await one('The new onboarding programme did not increase retention by 12% in 2023.');
    assert.equal(added.verdict, 'contradicted');
    assert.match(added.reason!, /adds a negation/);
    const dropped = await one('Remote work reduced productivity.');
    assert.equal(dropped.verdict, 'contradicted');
    assert.match(dropped.reason!, /drops the source's negation/);
  });

  it('catches a swapped name', async () => {
    const s = await one('The company was founded in Munich by Anna Weber.');
    assert.equal(s.verdict, 'contradicted');
    assert.match(s.reason!, /"Munich" where the source names "Berlin"/);
  });

  it('marks a sentence no source states as unsupported with no support', async () => {
    const s = await one('Our cafeteria serves excellent sushi on Fridays.');
    assert.equal(s.verdict, 'unsupported');
    assert.deepEqual(s.support, []);
  });

  it('marks a sentence only partly backed as unsupported and shows the closest span', async () => {
    const s = await one('Employees receive 25 days of paid vacation and free gym membership and a company car.');
    assert.equal(s.verdict, 'unsupported');
    assert.equal(s.support[0]!.quote, 'Employees receive 25 days of paid vacation every year.');
    assert.match(s.reason!, /% of its words/);
  });

  it('gives questions, calls to action and headings no checkable claim', async () => {
    const out = await checker.check({ text: '# Our benefits\n\nWhat do employees get? Contact us today! Thanks.', retrieve });
    assert.deepEqual(
      out.map((s) => s.verdict),
      ['not_factual', 'not_factual', 'not_factual', 'not_factual'],
    );
    assert.ok(out.every((s) => s.support.length === 0));
  });

  it('checks a sentence against the passages its [n] markers cite before searching', async () => {
    let asked = 0;
    const counting = async () => {
      asked++;
      return [HANDBOOK];
    };
    const out = await checker.check({
      text: 'The Pro plan includes 10 seats [1]. Employees receive 25 days of paid vacation every year [2].',
      cited: [PRICING, HANDBOOK],
      retrieve: counting,
    });
    assert.deepEqual(
      out.map((s) => [s.verdict, s.cited, s.support[0]?.content_id]),
      [
        ['supported', [1], 'pricing'],
        ['supported', [2], 'handbook'],
      ],
    );
    assert.equal(asked, 0, 'cited passages sufficed');
  });

  it('falls back to the knowledge base when the cited passage does not back the sentence', async () => {
    const out = await checker.check({ text: 'Employees receive 25 days of paid vacation every year [1].', cited: [PRICING], retrieve });
    assert.equal(out[0]!.verdict, 'supported');
    assert.equal(out[0]!.support[0]!.content_id, 'handbook');
  });

  it('says when a marker points past the cited sources', async () => {
    const out = await checker.check({ text: 'Our cafeteria serves excellent sushi on Fridays [4].', cited: [PRICING] });
    assert.equal(out[0]!.verdict, 'unsupported');
    assert.match(out[0]!.reason!, /cites \[4\], which is not among the 1 sources/);
  });

  it('without passages or a retriever nothing is supported', async () => {
    const out = await checker.check({ text: 'Employees receive 25 days of paid vacation every year.' });
    assert.equal(out[0]!.verdict, 'unsupported');
    assert.match(out[0]!.reason!, /no source/);
  });

  it('catches a number changed to a value the source uses elsewhere', async () => {
    const trial = passage(
      'trial',
      'Responses were seen in arms 2 and 3 of the study. Arm 3 enrolled 40 patients while arm 2 enrolled 55 patients.',
    );
    const r = async () => [trial];
    const [twice] = await checker.check({ text: 'Responses were seen in arms 3 and 3 of the study.', retrieve: r });
    assert.equal(twice!.verdict, 'contradicted');
    const [moved] = await checker.check({ text: 'Arm 3 enrolled 55 patients while arm 2 enrolled 55 patients.', retrieve: r });
    assert.equal(moved!.verdict, 'contradicted');
    assert.match(moved!.reason!, /55 differs from the source's 40/);
    const [same] = await checker.check({ text: 'Arm 3 enrolled 40 patients.', retrieve: r });
    assert.equal(same!.verdict, 'supported');
  });

  it('reads decimals written with a middle dot', async () => {
    const p = passage('gbd', 'The safest level of drinking was 0·8 standard drinks per week.');
    const [s] = await checker.check({ text: 'The safest level of drinking was 0·9 standard drinks per week.', retrieve: async () => [p] });
    assert.equal(s!.verdict, 'contradicted');
    assert.match(s!.reason!, /0·9 differs from the source's 0·8/);
  });

  it('catches a dropped "not" before a function word and keeps negations to their own clause and sentence', async () => {
    const p = passage(
      'ub',
      'In most, but not all, of these examples, ubiquitination leads to degradation. When produced alone, the virus is non-infectious. The enzyme is closely related to APOBEC1.',
    );
    const r = async () => [p];
    assert.equal(
      (await checker.check({ text: 'In most, but all, of these examples, ubiquitination leads to degradation.', retrieve: r }))[0]!.verdict,
      'contradicted',
    );
    const [added] = await checker.check({ text: 'The enzyme is not closely related to APOBEC1.', retrieve: r });
    assert.equal(added!.verdict, 'contradicted');
    assert.equal((await checker.check({ text: 'The enzyme is closely related to APOBEC1.', retrieve: r }))[0]!.verdict, 'supported');
  });

  it('treats up and down, enhanced and reduced, induced and inhibited as opposite directions', async () => {
    const p = passage('dc', 'Upon maturation, DC-SIGN is up-regulated and the enhanced capture of HIV-1 is induced by gangliosides.');
    const r = async () => [p];
    for (const text of [
      'Upon maturation, DC-SIGN is down-regulated and the enhanced capture of HIV-1 is induced by gangliosides.',
      'Upon maturation, DC-SIGN is up-regulated and the reduced capture of HIV-1 is induced by gangliosides.',
      'Upon maturation, DC-SIGN is up-regulated and the enhanced capture of HIV-1 is inhibited by gangliosides.',
    ])
      assert.equal((await checker.check({ text, retrieve: r }))[0]!.verdict, 'contradicted', text);
  });

  it('reads a double negation as none, and picks the direction word standing where the claim has its own', async () => {
    const p = passage(
      'hac',
      'We were unable to generate de novo HACs at a reasonable frequency. Following TCR activation, Nlrp12 inhibits Akt phosphorylation.',
    );
    const r = async () => [p];
    const [dbl] = await checker.check({ text: 'We were not unable to generate de novo HACs at a reasonable frequency.', retrieve: r });
    assert.equal(dbl!.verdict, 'contradicted');
    const [swap] = await checker.check({ text: 'Following TCR inhibition, Nlrp12 inhibits Akt phosphorylation.', retrieve: r });
    assert.equal(swap!.verdict, 'contradicted');
    assert.match(swap!.reason!, /"inhibition" where the source says "activation"/);
    assert.equal(
      (await checker.check({ text: 'Following TCR activation, Nlrp12 inhibits Akt phosphorylation.', retrieve: r }))[0]!.verdict,
      'supported',
    );
  });

  it('does not back a sentence glued together from halves of two sources', async () => {
    const [s] = await checker.check({
      text: 'Employees receive 25 days of paid vacation, and the Pro plan includes 10 seats with annual billing.',
      retrieve,
    });
    assert.notEqual(s!.verdict, 'supported');
    // The same two facts, each in its own sentence, are both supported.
    const both = await checker.check({
      text: 'Employees receive 25 days of paid vacation every year. The Pro plan includes 10 seats.',
      retrieve,
    });
    assert.deepEqual(
      both.map((x) => x.verdict),
      ['supported', 'supported'],
    );
  });

  it('returns the same verdicts however often it runs (no state between checks)', async () => {
    const text = 'Employees receive 21 days of paid vacation every year. Remote work did not reduce productivity.';
    const a = await checker.check({ text, retrieve });
    const b = await createFactChecker().check({ text, retrieve });
    assert.deepEqual(a, b);
    assert.deepEqual(await checker.check({ text, retrieve }), a);
  });

  it('reads a preferred term as the word it stands in for, and still quotes the source as written', async () => {
    const p = passage('crm', 'Our clients receive a dedicated account manager and quarterly business reviews.');
    // "partners" is no synonym of "clients" in WordNet: only the brand kit makes them one.
    const text = 'Our partners receive a dedicated account manager and quarterly business reviews.';
    const r = async () => [p];
    const strict = createFactChecker({ threshold: 0.9 });
    const [plain] = await strict.check({ text, retrieve: r });
    assert.notEqual(plain!.verdict, 'supported');
    const [eq] = await strict.check({ text, retrieve: r, equivalents: [{ term: 'partners', instead_of: ['clients', 'buyers'] }] });
    assert.equal(eq!.verdict, 'supported');
    assert.equal(eq!.support[0]!.quote, 'Our clients receive a dedicated account manager and quarterly business reviews.');
    // Equivalents do not excuse a changed number.
    const q = passage('crm2', 'Our clients receive 4 business reviews a year.');
    const [num] = await checker.check({
      text: 'Our partners receive 6 business reviews a year.',
      retrieve: async () => [q],
      equivalents: [{ term: 'partners', instead_of: ['clients'] }],
    });
    assert.equal(num!.verdict, 'contradicted');
  });

  it('refuses a threshold outside 0..1 and a retrieve limit below 1', () => {
    assert.throws(() => createFactChecker({ threshold: 1.5 }), RangeError);
    assert.throws(() => createFactChecker({ threshold: Number.NaN }), RangeError);
    assert.throws(() => createFactChecker({ retrieveLimit: 0 }), RangeError);
  });

  it('a stricter threshold turns a partial match unsupported', async () => {
    const strict = createFactChecker({ threshold: 0.99 });
    const [s] = await strict.check({ text: 'Employees receive 25 days of vacation every year from their manager.', retrieve });
    assert.equal(s!.verdict, 'unsupported');
    const [t] = await createFactChecker({ threshold: 0.5 }).check({
      text: 'Employees receive 25 days of vacation every year from their manager.',
      retrieve,
    });
    assert.equal(t!.verdict, 'supported');
  });
});
