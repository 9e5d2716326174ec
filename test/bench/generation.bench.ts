/**
 * Generation benchmark (issues 9, 33 and 44): drafts read automatically, standing
 * for the editor, over two knowledge bases, each draft going through the run's
 * pipeline in process (section retrieval, the extractive drafter, the fact
 * checker removing what it does not find supported, the coverage warnings).
 *
 * 1. The Fastify documentation (Reference and Guides, node_modules/fastify/docs,
 *    extracted and chunked by ingest's code): four content types a developer-
 *    relations team would want (a how-to in four sections, a five-question FAQ,
 *    a one-section summary, a three-section overview with generic titles), each
 *    with section instructions and with titles only. Read per sentence:
 *    - flawed: a fragment or markup residue (FRAGMENT_RULES, printed), a
 *      reference back with nothing to refer to (a sentence opening "This",
 *      "It", "However", "The function", ... whose draft predecessor in its
 *      paragraph is not its predecessor in the source), a pointer ("See X for
 *      more information"), the source author's first or second person; target 0;
 *    - on its section's subject: the sentence, or the headings and title of the
 *      chunk it cites, says a content word of its section's title or
 *      instructions (of the piece's subject for "Overview"-like titles) and no
 *      more of another section's own words (onSubject); target >= 90%;
 *    - sections and questions left unanswered, by name;
 *    - words against target_length: met (min..max) or flagged (a warning on
 *      the draft, which is then needs_review); target 100%;
 *    - words with instructions against titles only (more detail never less).
 *    The sentence composer the drafter replaced is read the same way (baseline).
 * 2. SciFact train claims (/work/shared/data/ir/scifact-train, SCIFACT_DIR; never
 *    copied here): for each claim with qrels, a one-section summary drafted from
 *    the abstracts the default retrieval finds for it. Measured as before (supported; citing
 *    an abstract the qrels judge relevant, target >= 60%; eligible drafts) and
 *    read as above. Baselines: the sentence composer; the same drafts verified by
 *    lexical overlap; the first sentences of the top hit.
 *
 * Retrieval is the service's default: hybrid with the bundled embedding model
 * (vectors cached under .cache/), BM25 alone with EMBEDDINGS=none.
 *
 * A few drafts of each kind are written to test/artifacts/generation/ (gitignored)
 * to be read.
 *
 *   npm run bench:generation        (SAMPLE=n claims, default 300; SCIFACT_DIR; EMBEDDINGS=none; EMBEDDINGS_THREADS, default 2)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFactChecker, splitSentences, type EvidencePassage, type FactChecker } from '@kb/ai';
import {
  composeDeterministic,
  coverageOf,
  createLexicalFactChecker,
  draftExtractive,
  retrieveSections,
  verifySections,
  type DraftedSection,
  type SectionInput,
} from '@kb/generation/bench';
import { loadScifact } from './scifact.js';
import { defaultEmbeddings, fastifyDocs, scifactAbstracts, type Corpus } from './generation-corpora.js';
import { FASTIFY_PIECES, type PieceSpec } from './generation-pieces.js';
import { FLAWS, FRAGMENT_RULES, flawsOf, onSubject, wordCount, type Flaw, type ReadSentence } from './draft-reading.js';

const SAMPLE = Number(process.env.SAMPLE ?? 300);
const RETRIEVE = 5;
const MAX_WORDS = 120;
const TARGET_RELEVANT = 0.6;
const TARGET_ON_SUBJECT = 0.9;
const ARTIFACTS = join(import.meta.dirname, '../artifacts/generation');
mkdirSync(ARTIFACTS, { recursive: true });
const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const checker = createFactChecker();
const lexical = createLexicalFactChecker();

type Drafter = (sections: SectionInput[], piece: Pick<PieceSpec, 'kind' | 'target_length'>) => DraftedSection[];
const drafter: Drafter = (sections, piece) => draftExtractive(sections, {}, piece);
const sentenceComposer: Drafter = (sections, piece) => composeDeterministic(sections, {}, piece.target_length);

interface Reading {
  sentences: number;
  flawed: number;
  flaws: Map<Flaw, number>;
  onSubject: number;
  words: number;
  lengthOk: boolean;
  unanswered: string[];
  markdown: string;
}

/** Drafts, verifies and reads one piece. */
async function readPiece(
  piece: PieceSpec,
  sections: SectionInput[],
  retrieve: (q: string, n: number) => Promise<EvidencePassage[]>,
  draft: Drafter,
  verifier: FactChecker,
  contextOf: (chunkId: string, title: string | undefined) => string,
): Promise<Reading> {
  const drafted = draft(sections, piece);
  const verified = await verifySections({
    sections: drafted,
    checker: verifier,
    retrieve,
    guidelines: {},
    config: { unsupported_sentences: 'remove' },
  });
  const coverage = coverageOf(verified, piece);
  const reading: Reading = {
    sentences: 0,
    flawed: 0,
    flaws: new Map(),
    onSubject: 0,
    words: 0,
    lengthOk: true,
    unanswered: [],
    markdown: '',
  };
  const md: string[] = [`# ${piece.name}`, '', `Subject: ${piece.subject}`, ''];
  verified.forEach((section, s) => {
    const source = new Map(
      drafted[s]!.sentences.map((x) => [x.text, { quote: x.quote, passage: drafted[s]!.passages[x.passage] }] as const),
    );
    const read: ReadSentence[] = section.sentences.map((x) => {
      const from = source.get(x.text);
      const cited = x.citations[0];
      return {
        text: x.text,
        paragraph: x.paragraph,
        ...(from?.passage && { source: { quote: from.quote, chunkText: from.passage.text } }),
        context: cited ? contextOf(cited.chunk_id, from?.passage?.title) : '',
      };
    });
    const flaws = flawsOf(read);
    const spec = piece.sections[s]!;
    const others = piece.sections.filter((_, o) => o !== s);
    md.push(`## ${section.title}`, '');
    let paragraph: number | undefined = -1;
    let line: string[] = [];
    read.forEach((x, i) => {
      reading.sentences++;
      if (flaws[i]!.length) reading.flawed++;
      for (const f of flaws[i]!) reading.flaws.set(f, (reading.flaws.get(f) ?? 0) + 1);
      const on = onSubject(x, spec, others, piece.subject);
      if (on) reading.onSubject++;
      if (x.paragraph !== paragraph && line.length) {
        md.push(line.join(' '), '');
        line = [];
      }
      paragraph = x.paragraph;
      line.push(`${x.text}${flaws[i]!.length ? ` **[${flaws[i]!.join(', ')}]**` : ''}${on ? '' : ' **[off subject]**'}`);
    });
    if (line.length) md.push(line.join(' '), '');
    if (section.sentences.length === 0) reading.unanswered.push(section.title);
  });
  reading.words = wordCount(verified.flatMap((s) => s.sentences.map((x) => x.text)));
  const met = reading.words >= piece.target_length.min_words && reading.words <= piece.target_length.max_words;
  const flagged = coverage.warnings.some((w) => /short of the content type's minimum/.test(w));
  reading.lengthOk = met || (reading.words < piece.target_length.min_words && flagged);
  md.push('---', '', `Words: ${reading.words} (target ${piece.target_length.min_words} to ${piece.target_length.max_words})`, '');
  for (const w of coverage.warnings) md.push(`- Warning: ${w}`);
  reading.markdown = md.join('\n');
  return reading;
}

interface Totals {
  drafts: number;
  sentences: number;
  flawed: number;
  flaws: Map<Flaw, number>;
  onSubject: number;
  lengthOk: number;
}
const totals = (): Totals => ({ drafts: 0, sentences: 0, flawed: 0, flaws: new Map(), onSubject: 0, lengthOk: 0 });
function add(t: Totals, r: Reading) {
  t.drafts++;
  t.sentences += r.sentences;
  t.flawed += r.flawed;
  for (const [f, n] of r.flaws) t.flaws.set(f, (t.flaws.get(f) ?? 0) + n);
  t.onSubject += r.onSubject;
  if (r.lengthOk) t.lengthOk++;
}
const flawColumns = (t: Totals) => FLAWS.map((f) => `${t.flaws.get(f) ?? 0}`).join(' | ');
const readingRow = (name: string, t: Totals) =>
  `| ${name} | ${t.drafts} | ${t.sentences} | ${pct(t.flawed, t.sentences)} (${t.flawed}) | ${flawColumns(t)} | ${pct(t.onSubject, t.sentences)} | ${pct(t.lengthOk, t.drafts)} |`;
const readingHeader = () => {
  console.log(`| drafter | drafts | sentences | flawed | ${FLAWS.join(' | ')} | on its section's subject | length met or flagged |`);
  console.log(`|---|---|---|---|${FLAWS.map(() => '---').join('|')}|---|---|`);
};

// ---- 1. The Fastify documentation ----

const { embeddings, why: keywordOnly } = await defaultEmbeddings();
console.log(`Retrieval: ${embeddings ? 'hybrid (BM25 and the bundled embedding model), the default' : `BM25 only (${keywordOnly})`}`);
const fastify: Corpus = await fastifyDocs(embeddings);
const fastifyContext = (chunkId: string, title: string | undefined) => [...(fastify.headings.get(chunkId) ?? []), title ?? ''].join(' ');
console.log(`Fastify docs: ${fastify.documents} documents, ${fastify.chunks} chunks`);
const fastifyTotals = { drafter: totals(), composer: totals() };
const unanswered: string[] = [];
const wordsByPiece = new Map<string, { detailed?: number; titles?: number }>();
for (const piece of FASTIFY_PIECES) {
  const sections = await retrieveSections(piece.sections, piece.subject, fastify.retrieve);
  const ours = await readPiece(piece, sections, fastify.retrieve, drafter, checker, fastifyContext);
  const before = await readPiece(piece, sections, fastify.retrieve, sentenceComposer, checker, fastifyContext);
  add(fastifyTotals.drafter, ours);
  add(fastifyTotals.composer, before);
  for (const u of ours.unanswered) unanswered.push(`${piece.name}: “${u}”`);
  const base = piece.name.replace(/ \(titles only\)$/, '');
  const entry = wordsByPiece.get(base) ?? {};
  if (base === piece.name) entry.detailed = ours.words;
  else entry.titles = ours.words;
  wordsByPiece.set(base, entry);
  writeFileSync(join(ARTIFACTS, `fastify-${slug(piece.name)}.md`), ours.markdown);
  console.log(
    `  ${piece.name}: ${ours.sentences} sentences, ${ours.words} words (${piece.target_length.min_words}..${piece.target_length.max_words}${ours.lengthOk ? '' : ', NOT met nor flagged'}), flawed ${ours.flawed}, on subject ${pct(ours.onSubject, ours.sentences)}` +
      (ours.unanswered.length ? `, unanswered: ${ours.unanswered.map((u) => `“${u}”`).join(', ')}` : ''),
  );
}
console.log('');
readingHeader();
console.log(`| target | | | 0 | ${FLAWS.map(() => '0').join(' | ')} | >= ${pct(TARGET_ON_SUBJECT, 1)} | 100% |`);
console.log(readingRow('passage drafter (extractive)', fastifyTotals.drafter));
console.log(readingRow('sentence composer (baseline)', fastifyTotals.composer));
console.log('');
console.log(`Sections and questions left unanswered (drafter): ${unanswered.length ? unanswered.join('; ') : 'none'}`);
const lessWithDetail = [...wordsByPiece].filter(([, w]) => (w.detailed ?? 0) < (w.titles ?? 0));
console.log(
  `Words with instructions / titles only: ${[...wordsByPiece].map(([name, w]) => `${name} ${w.detailed}/${w.titles}`).join('; ')}` +
    (lessWithDetail.length
      ? ` (fewer with instructions: ${lessWithDetail.map(([n]) => n).join(', ')})`
      : ' (never fewer with instructions)'),
);
console.log('');

// ---- 2. SciFact train claims ----

const { corpus, queries, qrels } = loadScifact();
const { retrieve } = await scifactAbstracts(corpus, embeddings);

const claims = queries.slice(0, SAMPLE);
console.log(`SciFact train: ${corpus.length} abstracts, ${claims.length} claims with qrels; ${RETRIEVE} abstracts retrieved per claim`);

interface Tally {
  drafts: number;
  sentences: number;
  supported: number;
  relevant: number;
  eligible: number;
  eligibleSentences: number;
  eligibleSupported: number;
  reading: Totals;
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
  reading: totals(),
  ms: 0,
});
const ours = empty();
const composerTally = empty();
const baseline = empty();
const topHit = empty();

/** A claim's summary: one section on the claim, at most MAX_WORDS words, at least half that. */
const claimPiece = (claim: string): PieceSpec => ({
  name: claim,
  kind: 'summary',
  subject: claim,
  sections: [{ title: claim }],
  target_length: { min_words: MAX_WORDS / 2, max_words: MAX_WORDS },
});
type ClaimDrafter = (claim: string, passages: EvidencePassage[]) => DraftedSection[];
const claimSections = (claim: string, passages: EvidencePassage[]) => [
  { section_id: 's1', spec: { title: claim }, query: claim, passages },
];
const passageDrafter: ClaimDrafter = (claim, passages) => drafter(claimSections(claim, passages), claimPiece(claim));
const composer: ClaimDrafter = (claim, passages) => sentenceComposer(claimSections(claim, passages), claimPiece(claim));
/** The naive extractive draft: the top hit's first sentences, up to the word budget. */
const firstSentencesOfTopHit: ClaimDrafter = (_claim, passages) => {
  const sentences: DraftedSection['sentences'] = [];
  let words = 0;
  for (const text of passages[0] ? splitSentences(passages[0].text) : []) {
    const n = text.split(/\s+/).length;
    if (sentences.length > 0 && words + n > MAX_WORDS) break;
    sentences.push({ text, quote: text, passage: 0 });
    words += n;
  }
  return [{ section_id: 's1', title: 'Top hit', passages, sentences }];
};

let artifacts = 0;
async function run(claim: { _id: string; text: string }, verifier: FactChecker, tally: Tally, draft: ClaimDrafter) {
  const started = performance.now();
  const passages = await retrieve(claim.text, RETRIEVE);
  const drafted = draft(claim.text, passages);
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
  // The editor's reading: flaws, on the claim's subject, length met or flagged.
  const source = new Map(
    drafted[0]!.sentences.map((x) => [x.text, { quote: x.quote, chunkText: drafted[0]!.passages[x.passage]?.text ?? '' }]),
  );
  const read: ReadSentence[] = sentences.map((x) => ({
    text: x.text,
    paragraph: x.paragraph,
    source: source.get(x.text),
    context: passages.find((p) => p.chunk_id === x.citations[0]?.chunk_id)?.title ?? '',
  }));
  const flaws = flawsOf(read);
  const piece = claimPiece(claim.text);
  const words = wordCount(sentences.map((x) => x.text));
  const coverage = coverageOf([verified!], piece);
  const reading: Reading = {
    sentences: sentences.length,
    flawed: flaws.filter((f) => f.length > 0).length,
    flaws: new Map(FLAWS.map((f) => [f, flaws.filter((x) => x.includes(f)).length])),
    onSubject: read.filter((x) => onSubject(x, piece.sections[0]!, [], claim.text)).length,
    words,
    lengthOk: (words >= piece.target_length.min_words && words <= piece.target_length.max_words) || coverage.warnings.length > 0,
    unanswered: [],
    markdown: '',
  };
  add(tally.reading, reading);
  if (tally === ours && artifacts < 5) {
    artifacts++;
    const lines = read.map((x, i) => `${x.text}${flaws[i]!.length ? ` **[${flaws[i]!.join(', ')}]**` : ''}`);
    writeFileSync(
      join(ARTIFACTS, `scifact-${claim._id}.md`),
      [
        `# ${claim.text}`,
        '',
        lines.join(' '),
        '',
        '---',
        '',
        `Words: ${words}`,
        ...coverage.warnings.map((w) => `- Warning: ${w}`),
        '',
      ].join('\n'),
    );
  }
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
  await run(claim, checker, ours, passageDrafter);
  await run(claim, checker, composerTally, composer);
  await run(claim, lexical, baseline, passageDrafter);
  await run(claim, checker, topHit, firstSentencesOfTopHit);
}

const row = (name: string, t: Tally) =>
  `| ${name} | ${t.drafts} | ${(t.sentences / Math.max(1, t.drafts)).toFixed(2)} | ${pct(t.supported, t.sentences)} | ${pct(t.relevant, t.sentences)} | ${pct(t.reading.flawed, t.reading.sentences)} (${t.reading.flawed}) | ${pct(t.reading.onSubject, t.reading.sentences)} | ${pct(t.reading.lengthOk, t.reading.drafts)} | ${t.eligible} | ${pct(t.eligibleSupported, t.eligibleSentences)} | ${(t.ms / claims.length).toFixed(1)} ms |`;
console.log('');
console.log(
  "| draft, verified by | drafts with sentences | sentences a draft | supported (fact checker) | citing a relevant abstract | flawed | on the claim's subject | length met or flagged | eligible drafts | eligible drafts supported | time a claim |",
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
console.log(`| target | | | | >= ${pct(TARGET_RELEVANT, 1)} | 0 | >= ${pct(TARGET_ON_SUBJECT, 1)} | 100% | | | |`);
console.log(row('passage drafter, fact checker', ours));
console.log(row('sentence composer, fact checker (baseline)', composerTally));
console.log(row('passage drafter, lexical overlap (baseline)', baseline));
console.log(row('first sentences of the top hit, fact checker (baseline)', topHit));
console.log('');
console.log("Flaws of the passage drafter's SciFact sentences:");
readingHeader();
console.log(readingRow('passage drafter', ours.reading));
console.log(readingRow('sentence composer (baseline)', composerTally.reading));
console.log('');
const relevantShare = ours.relevant / Math.max(1, ours.sentences);
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
const all = totals();
for (const t of [fastifyTotals.drafter, ours.reading]) {
  all.drafts += t.drafts;
  all.sentences += t.sentences;
  all.flawed += t.flawed;
  all.onSubject += t.onSubject;
  all.lengthOk += t.lengthOk;
}
console.log(
  `passage drafter: citing a relevant abstract ${pct(ours.relevant, ours.sentences)} (target >= ${pct(TARGET_RELEVANT, 1)}: ${verdict(relevantShare >= TARGET_RELEVANT)}); ` +
    `flawed ${pct(all.flawed, all.sentences)} (target 0: ${verdict(all.flawed === 0)}); ` +
    `on its section's subject ${pct(all.onSubject, all.sentences)} (target >= ${pct(TARGET_ON_SUBJECT, 1)}: ${verdict(all.onSubject >= TARGET_ON_SUBJECT * all.sentences)}); ` +
    `length met or flagged ${pct(all.lengthOk, all.drafts)} (target 100%: ${verdict(all.lengthOk === all.drafts)})`,
);
console.log(`Drafts to read: ${ARTIFACTS}`);
console.log('');
console.log('A draft sentence counts as a fragment or markup residue when it breaks any of these rules:');
for (const [rule] of FRAGMENT_RULES) console.log(`- ${rule}`);
await embeddings?.close();
if (ours.eligibleSupported !== ours.eligibleSentences) {
  console.error('FAIL: an eligible draft holds a sentence the fact checker does not find supported');
  process.exitCode = 1;
}
