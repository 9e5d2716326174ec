/**
 * Generation on SciFact (train split, BEIR layout), issue 9 benchmark (b): for
 * each claim with qrels, the run's pipeline drafts a one-section piece from the
 * abstracts the FTS5 index retrieves for the claim (the deterministic composer,
 * no model) and verifies it, removing what is not supported. Measured:
 *
 * - supported: share of draft sentences the fact checker finds supported;
 * - relevant citations: share of draft sentences whose citation points into an
 *   abstract the qrels judge relevant to the claim;
 * - eligible: drafts with every factual sentence supported (what may be
 *   published), and the share of their sentences supported (must be 100%).
 *
 * The baseline is the same pipeline verified by plain lexical overlap (the
 * checker is swapped for supportOf at SUPPORT_THRESHOLD), in the same run;
 * its kept sentences are then judged by the fact checker, which shows what
 * overlap lets through.
 *
 *   npm run bench:generation        (SAMPLE=n claims, default 300; SCIFACT_DIR)
 */
import { createFactChecker, type EvidencePassage, type FactChecker } from '@kb/ai';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { composeDeterministic, createLexicalFactChecker, verifySections } from '@kb/generation/bench';
import { loadScifact } from './scifact.js';

const SAMPLE = Number(process.env.SAMPLE ?? 300);
const RETRIEVE = 5;
const ORG = '00000000-0000-4000-8000-000000000000';

const { corpus, queries, qrels } = loadScifact();
const index = createSqliteSearchIndex({ path: ':memory:' });
for (const d of corpus)
  await index.indexVersion({
    org_id: ORG,
    content_id: d._id,
    version_id: d._id,
    title: d.title,
    category_id: null,
    topic_id: null,
    tags: [],
    folder_path: [],
    chunks: [{ chunk_index: 0, text: d.text }],
  });
async function retrieve(claim: string, limit: number): Promise<EvidencePassage[]> {
  const res = await index.search({ org_id: ORG, query: claim, filters: { folder_scope: null }, limit });
  return res.hits.map((h) => ({
    content_id: h.content_id,
    version_id: h.version_id,
    chunk_id: `${h.version_id}:${h.chunk_index}`,
    text: h.chunk_text,
    title: h.title,
    score: h.score,
  }));
}

const claims = queries.slice(0, SAMPLE);
console.log(`SciFact train: ${corpus.length} abstracts, ${claims.length} claims with qrels; ${RETRIEVE} abstracts retrieved per claim`);

const checker = createFactChecker();
const lexical = createLexicalFactChecker();

interface Tally {
  drafts: number;
  sentences: number;
  supported: number;
  relevant: number;
  eligible: number;
  eligibleSentences: number;
  eligibleSupported: number;
  ms: number;
}
const empty = (): Tally => ({
  drafts: 0,
  sentences: 0,
  supported: 0,
  relevant: 0,
  eligible: 0,
  eligibleSentences: 0,
  eligibleSupported: 0,
  ms: 0,
});
const ours = empty();
const baseline = empty();

async function run(claim: { _id: string; text: string }, verifier: FactChecker, tally: Tally) {
  const started = performance.now();
  const passages = await retrieve(claim.text, RETRIEVE);
  const drafted = composeDeterministic(
    [{ section_id: 's1', spec: { title: claim.text }, query: claim.text, passages }],
    {},
    { max_words: 120 },
  );
  const [verified] = await verifySections({
    sections: drafted,
    checker: verifier,
    retrieve,
    guidelines: {},
    config: { unsupported_sentences: 'remove' },
  });
  tally.ms += performance.now() - started;
  const sentences = verified!.sentences;
  if (sentences.length === 0) return;
  tally.drafts++;
  const relevantDocs = qrels.get(claim._id)!;
  let supported = 0;
  for (const s of sentences) {
    // Judged by the fact checker whatever verified the draft: the baseline's kept sentences are re-checked.
    const cited = s.citations.length ? passages.filter((p) => p.chunk_id === s.citations[0]!.chunk_id) : [];
    const verdict =
      verifier === checker
        ? s.verdict
        : (await checker.check({ text: cited.length ? `${s.text} [1]` : s.text, cited, retrieve }))[0]?.verdict;
    if (verdict === 'supported' || verdict === 'not_factual') supported++;
    if (s.citations.some((c) => (relevantDocs.get(c.content_id) ?? 0) > 0)) tally.relevant++;
  }
  tally.sentences += sentences.length;
  tally.supported += supported;
  const eligible = sentences.every((s) => s.verdict === 'supported' || s.verdict === 'not_factual');
  if (eligible) {
    tally.eligible++;
    tally.eligibleSentences += sentences.length;
    tally.eligibleSupported += supported;
  }
}

for (const claim of claims) {
  await run(claim, checker, ours);
  await run(claim, lexical, baseline);
}

const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
const row = (name: string, t: Tally) =>
  `| ${name} | ${t.drafts} | ${(t.sentences / Math.max(1, t.drafts)).toFixed(2)} | ${pct(t.supported, t.sentences)} | ${pct(t.relevant, t.sentences)} | ${t.eligible} | ${pct(t.eligibleSupported, t.eligibleSentences)} | ${(t.ms / claims.length).toFixed(1)} ms |`;
console.log('');
console.log(
  '| verified by | drafts with sentences | sentences a draft | supported (fact checker) | citing a relevant abstract | eligible drafts | eligible drafts supported | time a claim |',
);
console.log('|---|---|---|---|---|---|---|---|');
console.log(row('fact checker', ours));
console.log(row('lexical overlap (baseline)', baseline));
console.log('');
console.log(
  `ratios, fact checker / baseline: supported ${(ours.supported / Math.max(1, ours.sentences) / (baseline.supported / Math.max(1, baseline.sentences))).toFixed(3)}, ` +
    `relevant citations ${(ours.relevant / Math.max(1, ours.sentences) / (baseline.relevant / Math.max(1, baseline.sentences))).toFixed(3)}, time ${(ours.ms / Math.max(1, baseline.ms)).toFixed(2)}x`,
);
if (ours.eligibleSupported !== ours.eligibleSentences) {
  console.error('FAIL: an eligible draft holds a sentence the fact checker does not find supported');
  process.exitCode = 1;
}
