/**
 * The fact checker's development set: claims written by hand about the Fastify
 * documentation (node_modules/fastify/docs), each checked against the docs
 * (test/factcheck/fastify-dev.jsonl):
 *
 * - copied: a sentence of the docs as it stands; it should be supported;
 * - paraphrase: what one sentence says, in other words; it should be supported;
 * - altered: a sentence made false by one realistic edit (an antonym, another
 *   identifier, another number or unit, a negation added or dropped, another
 *   quantifier or modal, another named product or format); it should not be
 *   supported, and mostly be contradicted by the sentence it was made from;
 * - invented: a statement about Fastify the docs do not make; it should not be
 *   supported.
 *
 * The docs go through the ingest service's extraction and chunking into the
 * embedded SQLite search index, and every claim is checked with retrieval over
 * the whole of them, as POST /org/content/verify checks a pasted sentence.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isCodeLike, sentenceSpans, type CheckedSentence, type EvidencePassage, type FactChecker } from '@kb/ai';
import { DEFAULT_LIMITS, extractFile } from '@kb/ingest/extract';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { chunkBlocks } from '../../services/ingest/src/domain/chunking.js';

export const EDITS = ['antonym', 'identifier', 'number', 'negation', 'quantifier', 'entity'] as const;
export type Edit = (typeof EDITS)[number];

export interface DevClaim {
  kind: 'copied' | 'paraphrase' | 'altered' | 'invented';
  edit?: Edit;
  claim: string;
  /** The docs file and the sentence of it the claim rests on (none for invented claims). */
  doc?: string;
  source?: string;
}

const ROOT = join(import.meta.dirname, '../..');
export const DOCS_DIR = join(ROOT, 'node_modules/fastify/docs');
export const DEV_SET = join(ROOT, 'test/factcheck/fastify-dev.jsonl');

export function loadDevSet(file = DEV_SET): DevClaim[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as DevClaim);
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The docs, extracted and chunked as the ingest service does, in an in-memory search index. */
export async function indexDocs(dir = DOCS_DIR) {
  const index = createSqliteSearchIndex({ path: ':memory:' });
  const org = '00000000-0000-4000-8000-000000000000';
  const texts: string[] = [];
  for (const path of markdownFiles(dir)) {
    const name = relative(dir, path);
    const { blocks } = await extractFile({ bytes: readFileSync(path), filename: name }, DEFAULT_LIMITS);
    const chunks = chunkBlocks(blocks, { targetChars: 1200, overlapChars: 150 });
    for (const c of chunks) texts.push(c.text);
    await index.indexVersion({
      org_id: org,
      content_id: name,
      version_id: name,
      title: name,
      category_id: null,
      topic_id: null,
      tags: [],
      folder_path: [],
      chunks,
    });
  }
  const retrieve = async (claim: string, limit: number): Promise<EvidencePassage[]> => {
    const res = await index.search({ org_id: org, query: claim, filters: { folder_scope: null }, limit });
    return res.hits.map((h) => ({
      content_id: h.content_id,
      version_id: h.version_id,
      chunk_id: `${h.version_id}:${h.chunk_index}`,
      text: h.chunk_text,
      title: h.title,
      score: h.score,
    }));
  };
  return { retrieve, texts, close: () => index.close() };
}

const flat = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Whether a quote is the claim's source sentence (or holds it). */
const quotesSource = (quote: string, source: string) =>
  flat(quote).includes(
    flat(source)
      .replace(/^ℹ️ Note: /, '')
      .slice(0, 60),
  );

export interface DevResult {
  claim: DevClaim;
  sentence: CheckedSentence;
  ms: number;
}

export interface DevFigures {
  copied: number;
  paraphrase: number;
  invented: number;
  altered: number;
  /** Per edit type: [caught, contradicted quoting the source, total]. */
  edits: Record<Edit, [number, number, number]>;
  /** Copied claims whose support quotes their own sentence. */
  attribution: number;
  p50: number;
  p95: number;
}

export async function runDevSet(
  checker: FactChecker,
  retrieve: (claim: string, limit: number) => Promise<EvidencePassage[]>,
  claims = loadDevSet(),
): Promise<{ results: DevResult[]; figures: DevFigures }> {
  const results: DevResult[] = [];
  for (const claim of claims) {
    const t0 = performance.now();
    const [sentence] = await checker.check({ text: claim.claim, retrieve });
    results.push({ claim, sentence: sentence!, ms: performance.now() - t0 });
  }
  const share = (xs: DevResult[], ok: (r: DevResult) => boolean) => (xs.length === 0 ? NaN : xs.filter(ok).length / xs.length);
  const of = (kind: DevClaim['kind']) => results.filter((r) => r.claim.kind === kind);
  const supported = (r: DevResult) => r.sentence.verdict === 'supported';
  const edits = Object.fromEntries(
    EDITS.map((e) => {
      const xs = results.filter((r) => r.claim.edit === e);
      return [
        e,
        [
          xs.filter((r) => !supported(r)).length,
          xs.filter((r) => r.sentence.verdict === 'contradicted' && r.sentence.support.some((s) => quotesSource(s.quote, r.claim.source!)))
            .length,
          xs.length,
        ],
      ];
    }),
  ) as DevFigures['edits'];
  const times = results.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return {
    results,
    figures: {
      copied: share(of('copied'), supported),
      paraphrase: share(of('paraphrase'), supported),
      invented: share(of('invented'), (r) => !supported(r)),
      altered: share(of('altered'), (r) => !supported(r)),
      edits,
      attribution: share(of('copied'), (r) => supported(r) && quotesSource(r.sentence.support[0]!.quote, r.claim.source!)),
      p50: at(0.5),
      p95: at(0.95),
    },
  };
}

/** The claims whose source sentence is nowhere in the indexed docs (a dev set written against other docs). */
export function unsourced(claims: DevClaim[], texts: string[]): DevClaim[] {
  const all = flat(texts.join(' '));
  return claims.filter((c) => c.source && !all.includes(flat(c.source)));
}

const pct = (x: number) => (Number.isNaN(x) ? 'n/a' : `${(x * 100).toFixed(1)}%`);

export function printDevFigures(name: string, f: DevFigures): void {
  const edits = EDITS.map((e) => `${e} ${f.edits[e][0]}/${f.edits[e][2]} (${f.edits[e][1]} contradicted)`).join(', ');
  console.log(
    `| ${name} | ${pct(f.copied)} | ${pct(f.paraphrase)} | ${pct(f.altered)}: ${edits} | ${pct(f.invented)} | ${pct(f.attribution)} | ${f.p50.toFixed(0)} / ${f.p95.toFixed(0)} ms |`,
  );
}

export const DEV_HEADER =
  '| run | copied kept | paraphrase kept | altered caught (per edit: caught/total, contradicted quoting the source) | invented caught | attribution | p50 / p95 per sentence |\n|---|---|---|---|---|---|---|';

export function printMisses(results: DevResult[]): void {
  for (const r of results) {
    const ok =
      r.claim.kind === 'copied' || r.claim.kind === 'paraphrase' ? r.sentence.verdict === 'supported' : r.sentence.verdict !== 'supported';
    if (ok) continue;
    console.log(
      `MISS ${r.claim.kind}${r.claim.edit ? `/${r.claim.edit}` : ''} → ${r.sentence.verdict}: ${r.claim.claim}\n     ${r.sentence.reason ?? ''} | ${flat(r.sentence.support[0]?.quote ?? '').slice(0, 160)}`,
    );
  }
}

/**
 * Sentences drawn at random from the docs' prose (six words or more, ending with a full stop; seeded), checked as
 * copied claims: how often the checker keeps, or wrongly contradicts, what the docs say on pages nobody wrote claims for.
 */
export async function randomCopied(
  checker: FactChecker,
  retrieve: (claim: string, limit: number) => Promise<EvidencePassage[]>,
  texts: string[],
  n = 150,
  seed = 3,
): Promise<Record<CheckedSentence['verdict'], number>> {
  const all = texts
    .flatMap((t) => sentenceSpans(t).map((s) => s.claim))
    .filter((s) => s.split(' ').length >= 6 && s.endsWith('.') && !isCodeLike(s));
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const counts: Record<CheckedSentence['verdict'], number> = { supported: 0, unsupported: 0, contradicted: 0, not_factual: 0 };
  for (let i = 0; i < n; i++) {
    const [r] = await checker.check({ text: all[Math.floor(next() * all.length)]!, retrieve });
    counts[r!.verdict]++;
  }
  return counts;
}
