import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { EvidencePassage } from '@kb/ai';
import type { SectionInput } from '../domain/composer.js';
import { coverageOf, UNANSWERED } from './coverage.js';
import { describe as describePiece } from './description.js';
import { draftExtractive } from './extractive-drafter.js';
import { readPassage } from './passages.js';

const passage = (doc: number, chunk: number, text: string, heading_path: string[] = []): EvidencePassage & { heading_path: string[] } => {
  const id = `00000000-0000-4000-8000-00000000000${doc}`;
  return { content_id: id, version_id: id, chunk_id: `${id}:${chunk}`, text, title: `Doc ${doc}`, heading_path };
};

const heatPumps = passage(
  1,
  0,
  [
    'Heat pumps',
    'A heat pump moves heat from the outside air into the house. It uses electricity to run a compressor. This makes it three times as efficient as an electric heater.',
    'Installing a heat pump',
    'An installer mounts the outdoor unit on a concrete base. The unit needs half a metre of free space around it.',
  ].join('\n'),
  ['Heat pumps'],
);
const maintenance = passage(
  2,
  0,
  [
    'Servicing',
    'You should service the heat pump every two years. It keeps the warranty valid.',
    'A technician checks the refrigerant pressure during the heat pump service. The filters of the heat pump are cleaned at every service.',
    'See the service guide for more information.',
  ].join('\n'),
  ['Servicing'],
);
const all = [heatPumps, maintenance];

const section = (s: number, title: string, query: string, passages: EvidencePassage[] = all, instructions?: string): SectionInput => ({
  section_id: `s${s}`,
  spec: { title, ...(instructions && { instructions }) },
  query: [title, instructions, query].filter(Boolean).join(' '),
  passages,
});
const brief = (max_words = 200, kind: 'article' | 'qa' = 'article') => ({ kind, target_length: { min_words: 0, max_words } });
const texts = (s: { sentences: { text: string }[] }) => s.sentences.map((x) => x.text);

describe('readPassage', () => {
  it('reads paragraphs under their headings, and leaves out the overlap a later chunk carries', () => {
    const paragraphs = readPassage(heatPumps);
    assert.deepEqual(
      paragraphs.map((p) => p.heading),
      ['Heat pumps', 'Installing a heat pump'],
    );
    assert.equal(paragraphs[0]!.sentences.length, 3);
    const next = passage(1, 1, 'three times as efficient as an electric heater.\nThe outdoor unit is quiet at night.', ['Heat pumps']);
    assert.deepEqual(
      readPassage(next).flatMap((p) => p.sentences.map((x) => x.text)),
      ['The outdoor unit is quiet at night.'],
    );
  });
});

describe('draftExtractive', () => {
  it('builds each section from the paragraphs that answer its heading', () => {
    const [install, service] = draftExtractive(
      [section(1, 'Installing a heat pump', 'Heat pumps at home'), section(2, 'Servicing a heat pump', 'Heat pumps at home')],
      {},
      brief(),
    );
    assert.deepEqual(texts(install!), [
      'An installer mounts the outdoor unit on a concrete base.',
      'The unit needs half a metre of free space around it.',
    ]);
    assert.ok(
      texts(service!).includes('A technician checks the refrigerant pressure during the heat pump service.'),
      texts(service!).join(' '),
    );
    assert.ok(!texts(service!).some((t) => /installer/.test(t)));
  });

  it('drafts a sentence that refers back only after its antecedent; never the author’s person or a pointer', () => {
    const drafted = draftExtractive([section(1, 'Servicing a heat pump', 'heat pump service warranty')], {}, brief());
    const said = texts(drafted[0]!);
    // "You should service ..." is the author speaking to the reader: left out, and with it "It keeps the warranty valid."
    assert.ok(!said.some((t) => /^You |^It keeps|^See /.test(t)), said.join(' '));
    const [how] = draftExtractive([section(1, 'How a heat pump moves heat', 'heat pump electricity compressor')], {}, brief());
    const lines = texts(how!);
    const it = lines.indexOf('It uses electricity to run a compressor.');
    assert.ok(it > 0, lines.join(' '));
    assert.equal(lines[it - 1], 'A heat pump moves heat from the outside air into the house.');
    // With the brand kit asking for second person, the reader may be addressed.
    const friendly = draftExtractive(
      [section(1, 'Servicing a heat pump', 'heat pump service warranty')],
      { voice: 'second person' },
      brief(),
    );
    assert.ok(texts(friendly[0]!).includes('You should service the heat pump every two years.'));
  });

  it('answers each question with its own passage, never another question’s', () => {
    const [what, service, cost] = draftExtractive(
      [
        section(1, 'What does a heat pump do?', 'heat pumps'),
        section(2, 'How often is a heat pump serviced?', 'heat pumps'),
        section(3, 'What does the grid tariff cost?', 'heat pumps'),
      ],
      {},
      brief(300, 'qa'),
    );
    assert.ok(texts(what!).includes('A heat pump moves heat from the outside air into the house.'));
    assert.ok(!texts(what!).some((t) => /technician|filters/.test(t)), texts(what!).join(' '));
    assert.ok(texts(service!).some((t) => /technician|filters/.test(t)));
    // Nothing retrieved says "grid" or "tariff": the question is left unanswered, not given another's answer.
    assert.deepEqual(texts(cost!), []);
  });

  it('answers a generic heading ("Overview", "How it works") from the piece’s subject, and never fails on one', () => {
    const [overview] = draftExtractive([section(1, 'Overview', 'heat pumps')], {}, brief());
    assert.ok(overview!.sentences.length > 0);
    const [running] = draftExtractive([section(1, 'Running costs', 'heat pumps')], {}, brief());
    assert.deepEqual(texts(running!), [], 'no word of "costs" in the passages: nothing on that subject');
  });

  it('gives no less with instructions than with the title alone, and draws more up to a larger budget', () => {
    const words = (d: ReturnType<typeof draftExtractive>) => d.flatMap(texts).join(' ').split(/\s+/).length;
    const titled = draftExtractive([section(1, 'Servicing a heat pump', 'heat pumps')], {}, brief());
    const detailed = draftExtractive(
      [section(1, 'Servicing a heat pump', 'heat pumps', all, 'refrigerant pressure and filters')],
      {},
      brief(),
    );
    assert.ok(words(detailed) >= words(titled), `${words(detailed)} < ${words(titled)}`);
    const small = draftExtractive([section(1, 'Heat pumps', 'heat pump')], {}, brief(30));
    const large = draftExtractive([section(1, 'Heat pumps', 'heat pump')], {}, brief(300));
    assert.ok(words(large) > words(small));
  });

  it('keeps paragraphs to at most four sentences and cites each sentence’s own passage', () => {
    const long = passage(
      3,
      0,
      ['Heat pump facts', ...Array.from({ length: 9 }, (_, i) => `Heat pump fact number ${i + 1} concerns the heat pump compressor.`)].join(
        ' ',
      ),
      ['Heat pump facts'],
    );
    const [drafted] = draftExtractive([section(1, 'Heat pump compressor facts', 'heat pump', [long])], {}, brief(400));
    const sizes = new Map<number, number>();
    for (const x of drafted!.sentences) sizes.set(x.paragraph!, (sizes.get(x.paragraph!) ?? 0) + 1);
    assert.ok(drafted!.sentences.length >= 5);
    assert.ok(
      [...sizes.values()].every((n) => n <= 4),
      JSON.stringify([...sizes]),
    );
    for (const x of drafted!.sentences) assert.ok(drafted!.passages[x.passage]!.text.includes(x.quote));
  });
});

describe('coverageOf and describe', () => {
  const sentence = (text: string) => ({ text, verdict: 'supported' as const, citations: [] });
  it('names what the draft could not cover and says plainly under a question that it is not answered', () => {
    const verified = [
      { section_id: 's1', title: 'What is it?', sentences: [sentence('A heat pump moves heat.')] },
      { section_id: 's2', title: 'What does it cost?', sentences: [] },
    ];
    const qa = coverageOf(verified, { kind: 'qa', target_length: { min_words: 50, max_words: 200 } });
    assert.deepEqual(
      qa.sections[1]!.sentences.map((x) => x.text),
      [UNANSWERED],
    );
    assert.equal(qa.warnings.length, 2);
    assert.match(qa.warnings[0]!, /does not answer the question “What does it cost\?”/);
    assert.match(qa.warnings[1]!, /5 words, short of the content type's minimum of 50/);
    const article = coverageOf(verified, { kind: 'article', target_length: { min_words: 0, max_words: 200 } });
    assert.equal(article.sections.length, 1);
    assert.deepEqual(article.warnings, ['The knowledge base holds nothing on the section “What does it cost?”; it is left out.']);
  });

  it('describes the piece by a sentence that stands on its own and says what the piece is about', () => {
    const d = describePiece('Heat pumps at home', [
      sentence('This makes it three times as efficient.'),
      sentence('The unit needs half a metre of free space around it.'),
      sentence('A heat pump moves heat from the outside air into the home.'),
      sentence('A technician checks the heat pump every two years.'),
    ]);
    assert.equal(d, 'A heat pump moves heat from the outside air into the home.');
  });
});
