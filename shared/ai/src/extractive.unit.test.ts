import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { composeExtractiveAnswer } from './extractive.js';
import { NOTHING_FOUND } from './answer.js';

const chunks = [
  { text: 'The office opens at 8 am. Employees receive 25 days of paid vacation every year. Parking is free.' },
  { text: 'Vacation days that are not used expire at the end of March. The cafeteria serves lunch.' },
  { text: 'Travel expenses are reimbursed within 30 days.' },
];

describe('composeExtractiveAnswer', () => {
  it('quotes the sentences that cover the question and cites the chunk of each', () => {
    const a = composeExtractiveAnswer('How many vacation days do employees get each year?', chunks);
    assert.equal(a.grounded, true);
    assert.match(a.answer, /^Employees receive 25 days of paid vacation every year\. \[1\]/);
    assert.ok(!a.answer.includes('Parking'));
    assert.ok(!a.answer.includes('cafeteria'));
    assert.deepEqual(a.citations[0], { n: 1, chunk: 0 });
    for (const c of a.citations) assert.ok(a.answer.includes(`[${c.n}]`));
  });

  it('says nothing relevant was found instead of inventing an answer', () => {
    const a = composeExtractiveAnswer('What is the capital of Mongolia?', chunks);
    assert.deepEqual(a, { answer: NOTHING_FOUND, citations: [], grounded: false });
    assert.equal(composeExtractiveAnswer('vacation', []).answer, NOTHING_FOUND);
    assert.equal(composeExtractiveAnswer('the of and', chunks).grounded, false);
  });

  it("leaves a chunk's heading lines out of its sentences", () => {
    const sections = [
      {
        text: 'Warranty Terms\nThe panels carry a twenty five year performance warranty.\nClaims need the serial number.',
        heading_path: ['Solar Guide', 'Warranty Terms'],
      },
    ];
    const a = composeExtractiveAnswer('How long is the panels warranty?', sections);
    assert.equal(a.answer, 'The panels carry a twenty five year performance warranty. [1]');
    // Without the heading path the heading is indistinguishable from text: it stays.
    assert.match(
      composeExtractiveAnswer('How long is the panels warranty?', [{ text: sections[0]!.text }]).answer,
      /^Warranty Terms The panels/,
    );
  });

  it('quotes the table row that answers, not the whole sheet', () => {
    const rows = Array.from({ length: 40 }, (_, i) => `sku: S-${i}; product: Mounting rail ${i}; price: ${10 + i}; currency: EUR`);
    const sheet = {
      text: ['sku | product | price | currency', ...rows, 'sku: S-99; product: Hybrid inverter 6kW; price: 1299; currency: EUR'].join('\n'),
    };
    const a = composeExtractiveAnswer('What is the price of the hybrid inverter?', [sheet]);
    assert.equal(a.answer, 'sku: S-99; product: Hybrid inverter 6kW; price: 1299; currency: EUR [1]');
    // The header row is not a unit of its own: every row repeats it.
    assert.equal(
      composeExtractiveAnswer('sku product price', [{ text: sheet.text.split('\n').slice(0, 2).join('\n') }]).answer.includes('|'),
      false,
    );
  });

  it('quotes a list item alone, without its marker', () => {
    const chunk = {
      text: 'Running costs\nWith a seasonal COP of 3.5, a heat pump uses a third of the electricity.\n- Service the heat pump every two years.\n- Keep the outdoor unit free of leaves',
      heading_path: ['Heat pumps', 'Running costs'],
    };
    const a = composeExtractiveAnswer('How often should the heat pump get a service?', [chunk], { maxSentences: 1 });
    assert.equal(a.answer, 'Service the heat pump every two years. [1]');
  });

  it("counts the chunk's title and headings as what its sentences are about, at half weight", () => {
    // Two sections of one FAQ, the one retrieval ranked first first.
    const faq = [
      {
        title: 'Heat pump FAQ',
        text: 'Maintenance\nService the unit every two years.\nKeep the outdoor unit free of leaves.',
        heading_path: ['Heat pumps', 'Maintenance'],
      },
      {
        title: 'Heat pump FAQ',
        text: 'Noise\nA modern heat pump runs at about 40 dB at three metres.',
        heading_path: ['Heat pumps', 'Noise'],
      },
    ];
    // "Service the unit every two years." says nothing of heat pumps itself: its title and headings do.
    const a = composeExtractiveAnswer('How often should a heat pump be serviced?', faq, { maxSentences: 1 });
    assert.equal(a.answer, 'Service the unit every two years. [1]');
    // A sentence that matches nothing of the question itself is never picked for its headings alone.
    assert.equal(composeExtractiveAnswer('heat pump noise', faq).answer.includes('leaves'), false);
  });

  it('never quotes Markdown links, HTML anchors or code: sentences come from the prose of a chunk only', () => {
    const question = 'How do I add a preHandler hook with fastify.addHook and a done callback?';
    // A chunk as ingest writes it now: clean prose, the code fenced.
    const clean = {
      text: "preHandler\nThe preHandler hook runs before the handler; call `done` when the hook has finished.\n```\nfastify.addHook('preHandler', (request, reply, done) => {\n  // some code\n  done()\n})\n```\nA preHandler hook can also be async, then it gets no done callback.",
      heading_path: ['Hooks', 'preHandler'],
    };
    // A chunk stored before issue 33: markup and code ran into its prose.
    const leaky = {
      text: '<a id="prehandler"></a>\npreHandler\nfastify.addHook(\'preHandler\', (request, reply, done) => { // some code done() })\nSee [`fastify.close()`](./Server.md#close) and [test/hooks-async.js](https://github.com/fastify/fastify/blob/main/test/hooks-async.js) for the preHandler hook with a done callback.',
      heading_path: ['Hooks', 'preHandler'],
    };
    for (const chunks of [[clean], [leaky], [leaky, clean]]) {
      const a = composeExtractiveAnswer(question, chunks, { maxSentences: 5 });
      assert.equal(a.grounded, true, JSON.stringify(chunks));
      for (const bad of ['=>', '](', '<a', '</', '```', '// some code', 'done() })', 'https://']) {
        assert.ok(!a.answer.includes(bad), `${bad} in: ${a.answer}`);
      }
    }
    // The old chunk's link reads as its text.
    assert.match(
      composeExtractiveAnswer(question, [leaky]).answer,
      /^See `fastify\.close\(\)` and test\/hooks-async\.js for the preHandler hook with a done callback\. \[1\]$/,
    );
    // Code alone answers nothing.
    const onlyCode = { text: "```\nfastify.addHook('preHandler', (request, reply, done) => {\n  done()\n})\n```" };
    assert.equal(composeExtractiveAnswer(question, [onlyCode]).grounded, false);
  });

  it('treats inline code as a word: never a sentence boundary, and it may start a sentence', () => {
    const chunk = { text: 'The hook runs first. `onRequest` runs before parsing, see `Reply. Send` for the reply object.' };
    const a = composeExtractiveAnswer('When does onRequest run before parsing?', [chunk], { maxSentences: 1 });
    assert.equal(a.answer, '`onRequest` runs before parsing, see `Reply. Send` for the reply object. [1]');
  });

  it('is deterministic and bounded in sentences', () => {
    const q = 'vacation days expire employees';
    const a = composeExtractiveAnswer(q, chunks, { maxSentences: 1 });
    assert.deepEqual(a, composeExtractiveAnswer(q, chunks, { maxSentences: 1 }));
    assert.equal(a.answer.match(/\[\d+\]/g)!.length, 1);
  });

  it('starts at a sentence boundary and never says a sentence twice (overlapping chunks)', () => {
    const full =
      'Hooks\nSome hooks are made for authentication, where the preParsing or preValidation hooks are exactly what an application needs.';
    // The next chunk of the section carries the end of the one before it, cut mid-sentence.
    const next =
      'authentication, where the preParsing or preValidation hooks are exactly what an application needs.\nThe preValidation hook runs after parsing for authentication checks.';
    const question = 'Which hooks suit authentication, preParsing or preValidation?';
    const a = composeExtractiveAnswer(question, [
      { text: next, heading_path: ['Hooks'] },
      { text: full, heading_path: ['Hooks'] },
    ]);
    assert.equal(a.grounded, true);
    const sentences = a.answer.split(/(?<=\])\s+/);
    for (const s of sentences) assert.match(s, /^[A-Z`]/, a.answer);
    assert.equal(new Set(sentences.map((s) => s.replace(/\s*\[\d+\]$/, ''))).size, sentences.length, a.answer);
    assert.ok(!/^authentication,/m.test(a.answer), a.answer);
    // Lower-case continuations ("and ...", a tail) are never quoted even without a heading path.
    const tail = composeExtractiveAnswer(question, [{ text: 'authentication, where preValidation hooks suit authentication.' }]);
    assert.equal(tail.grounded, false, tail.answer);
  });
});
