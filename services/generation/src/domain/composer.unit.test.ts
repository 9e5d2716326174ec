import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createFactChecker, type EvidencePassage } from '@kb/ai';
import {
  composeDeterministic,
  draftableSentences,
  gluedHeading,
  headingsApart,
  isWholeSentence,
  sectionsWithContent,
  type SectionInput,
} from './composer.js';

/**
 * The deterministic composer (issue 33 item 4): drafts an editor would keep. Whole sentences only,
 * each section on its own subject first, nothing twice, sentences in source order, and a section
 * with nothing on its subject left out.
 */

const passage = (text: string, content = 'c0', chunk = 0): EvidencePassage => ({
  content_id: content,
  version_id: `v-${content}`,
  chunk_id: `v-${content}:${chunk}`,
  text,
});

const section = (id: string, title: string, prompt: string, passages: EvidencePassage[], instructions?: string): SectionInput => ({
  section_id: id,
  spec: { title, ...(instructions && { instructions }) },
  query: [prompt, title, instructions].filter(Boolean).join(' '),
  passages,
});

const texts = (sections: { sentences: { text: string }[] }[]) => sections.map((s) => s.sentences.map((x) => x.text));

describe('whole sentences', () => {
  it('tells a whole sentence from a fragment, code or markup residue', () => {
    for (const whole of [
      'The `__proto__` key is dropped from parsed bodies.',
      'Hooks are registered with the `fastify.addHook` method.',
      'The onRequest hook runs first (before parsing).',
      '“Hooks” run in the order they were added.',
      '2024 brought ten new hooks to the lifecycle.',
      'Is a hook scoped to its plugin?',
    ])
      assert.ok(isWholeSentence(whole), whole);
    for (const fragment of [
      'validators work correctly with both sync and async hooks.', // lower-case start
      'can be called to: Prevent Fastify from running subsequent hooks.',
      'And the hook runs once per request.', // continuation
      'But this is not the case for async hooks.',
      'Which means the reply is sent twice.',
      'Or use the done callback instead.',
      'The hook can be called to:', // ends on a colon
      'You can register these hooks:',
      'The hook receives the request and the reply (and a done callback.', // unbalanced
      'The "onSend hook changes the payload.',
      '2) The second hook runs after parsing.', // list continuation
      '(b) The handler sends the reply.',
      '- The handler sends the reply.',
      'As shown by Smith et al.', // an abbreviation taken for an end
      'The hook runs, e.g.',
      'The list goes on...',
      "fastify.addHook('onRequest', async (request, reply) => { await check(request); }).", // code
      'const hooks = require("./hooks").',
      'See the [hooks page](./Hooks.md) for more.', // markup residue
      'Hooks are **fast** everywhere.',
      'Read <b>this</b> page first.',
      'Read more at https://fastify.dev/docs/latest/Reference/Hooks/ now.',
    ])
      assert.ok(!isWholeSentence(fragment), fragment);
  });

  it('reads only the prose of a passage: no code block, no fragment, markup removed from the text and kept in the quote', () => {
    const text = [
      'the previous chunk ends here with the tail of its last sentence.',
      '## Hooks',
      'a heading is not part of the sentence after it.',
      'Hooks are registered with the [addHook](./Hooks.md#addhook) method and run in order.',
      '```js',
      "fastify.addHook('onRequest', (request, reply, done) => {",
      '  done()',
      '})',
      'Hooks are not this line of the code block either.',
      '```',
      'Hooks run in the order they were added. A hook **can be called to:**',
      '- Prevent Fastify from running subsequent hooks.',
      'And the route handler is skipped.',
      'The onSend hook may change the payload.',
    ].join('\n');
    assert.deepEqual(draftableSentences(text), [
      {
        text: 'Hooks are registered with the addHook method and run in order.',
        quote: 'Hooks are registered with the [addHook](./Hooks.md#addhook) method and run in order.',
      },
      { text: 'Hooks run in the order they were added.', quote: 'Hooks run in the order they were added.' },
      { text: 'Prevent Fastify from running subsequent hooks.', quote: 'Prevent Fastify from running subsequent hooks.' },
      { text: 'The onSend hook may change the payload.', quote: 'The onSend hook may change the payload.' },
    ]);
  });

  it('takes a callout’s sign and label off its sentence, and ends a sentence before one that starts with inline code', () => {
    assert.deepEqual(
      draftableSentences(
        'ℹ️ Note: This hook is not called for wrapped plugins.\nProvide a `host` key in the options. `host` values can be strings.',
      ),
      [
        { text: 'This hook is not called for wrapped plugins.', quote: 'ℹ️ Note: This hook is not called for wrapped plugins.' },
        { text: 'Provide a `host` key in the options.', quote: 'Provide a `host` key in the options.' },
      ],
    );
  });

  it('never drafts a fragment, code, markup, a pointer to what the draft lacks or a question, whatever it matches', () => {
    const p = passage(
      [
        'hooks run for every request and every reply in the lifecycle.',
        'Hooks can be called to:',
        'But hooks run for every request in the lifecycle.',
        'Which hooks run for every request depends on the lifecycle.',
        'Hooks run (for every request in the lifecycle.',
        '```',
        'Hooks run for every request in the lifecycle.',
        '```',
        '`hooks.run(request)`; // hooks run for every request in the lifecycle.',
        'Hooks run for every **request** in the [lifecycle](./Lifecycle.md).',
        'Below is a table of the hooks that run for every request in the lifecycle.',
        'Do hooks run for every request in the lifecycle?',
      ].join('\n'),
    );
    const [drafted] = composeDeterministic([section('s1', 'Hooks', 'request lifecycle hooks', [p])], {}, { max_words: 400 });
    assert.deepEqual(texts([drafted!]), [['Hooks run for every request in the lifecycle.']]);
    assert.equal(drafted!.sentences[0]!.quote, 'Hooks run for every **request** in the [lifecycle](./Lifecycle.md).');
    for (const s of drafted!.sentences) assert.ok(isWholeSentence(s.text), s.text);
  });
});

describe('which sentence goes where', () => {
  const prompt = 'How do Fastify hooks work?';

  it('gives a sentence on a later section’s title to that section, not to the first the prompt matches', () => {
    const passages = [
      passage(
        'Fastify hooks let you run your own code at set points of the work. ' +
          'Application hooks such as onReady and onClose run when the application starts or stops.',
        'hooks',
      ),
      passage('Request hooks such as onRequest run for every request in its lifecycle.', 'lifecycle'),
    ];
    const sections = composeDeterministic(
      [
        section('s1', 'What hooks are', prompt, passages),
        section('s2', 'Request lifecycle hooks', prompt, passages),
        section('s3', 'Application hooks', prompt, passages),
      ],
      {},
      { max_words: 600 },
    );
    assert.deepEqual(texts(sections), [
      ['Fastify hooks let you run your own code at set points of the work.'],
      ['Request hooks such as onRequest run for every request in its lifecycle.'],
      ['Application hooks such as onReady and onClose run when the application starts or stops.'],
    ]);
  });

  it('draws on the section’s own title and instructions first, the prompt’s matches only fill in after', () => {
    const passages = [
      passage('Fastify hooks work by running your code at fixed points of the request and reply.', 'a'),
      passage('The onClose hook runs when the server shuts down.', 'b'),
    ];
    // Room for one sentence: the one on the section's instructions wins over the better prompt match.
    const [drafted] = composeDeterministic(
      [section('s1', 'Shutting down', prompt, passages, 'What runs when the server shuts down')],
      {},
      { max_words: 15 },
    );
    assert.deepEqual(texts([drafted!]), [['The onClose hook runs when the server shuts down.']]);
  });

  it('borrows the passage another section retrieved for a sentence on its own subject, and cites it', () => {
    const shared = passage('Fastify hooks work at every step. Application hooks run when the application starts.', 'x');
    const sections = composeDeterministic(
      [section('s1', 'What hooks are', prompt, [shared]), section('s2', 'Application hooks', prompt, [])],
      {},
      { max_words: 600 },
    );
    assert.deepEqual(texts(sections), [['Fastify hooks work at every step.'], ['Application hooks run when the application starts.']]);
    const borrowed = sections[1]!;
    assert.equal(borrowed.passages[borrowed.sentences[0]!.passage]!.chunk_id, shared.chunk_id);
  });
});

describe('nothing twice, in source order, nothing empty', () => {
  it('never drafts a sentence twice across sections, nor a near-duplicate (content-stem Jaccard >= 0.8)', () => {
    // Overlapping chunks repeat a sentence; another document says the same in other words.
    const passages = [
      passage('Hooks run before the route handler is called. Hooks can stop the request early.', 'd1', 0),
      passage('Hooks run before the route handler is called. Hooks are registered per plugin.', 'd1', 1),
      passage('Hooks always run before the route handler is called!', 'd2', 0),
    ];
    const sections = composeDeterministic(
      [
        section('s1', 'Hooks', 'route handler hooks', passages),
        section('s2', 'Handler', 'route handler hooks', passages),
        section('s3', 'Route', 'route handler hooks', passages),
      ],
      {},
      { max_words: 900 },
    );
    const all = sections.flatMap((s) => s.sentences.map((x) => x.text));
    assert.equal(new Set(all).size, all.length);
    assert.equal(all.filter((t) => /before the route handler is called/.test(t)).length, 1, JSON.stringify(all));
  });

  it('reads a section in source order: documents by retrieval rank, a document’s chunks and sentences in their order', () => {
    const passages = [
      passage('Hooks run third in the lifecycle. Hooks run fourth in the lifecycle.', 'd1', 3),
      passage('Hooks run first in the lifecycle. Hooks run second in the lifecycle.', 'd1', 1),
      passage('Hooks run elsewhere in the lifecycle of other servers.', 'd2', 0),
    ];
    const [drafted] = composeDeterministic([section('s1', 'Hooks', 'hooks lifecycle', passages)], {}, { max_words: 400 });
    assert.deepEqual(texts([drafted!]), [
      [
        'Hooks run first in the lifecycle.',
        'Hooks run second in the lifecycle.',
        'Hooks run third in the lifecycle.',
        'Hooks run fourth in the lifecycle.',
        'Hooks run elsewhere in the lifecycle of other servers.',
      ],
    ]);
    // Each sentence cites its passage and quotes its source sentence verbatim.
    for (const s of drafted!.sentences) assert.ok(drafted!.passages[s.passage]!.text.includes(s.quote));
  });

  it('favours the top-ranked passages: a weak match far down the list is not drafted', () => {
    const passages = [
      passage('Vitamin D deficiency raises the risk of bone fractures in older adults.', 'top'),
      passage('Calcium intake matters.', 'b'),
      passage('Older adults walk less.', 'c'),
      passage('Bone density falls with age in older adults.', 'd'),
    ];
    const [drafted] = composeDeterministic(
      [section('s1', 'Vitamin D deficiency and fractures in older adults', '', passages)],
      {},
      { max_words: 400 },
    );
    assert.deepEqual(texts([drafted!]), [['Vitamin D deficiency raises the risk of bone fractures in older adults.']]);
  });

  it('comes back empty for a section with nothing on its subject, which the draft then leaves out', () => {
    const passages = [passage('Hooks run for every request in the lifecycle.')];
    const sections = composeDeterministic(
      [section('s1', 'Hooks', 'request lifecycle hooks', passages), section('s2', 'Pricing and licences', '', passages)],
      {},
      { max_words: 400 },
    );
    assert.deepEqual(texts(sections), [['Hooks run for every request in the lifecycle.'], []]);
    assert.deepEqual(
      sectionsWithContent(sections).map((s) => s.section_id),
      ['s1'],
    );
  });

  it('keeps the brand kit: banned terms, preferred terms, the word budget, heading case', () => {
    const passages = [
      passage(
        'Solar panels convert 22 percent of sunlight into power. Cheap solar panels lose power fast in sunlight. ' +
          'Solar panels keep 80 percent of their power in sunlight after 25 years.',
      ),
    ];
    const [drafted] = composeDeterministic(
      [section('s1', 'solar panel power', 'solar panels sunlight power', passages)],
      {
        banned_terms: ['cheap'],
        preferred_terms: [{ term: 'PV modules', instead_of: ['solar panels'] }],
        formatting: { heading_case: 'title' },
      },
      { max_words: 12 },
    );
    assert.equal(drafted!.title, 'Solar Panel Power');
    assert.deepEqual(texts([drafted!]), [['PV modules convert 22 percent of sunlight into power.']]);
    assert.equal(drafted!.sentences[0]!.quote, 'Solar panels convert 22 percent of sunlight into power.');
  });
});

describe('headings: never in a sentence or a quote, never sending a sentence off its subject', () => {
  // The repository's sample documents as the knowledge base chunks them (test/fixtures/formats).
  const prompt = 'Looking after a home solar installation';
  const titles = ['Keeping the panels clean', 'Warranty', 'Home batteries'];
  const slides = [
    passage('Battery Storage\nHome batteries store surplus solar energy for the evening.', 'pptx', 0),
    passage('Sizing\nA typical home needs ten kilowatt hours of storage.', 'pptx', 1),
    passage('Safety\nInstall batteries in a ventilated room away from heat sources.', 'pptx', 2),
  ];
  // PDF text has no heading structure: a page's heading runs into its first sentence.
  const pdf = [
    passage(
      'Solar Panel Maintenance Guide Clean the panels every three months with soft water. Inspect the inverter display for error codes monthly.',
      'pdf',
      0,
    ),
    passage(
      'Warranty Terms The panels carry a twenty five year performance warranty. Claims need the serial number printed on the frame.\nComponent | Warranty years\nPanels | 25',
      'pdf',
      1,
    ),
  ];

  it('takes a heading glued in front of a sentence (PDF text) off the sentence and its quote, and reads names as names', () => {
    assert.deepEqual(draftableSentences(pdf[0]!.text), [
      { text: 'Clean the panels every three months with soft water.', quote: 'Clean the panels every three months with soft water.' },
      { text: 'Inspect the inverter display for error codes monthly.', quote: 'Inspect the inverter display for error codes monthly.' },
    ]);
    assert.deepEqual(
      draftableSentences('RESULTS We found no effect. METHODS AND RESULTS An online survey was run.').map((s) => s.quote),
      ['We found no effect.', 'An online survey was run.'],
    );
    // A sentence that starts with a name keeps it.
    for (const sentence of [
      'New Zealand has many wind farms.',
      'Vitamin A deficiency causes night blindness.',
      'The World Health Organization recommends the vaccine.',
      'Pink Floyd The Wall was released in 1979.',
      'In New York the rules differ.',
      'HIV Type 1 infects cells.',
      'Protein Kinase A phosphorylates the substrate.',
    ])
      assert.equal(gluedHeading(sentence), 0, sentence);

    const sections = composeDeterministic(
      titles.map((title, i) => section(`s${i + 1}`, title, prompt, pdf)),
      {},
      { max_words: 600 },
    );
    assert.deepEqual(texts(sections), [
      ['Clean the panels every three months with soft water.'],
      // The sentence after the glued heading stands under it too: on the warranty.
      ['The panels carry a twenty five year performance warranty.', 'Claims need the serial number printed on the frame.'],
      [],
    ]);
    for (const s of sections)
      for (const x of s.sentences) {
        assert.ok(!/Guide|Terms/.test(x.text) && !/Guide|Terms/.test(x.quote), x.quote);
        assert.ok(
          pdf.some((p) => p.text.includes(x.quote)),
          x.quote,
        );
      }
  });

  it('places a sentence that says no word of a section’s title or instructions there only when it covers the prompt well', () => {
    const sections = composeDeterministic(
      [section('s1', 'Keeping the panels clean', prompt, [...pdf, ...slides]), section('s2', 'Warranty', prompt, [...pdf, ...slides])],
      {},
      { max_words: 600 },
    );
    // "A typical home needs ..." says one word of the prompt ("home") and nothing of either section:
    // it goes nowhere, least of all under "Warranty" (nor do the batteries).
    assert.deepEqual(texts(sections), [
      ['Clean the panels every three months with soft water.'],
      ['The panels carry a twenty five year performance warranty.', 'Claims need the serial number printed on the frame.'],
    ]);
    // With a section on them, the batteries' sentences go there, and only there.
    const three = composeDeterministic(
      titles.map((title, i) => section(`s${i + 1}`, title, prompt, i === 2 ? slides : [...pdf, ...slides])),
      {},
      { max_words: 600 },
    );
    assert.deepEqual(texts(three)[2], [
      'Home batteries store surplus solar energy for the evening.',
      'Install batteries in a ventilated room away from heat sources.',
    ]);
    assert.ok(!texts(three)[1]!.some((t) => /home|batter/i.test(t)), JSON.stringify(texts(three)[1]));
    // A sentence on the prompt as a whole may fill in a section whose title it does not say.
    const general = passage('A home solar installation needs little looking after.', 'general');
    const [overview] = composeDeterministic([section('s1', 'Overview', prompt, [general, ...slides])], {}, { max_words: 600 });
    assert.deepEqual(texts([overview!]), [['A home solar installation needs little looking after.']]);
  });

  it('quotes the source sentence without the heading line above it, and so does the fact checker from the cited passage', async () => {
    const sections = composeDeterministic(
      titles.map((title, i) => section(`s${i + 1}`, title, prompt, [...slides, ...pdf])),
      {},
      { max_words: 600 },
    );
    const checker = createFactChecker();
    const drafted = sections.flatMap((s) => s.sentences.map((x) => ({ ...x, cited: s.passages[x.passage]! })));
    assert.ok(drafted.some((x) => x.quote === 'Home batteries store surplus solar energy for the evening.'));
    for (const x of drafted) {
      assert.equal(x.quote, x.text);
      assert.ok(!x.quote.includes('\n') && !/^(?:Battery Storage|Sizing|Safety|Warranty Terms|Solar Panel)/.test(x.quote), x.quote);
      // The cited passage is the chunk with its headings set apart by white space only.
      const source = [...slides, ...pdf].find((p) => p.chunk_id === x.cited.chunk_id)!;
      assert.equal(x.cited.text.replace(/\s+/g, ' '), source.text.replace(/\s+/g, ' '));
      const [checked] = await checker.check({ text: `${x.text} [1]`, cited: [x.cited] });
      assert.equal(checked!.verdict, 'supported', x.text);
      assert.equal(checked!.support[0]!.quote, x.quote);
      assert.ok(source.text.includes(checked!.support[0]!.quote));
    }
    assert.equal(
      headingsApart('Sizing\nA typical home needs ten kilowatt hours of storage.\nIt fits in a cupboard.'),
      'Sizing\n\nA typical home needs ten kilowatt hours of storage.\nIt fits in a cupboard.',
    );
  });
});

describe('a generic section title', () => {
  it('drafts the sentences that answer the prompt under a single "Overview" section, whose title no sentence says', () => {
    const out = composeDeterministic(
      [
        section('s1', 'Overview', 'How long is the solar panel warranty?', [
          passage(
            'Warranty Terms\nThe panels carry a twenty five year performance warranty. Claims need the serial number printed on the frame.',
          ),
        ]),
      ],
      {},
      { max_words: 600 },
    );
    assert.ok(texts(out)[0]!.includes('The panels carry a twenty five year performance warranty.'), JSON.stringify(texts(out)));
  });
});
