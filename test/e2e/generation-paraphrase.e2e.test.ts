import { afterAll, beforeAll, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeOrSkip } from '@kb/testing';
import { missingModelFiles } from '@kb/ai/local';
import { startTestSystem, type TestSystem } from './harness.js';
import { addSource, waitForRun, waitIndexed } from './generation-helpers.js';

/**
 * Drafts written by a chat model keep their faithful paraphrases. The "model"
 * (a local fake speaking the OpenAI wire format) writes SciFact train claims,
 * which people wrote as paraphrases of findings in abstracts, each citing the
 * abstract the run retrieved for it: claims the abstract supports should stay
 * in the draft as supported, citing it; claims it contradicts should be
 * flagged, never kept as supported. The abstracts and some others go into the
 * knowledge base through the API; the fact checker runs with its embedding
 * model. SciFact is non-commercial and never copied into the repository: the
 * test reads it from ../shared/data (SCIFACT_DIR) and says it skipped without
 * it or without the model.
 */

const root = join(import.meta.dirname, '../..');
const scifactDir = process.env.SCIFACT_DIR ?? join(root, '../shared/data/ir/scifact-train');
const modelDir = join(root, '.models/bge-small-en-v1.5-q');
const skip = !existsSync(join(scifactDir, 'claims_train.jsonl'))
  ? `skipped: the SciFact train split is not in ${scifactDir} (SCIFACT_DIR)`
  : (missingModelFiles(modelDir) ?? false);

const SUPPORTING = 20;
const CONTRADICTING = 15;
const OTHERS = 40;

interface Claim {
  id: number;
  claim: string;
  evidence: Record<string, { label: 'SUPPORT' | 'CONTRADICT' }[]>;
}
interface Doc {
  _id: string;
  title: string;
  text: string;
}
const jsonl = <T>(file: string): T[] =>
  readFileSync(join(scifactDir, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describeOrSkip('drafts written by a chat model keep their faithful paraphrases (SciFact claims)', skip, () => {
  let t: TestSystem;
  let server: Server;
  let contentTypeId: string;
  /** Claim text → its one gold abstract, label and content id once ingested. */
  const picked = new Map<string, { doc: Doc; label: 'SUPPORT' | 'CONTRADICT'; contentId?: string }>();

  beforeAll(async () => {
    const docs = new Map(jsonl<Doc>('corpus.jsonl').map((d) => [d._id, d]));
    // Claims with one gold abstract (one label), taken in id order: the first of each label.
    const single = jsonl<Claim>('claims_train.jsonl').filter((c) => {
      const ids = Object.keys(c.evidence);
      return ids.length === 1 && docs.has(ids[0]!) && new Set(c.evidence[ids[0]!]!.map((e) => e.label)).size === 1;
    });
    const labelOf = (c: Claim) => Object.values(c.evidence)[0]![0]!.label;
    const usedDocs = new Set<string>();
    for (const label of ['SUPPORT', 'CONTRADICT'] as const) {
      let n = 0;
      for (const c of single) {
        const doc = docs.get(Object.keys(c.evidence)[0]!)!;
        if (labelOf(c) !== label || usedDocs.has(doc._id)) continue;
        usedDocs.add(doc._id);
        picked.set(c.claim, { doc, label });
        if (++n === (label === 'SUPPORT' ? SUPPORTING : CONTRADICTING)) break;
      }
    }

    // The fake model: asked to draft, it writes the run's claim (its instructions) citing the source
    // that is the claim's abstract; asked to rewrite a sentence, it returns it unchanged.
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw || '{}') as { messages?: { content: string }[] };
        const user = body.messages?.at(-1)?.content ?? '';
        let content = 'NOT_FOUND';
        if (user.startsWith('Sources:')) {
          const claim = /\nInstructions: ([^\n]+)\n/.exec(user)?.[1] ?? '';
          const abstract = squash(picked.get(claim)?.doc.text ?? '');
          const sources = [...user.matchAll(/^\[(\d+)\] (?:[^:\n]*: )?([^\n]+)$/gm)];
          const own = sources.find((m) => abstract && abstract.includes(squash(m[2]!).slice(0, 80)));
          const heading = /\nSections:\n(## [^\n]+)/.exec(user)?.[1] ?? '## Findings';
          content = own ? `${heading}\n${claim} [${own[1]}]` : heading;
        } else if (user.startsWith('Source passage:')) content = /\n\nSentence:\n([\s\S]*)$/.exec(user)?.[1] ?? '';
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    t = await startTestSystem({ LLM_URL: `http://127.0.0.1:${port}/v1`, LLM_MODEL: 'fake-drafter', FACT_CHECK_MODEL_DIR: modelDir });

    // The claims' abstracts and others beside them, through the API.
    const others = [...docs.values()].filter((d) => !usedDocs.has(d._id)).slice(0, OTHERS);
    for (const p of picked.values()) p.contentId = (await addSource(t, p.doc.title, p.doc.text)).id;
    for (const d of others) await addSource(t, d.title, d.text);
    const last = [...picked.values()].at(-1)!;
    await waitIndexed(t, last.doc.title, last.contentId!, 60_000);

    const type = await t.api('POST', '/org/content-types', {
      body: { name: 'Finding', config: { sections: [{ title: 'Findings' }], unsupported_sentences: 'block' } },
    });
    assert.equal(type.status, 201, type.text);
    contentTypeId = type.body.content_type_id;
  }, 600_000);

  afterAll(async () => {
    await t?.stop();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('keeps supported paraphrases supported, citing their abstract, and never keeps a contradicted one as supported', async () => {
    const outcome = { SUPPORT: { drafted: 0, kept: 0 }, CONTRADICT: { drafted: 0, flagged: 0 } };
    const misses: string[] = [];
    for (const [claim, p] of picked) {
      const run = await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId, instructions: claim } });
      assert.equal(run.status, 202, run.text);
      const done = await waitForRun(t, run.body.run_id, 120_000);
      if (done.state !== 'completed') continue; // its abstract was not among the retrieved sources: nothing drafted
      const draft = (await t.api('GET', `/org/generation/drafts/${done.draft_id}`)).body;
      const sentence = draft.sections.flatMap((s: any) => s.sentences).find((s: any) => squash(s.text) === squash(claim));
      if (!sentence) continue;
      if (p.label === 'SUPPORT') {
        outcome.SUPPORT.drafted++;
        const kept = sentence.verdict === 'supported' && sentence.citations.some((c: any) => c.content_id === p.contentId);
        if (kept) outcome.SUPPORT.kept++;
        else misses.push(`kept? ${sentence.verdict}: ${claim}`);
      } else {
        outcome.CONTRADICT.drafted++;
        if (sentence.verdict !== 'supported') outcome.CONTRADICT.flagged++;
        else misses.push(`flagged? supported: ${claim}`);
        assert.ok(draft.verification !== 'verified' || sentence.verdict === 'supported');
      }
    }
    const kept = outcome.SUPPORT.kept / outcome.SUPPORT.drafted;
    const flagged = outcome.CONTRADICT.flagged / outcome.CONTRADICT.drafted;
    console.log(
      `SciFact claims drafted by the fake model: supported paraphrases kept ${outcome.SUPPORT.kept}/${outcome.SUPPORT.drafted} ` +
        `(${(kept * 100).toFixed(0)}%, target 90%), contradicted ones flagged ${outcome.CONTRADICT.flagged}/${outcome.CONTRADICT.drafted} ` +
        `(${(flagged * 100).toFixed(0)}%, target 80%)\n${misses.join('\n')}`,
    );
    assert.ok(outcome.SUPPORT.drafted >= SUPPORTING * 0.6, 'most supporting abstracts were retrieved and drafted from');
    assert.ok(outcome.CONTRADICT.drafted >= CONTRADICTING * 0.4, 'contradicting abstracts were retrieved and drafted from');
    // Floors this checker holds (see docs: the fact checker's figures); the lexical checker keeps about 6%.
    // Few contradicting abstracts are retrieved and drafted from (7 here), so one claim moves the rate by
    // 14 points: the floor is 40%, and the contradiction rate itself is measured on the whole train split
    // by `npm run bench:factcheck` (cited setting).
    assert.ok(kept >= 0.4, `supported paraphrases kept: ${kept}`);
    assert.ok(flagged >= 0.4, `contradicted claims flagged: ${flagged}`);
  }, 900_000);
});
