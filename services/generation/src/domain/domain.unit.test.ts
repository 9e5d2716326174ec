import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { DraftRevision } from '@kb/events';
import type { Stored } from '@kb/eventsourcing';
import { AppError } from '@kb/platform';
import { applyPreferredTerms, composeDeterministic, headingCase, sourceSentences } from './composer.js';
import { draftDecider, runDecider } from './aggregates.js';
import { parseContentTypeConfig, parseGuidelines } from './settings.js';
import { renderBody, totalsOf } from './draft.js';

const validation = (fn: () => unknown, field: RegExp) =>
  assert.throws(fn, (err: unknown) => err instanceof AppError && err.kind === 'validation' && field.test(err.message));

describe('closed key sets', () => {
  it('guidelines: an unknown key, top level or nested, is rejected by name; known keys are normalised', () => {
    validation(() => parseGuidelines({ colour: 'red' }), /guidelines\.colour/);
    validation(() => parseGuidelines({ formatting: { font: 'x' } }), /guidelines\.formatting\.font/);
    validation(() => parseGuidelines({ preferred_terms: [{ term: 'a', instead_of: [], x: 1 }] }), /preferred_terms\[0\]\.x/);
    validation(() => parseGuidelines({ banned_terms: [''] }), /banned_terms\[0\]/);
    assert.deepEqual(parseGuidelines({ voice: ' plain ', banned_terms: [' cheap '] }), { voice: 'plain', banned_terms: ['cheap'] });
  });
  it('content type config: defaults, unknown keys and out-of-range values', () => {
    assert.equal(parseContentTypeConfig(undefined).unsupported_sentences, 'remove');
    validation(() => parseContentTypeConfig({ layout: 'grid' }), /config\.layout/);
    validation(() => parseContentTypeConfig({ sections: [{ title: 'a', words: 1 }] }), /config\.sections\[0\]\.words/);
    validation(() => parseContentTypeConfig({ target_length: { min_words: 9, max_words: 10, pages: 1 } }), /pages/);
    validation(() => parseContentTypeConfig({ target_length: { min_words: 900, max_words: 100 } }), /target_length/);
    validation(() => parseContentTypeConfig({ publish_destination_ids: ['nope'] }), /publish_destination_ids\[0\]/);
  });
});

const passage = (text: string, n = 0) => ({ content_id: `c${n}`, version_id: `v${n}`, chunk_id: `v${n}:0`, text });

describe('deterministic composer', () => {
  const passages = [
    passage('# Panels\n\nSolar panels convert 22 percent of sunlight. Cheap panels degrade fast. Panels last 25 years under warranty.', 0),
    passage('Batteries store solar power for the evening.', 1),
  ];
  it('uses only source sentences, never one with a banned term, cites each, and keeps a heading out of the sentence', () => {
    const [section] = composeDeterministic(
      [{ section_id: 's1', spec: { title: 'Panels' }, query: 'solar panels sunlight warranty', passages }],
      { banned_terms: ['cheap'] },
      { max_words: 200 },
    );
    const texts = section!.sentences.map((s) => s.text);
    assert.ok(texts.includes('Solar panels convert 22 percent of sunlight.'));
    assert.ok(!texts.some((t) => /cheap/i.test(t)));
    assert.ok(!texts.some((t) => t.startsWith('Panels Solar')));
    for (const s of section!.sentences) assert.ok(passages[s.passage]!.text.includes(s.quote));
  });
  it('stays within the word budget and never repeats a sentence across sections', () => {
    const sections = composeDeterministic(
      [
        { section_id: 's1', spec: { title: 'A' }, query: 'solar panels', passages },
        { section_id: 's2', spec: { title: 'B' }, query: 'solar panels', passages },
      ],
      {},
      { max_words: 30 },
    );
    const all = sections.flatMap((s) => s.sentences.map((x) => x.text));
    assert.equal(new Set(all).size, all.length);
    for (const s of sections) assert.ok(s.sentences.reduce((n, x) => n + x.text.split(' ').length, 0) <= 15 + 10);
  });
  it('gives a sentence to the section on its subject, not to the first section the prompt matches', () => {
    const guide = [
      passage('Solar Panel Maintenance Guide\nMaintain the panels by cleaning them every three months with soft water.', 0),
      passage('Warranty Terms\nThe panels carry a twenty five year performance warranty.', 1),
    ];
    const prompt = 'How do I maintain solar panels and what warranty do they carry?';
    const sections = composeDeterministic(
      [
        { section_id: 's1', spec: { title: 'How it works' }, query: `${prompt} How it works`, passages: guide },
        { section_id: 's2', spec: { title: 'Warranty' }, query: `${prompt} Warranty`, passages: guide },
      ],
      {},
      { max_words: 200 },
    );
    assert.deepEqual(
      sections.map((s) => s.sentences.map((x) => x.text)),
      [
        ['Maintain the panels by cleaning them every three months with soft water.'],
        ['The panels carry a twenty five year performance warranty.'],
      ],
    );
  });
  it('preferred terms, heading case and source sentences', () => {
    assert.equal(
      applyPreferredTerms('Solar panels and solar panels.', { preferred_terms: [{ term: 'PV modules', instead_of: ['solar panels'] }] }),
      'PV modules and PV modules.',
    );
    assert.equal(headingCase('the cost of solar power', { formatting: { heading_case: 'title' } }), 'The Cost of Solar Power');
    // PDF text comes line by line: a wrapped sentence is one sentence, the heading above it none.
    assert.deepEqual(
      sourceSentences(
        'Maintenance\nClean the panels every three months with soft water and inspect the\ninverter display monthly. Replace seals,\nfilters and gaskets.\nModel | Rated power',
      ),
      [
        'Clean the panels every three months with soft water and inspect the inverter display monthly.',
        'Replace seals, filters and gaskets.',
      ],
    );
    assert.deepEqual(sourceSentences('# Title\n- One item here.\nA sentence. Another one!'), [
      'One item here.',
      'A sentence.',
      'Another one!',
    ]);
  });
});

const stored = (type: string, data: Record<string, unknown>, version = 1): Stored =>
  ({
    id: `e${version}`,
    type,
    schema: 1,
    data,
    metadata: { org_id: 'o' },
    stream_id: 's',
    version,
    position: version,
    recorded_at: '',
  }) as Stored;

describe('deciders', () => {
  it('a terminal run takes no more steps (a late worker changes nothing)', () => {
    const requested = { run_id: 'r', org_id: 'o', content_type_id: 'c', scope: { folder_ids: [], tags: [], category_ids: [] }, at: 't' };
    let state = runDecider.evolve(runDecider.initialState(), stored('generation_run.requested', requested));
    state = runDecider.evolve(state, stored('generation_run.completed', { run_id: 'r', org_id: 'o', draft_id: 'd', at: 't' }, 2));
    assert.deepEqual(runDecider.decide({ type: 'fail', reason: 'late', at: 't' }, state), []);
    assert.deepEqual(runDecider.decide({ type: 'progress', state: 'drafting', progress: 0.5, at: 't' }, state), []);
  });

  it('drift marks each cited version once, ignores a version the draft already cites, and records deletions', () => {
    const draft = {
      draft_id: 'd',
      org_id: 'o',
      revision: 1,
      stale_sources: [],
      sections: [
        {
          section_id: 's1',
          title: 'T',
          sentences: [
            { index: 0, text: 'x', verdict: 'supported', citations: [{ content_id: 'c', version_id: 'v1', chunk_id: 'v1:0', quote: 'x' }] },
          ],
        },
      ],
    } as unknown as DraftRevision;
    const state = draftDecider.evolve(draftDecider.initialState(), stored('draft.created', draft as unknown as Record<string, unknown>));
    assert.deepEqual(
      draftDecider.decide({ type: 'mark_stale', content_id: 'c', reason: 'new_version', new_version_id: 'v1', at: 't' }, state),
      [],
    );
    assert.deepEqual(draftDecider.decide({ type: 'mark_stale', content_id: 'other', reason: 'deleted', at: 't' }, state), []);
    const [event] = draftDecider.decide(
      { type: 'mark_stale', content_id: 'c', reason: 'new_version', new_version_id: 'v2', at: 't' },
      state,
    );
    assert.equal(event!.type, 'draft.sources_stale');
    const after = draftDecider.evolve(state, stored('draft.sources_stale', event!.data, 2));
    assert.deepEqual(
      draftDecider.decide({ type: 'mark_stale', content_id: 'c', reason: 'new_version', new_version_id: 'v3', at: 't' }, after),
      [],
    );
    const [deleted] = draftDecider.decide({ type: 'mark_stale', content_id: 'c', reason: 'deleted', at: 't' }, after);
    assert.equal((deleted!.data.stale_sources as unknown[]).length, 2);
  });
});

describe('draft rendering', () => {
  it('numbers citations by first use and totals the verdicts', () => {
    const c = (chunk: string) => ({ content_id: 'c', version_id: 'v', chunk_id: chunk, quote: 'q' });
    const sections = [
      {
        title: 'A',
        sentences: [
          { text: 'One.', verdict: 'supported' as const, citations: [c('v:1')] },
          { text: 'Two.', verdict: 'not_factual' as const, citations: [] },
        ],
      },
      { title: 'B', sentences: [{ text: 'Three.', verdict: 'unsupported' as const, citations: [c('v:2'), c('v:1')] }] },
    ];
    assert.equal(renderBody(sections, { format: 'markdown', citation_style: 'numeric' }), '## A\n\nOne. [1] Two.\n\n## B\n\nThree. [2][1]');
    assert.equal(
      renderBody(sections, { format: 'html', citation_style: 'none' }),
      '<h2>A</h2>\n<p>One. Two.</p>\n\n<h2>B</h2>\n<p>Three.</p>',
    );
    assert.deepEqual(totalsOf(sections), { sentences: 3, factual: 2, supported: 1, unsupported: 1 });
  });
});
