import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startTestSystem, type TestSystem } from './harness.js';
import { addSource, waitForRun, waitIndexed } from './generation-helpers.js';
import { flawsOf, onSubject, wordCount, type ReadSentence } from '../bench/draft-reading.js';

/**
 * Drafts an editor keeps (issue 44), end to end over sample documents (four
 * pages of the Fastify documentation, uploaded as Markdown): an article, an FAQ
 * and a summary, each read as bench:generation reads drafts (no fragment,
 * dangling reference, pointer or author's person; on its section's subject;
 * length met or flagged; what is not answered named), and a second run on the
 * same subject adds a revision to the same piece. The drafts are written to
 * test/artifacts/generation-e2e/ to be read.
 */

const DOCS = join(dirname(createRequire(import.meta.url).resolve('fastify/package.json')), 'docs/Reference');
const ARTIFACTS = join(import.meta.dirname, '../artifacts/generation-e2e');

let t: TestSystem;

interface Spec {
  title: string;
  instructions?: string;
}
interface Piece {
  name: string;
  kind: 'article' | 'qa' | 'summary';
  subject: string;
  sections: Spec[];
  target_length: { min_words: number; max_words: number };
}

const ARTICLE: Piece = {
  name: 'Hooks how-to',
  kind: 'article',
  subject: 'Adding hooks to a Fastify server',
  sections: [
    { title: 'Registering a hook', instructions: 'addHook with an async function or a done callback' },
    { title: 'Replying from a hook', instructions: 'Stopping the request early with reply.send' },
    // Nothing in the documents is about costs: named in the warnings, never a failed run.
    { title: 'Running costs' },
  ],
  target_length: { min_words: 150, max_words: 600 },
};
const FAQ: Piece = {
  name: 'Plugins FAQ',
  kind: 'qa',
  subject: 'Fastify plugins',
  sections: [
    { title: 'What is a Fastify plugin?' },
    { title: 'How are plugins registered?', instructions: 'The register method and its options' },
    { title: 'What does a Fastify support contract cost per year?' },
  ],
  target_length: { min_words: 60, max_words: 500 },
};
const SUMMARY: Piece = {
  name: 'Logging summary',
  kind: 'summary',
  subject: 'Logging in Fastify',
  sections: [{ title: 'Summary', instructions: 'The logger option and log levels' }],
  // More than the documents hold on the subject: the draft must say it is short.
  target_length: { min_words: 2000, max_words: 3000 },
};

async function contentType(piece: Piece): Promise<string> {
  const res = await t.api('POST', '/org/content-types', {
    body: { name: piece.name, config: { kind: piece.kind, sections: piece.sections, target_length: piece.target_length } },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.content_type_id;
}

async function run(contentTypeId: string, instructions: string): Promise<any> {
  const res = await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId, instructions } });
  assert.equal(res.status, 202, res.text);
  const done = await waitForRun(t, res.body.run_id, 120_000);
  assert.equal(done.state, 'completed', done.reason);
  const draft = await t.api('GET', `/org/generation/drafts/${done.draft_id}`);
  assert.equal(draft.status, 200, draft.text);
  return draft.body;
}

/** The headings each cited chunk sits under, by chunk id (what the benchmark reads as a sentence's context). */
async function headingsOf(draft: any): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of draft.source_content_ids) {
    for (let offset = 0; ; offset += 100) {
      const res = await t.api('GET', `/org/kb/content/${id}/chunks?limit=100&offset=${offset}`);
      assert.equal(res.status, 200, res.text);
      for (const c of res.body.chunks) out.set(`${res.body.version_id}:${c.chunk_index}`, c.heading_path.join(' '));
      if (offset + 100 >= res.body.total_count) break;
    }
  }
  return out;
}

/** Reads a draft as the benchmark does; writes it to the artifacts; returns what it found. */
async function read(piece: Piece, draft: any) {
  const headings = await headingsOf(draft);
  const md = [`# ${draft.title}`, '', `> ${draft.description}`, ''];
  let sentences = 0;
  const flawed: string[] = [];
  let on = 0;
  for (const section of draft.sections) {
    const spec = piece.sections.find((s) => s.title === section.title)!;
    const others = piece.sections.filter((s) => s !== spec);
    const list: ReadSentence[] = section.sentences.map((x: any) => ({
      text: x.text,
      paragraph: x.paragraph,
      chunk: x.citations[0]?.chunk_id,
      context: headings.get(x.citations[0]?.chunk_id) ?? '',
    }));
    const flaws = flawsOf(list);
    md.push(`## ${section.title}`, '');
    list.forEach((x, i) => {
      if (x.text === 'The knowledge base does not answer this question.') return;
      sentences++;
      if (flaws[i]!.length) flawed.push(`${x.text} [${flaws[i]!.join(', ')}]`);
      if (onSubject(x, spec, others, piece.subject)) on++;
    });
    const paragraphs = new Map<number, string[]>();
    for (const x of section.sentences) paragraphs.set(x.paragraph ?? 0, [...(paragraphs.get(x.paragraph ?? 0) ?? []), x.text]);
    for (const p of paragraphs.values()) md.push(p.join(' '), '');
  }
  md.push('---', '', `Verification: ${draft.verification}`, ...(draft.warnings ?? []).map((w: string) => `- ${w}`), '');
  writeFileSync(join(ARTIFACTS, `${piece.name.toLowerCase().replace(/\W+/g, '-')}.md`), md.join('\n'));
  const words = wordCount(draft.sections.flatMap((s: any) => s.sentences.map((x: any) => x.text)));
  return { sentences, flawed, on, words };
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await startTestSystem();
  for (const file of ['Hooks', 'Plugins', 'Logging', 'Encapsulation']) {
    const doc = await addSource(t, file.replace('-', ' '), readFileSync(join(DOCS, `${file}.md`), 'utf8'));
    await waitIndexed(t, file.toLowerCase(), doc.id);
  }
}, 180_000);
afterAll(() => t?.stop());

describe('drafts an editor keeps', () => {
  let articleType: string;
  let article: any;

  it('an article: sections built from the passages under their headings, the section the documents do not cover named', async () => {
    articleType = await contentType(ARTICLE);
    article = await run(articleType, ARTICLE.subject);
    const r = await read(ARTICLE, article);
    assert.deepEqual(r.flawed, []);
    assert.ok(r.on >= 0.9 * r.sentences, `${r.on} of ${r.sentences} on their section's subject`);
    assert.deepEqual(
      article.sections.map((s: any) => s.title),
      ['Registering a hook', 'Replying from a hook'],
    );
    assert.ok(
      article.warnings.some((w: string) => w.includes('“Running costs”')),
      JSON.stringify(article.warnings),
    );
    assert.equal(article.verification, 'needs_review');
    assert.ok(r.words <= ARTICLE.target_length.max_words);
    // Paragraphs of at most four sentences, and the description a sentence that stands on its own.
    for (const s of article.sections) {
      const sizes = new Map<number, number>();
      for (const x of s.sentences) sizes.set(x.paragraph ?? 0, (sizes.get(x.paragraph ?? 0) ?? 0) + 1);
      assert.ok(
        [...sizes.values()].every((n) => n <= 4),
        JSON.stringify([...sizes]),
      );
    }
    assert.ok(article.sections.some((s: any) => s.sentences.some((x: any) => x.text === article.description)));
    assert.doesNotMatch(article.description, /^(?:This|It|However|Also|They)\b/);
  });

  it('an FAQ: each question answered by its own passage, the one the documents do not answer said so plainly', async () => {
    const faq = await run(await contentType(FAQ), FAQ.subject);
    const r = await read(FAQ, faq);
    assert.deepEqual(r.flawed, []);
    assert.ok(r.on >= 0.9 * r.sentences, `${r.on} of ${r.sentences} on their question`);
    assert.deepEqual(
      faq.sections.map((s: any) => s.title),
      FAQ.sections.map((s) => s.title),
    );
    const unanswered = faq.sections[2];
    assert.deepEqual(
      unanswered.sentences.map((x: any) => x.text),
      ['The knowledge base does not answer this question.'],
    );
    assert.ok(faq.sections[0].sentences.length > 0 && faq.sections[1].sentences.length > 0);
    assert.ok(faq.warnings.some((w: string) => w.includes('“What does a Fastify support contract cost per year?”')));
    assert.equal(faq.verification, 'needs_review');
  });

  it('a summary: as long as the documents allow, and says so when that is short of the minimum', async () => {
    const summary = await run(await contentType(SUMMARY), SUMMARY.subject);
    const r = await read(SUMMARY, summary);
    assert.deepEqual(r.flawed, []);
    assert.ok(r.on >= 0.9 * r.sentences, `${r.on} of ${r.sentences} on the subject`);
    assert.ok(r.words < SUMMARY.target_length.min_words);
    assert.ok(
      summary.warnings.some((w: string) => w.includes(`short of the content type's minimum of ${SUMMARY.target_length.min_words}`)),
      JSON.stringify(summary.warnings),
    );
    assert.equal(summary.verification, 'needs_review');
  });

  it('a second run for the same content type and subject adds a revision to the same piece', async () => {
    const again = await run(articleType, ARTICLE.subject);
    assert.equal(again.draft_id, article.draft_id);
    assert.equal(again.revision, article.revision + 1);
    assert.equal(again.change.kind, 'regenerated');
    const drafts = await t.api('GET', '/org/generation/drafts?limit=100');
    assert.equal(drafts.body.filter((d: any) => d.content_type_id === articleType).length, 1);
    const history = await t.api('GET', `/org/generation/drafts/${article.draft_id}/history`);
    if (history.status === 200) assert.deepEqual(history.body.items.map((i: any) => i.revision).slice(-2), [1, 2]);
    // Another subject is another piece.
    const other = await run(articleType, 'Hooks and plugins in Fastify');
    assert.notEqual(other.draft_id, article.draft_id);
  });
});
