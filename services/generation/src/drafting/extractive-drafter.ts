import type { EvidencePassage } from '@kb/ai';
import { contentStems } from '@kb/search';
import {
  allowed,
  applyPreferredTerms,
  headingCase,
  passageLayout,
  type DraftedSection,
  type DraftedSentence,
  type SectionInput,
} from '../domain/composer.js';
import type { ContentKind, Guidelines } from '../domain/settings.js';
import { readPassage, type ParagraphSentence, type SourceParagraph } from './passages.js';
import { authorVoice, isLayoutReference, isPointer, refersBack, voiceAllowsPerson } from './referents.js';

/**
 * The extractive drafter (no model, deterministic): each section is built from
 * the source paragraphs that answer its heading and instructions, drawn as
 * coherent runs of their sentences.
 *
 * Which paragraphs: those whose words, or the heading they stand under (a
 * strong signal: a document's own headings say what its paragraphs answer),
 * say at least half of what the section's title or its instructions say
 * (rarer words weighing more; a word no paragraph or heading of the retrieved
 * passages has is no evidence either way and is left out, so a generic title
 * such as "Overview" falls back on the piece's subject) and enough of the
 * piece's subject (the prompt or the run's instructions). A paragraph that
 * answers another section's title clearly better is that section's, so an FAQ
 * never answers one question under another. Instructions only add evidence:
 * a paragraph that answers the title alone still qualifies.
 *
 * Which sentences: from the best paragraphs down, each paragraph's sentences
 * in order, until the section's share of target_length.max_words is reached.
 * A sentence is left out when it is not whole (a fragment, code or markup),
 * speaks in the source author's first or second person (unless the brand kit
 * asks for it), only points elsewhere ("See X for more information"), points
 * at the source's layout ("the following example"), breaks the brand kit's
 * rules, is a question, or repeats one already drafted; a sentence that refers
 * back ("This ...", "It ...", "However, ...", "The function ...") is drafted
 * only right after the sentence it follows in its source, else not at all.
 *
 * How they read: runs in source order (documents by their best paragraph, a
 * document's chunks and paragraphs in order), a run that defines a term it
 * names before runs that use it, paragraphs of at most four sentences. Every
 * sentence cites its passage (headings set apart, see headingsApart) and
 * quotes its source sentence verbatim.
 */

export interface DraftBrief {
  kind: ContentKind;
  target_length: { min_words: number; max_words: number };
}

/** A paragraph qualifies for a section when it says at least this share of the section's title or instructions. */
const ON_SECTION = 0.5;
/** ... and at least this share of the section's query (the piece's subject with the section's own words). */
const ON_PIECE = 0.25;
/** A paragraph whose coverage of another section's own words is higher by this much is that section's. */
const CLEARLY_OTHERS = 0.15;
/** What a word counts for when only the paragraph's heading, or only its document's title, says it. */
const IN_HEADING = 0.8;
const IN_TITLE = 0.5;
/** How much a paragraph's document's retrieval rank discounts it. */
const RANK_DECAY = 1;
/** A further document is drawn on when its paragraph scores at least this share of the best paragraph's. */
const NEW_DOCUMENT = 0.9;
/** Sentences in a paragraph of the draft. */
const PARAGRAPH_SENTENCES = 4;
/**
 * Heading words that name a kind of section, not a subject ("Overview", "How it works",
 * "Summary", "Key points"): such a heading is answered by the piece's subject.
 */
const GENERIC = new Set(
  contentStems(
    'overview introduction intro summary summaries background conclusion conclusions basics details notes general key points ' +
      'highlights works working about context faq questions answers takeaways recap wrap next steps further reading',
  ),
);
/** Content-stem Jaccard at or above which two sentences say the same thing. */
const NEAR_DUPLICATE = 0.8;

interface Terms {
  list: { t: string; w: number }[];
  total: number;
}

const normalized = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Every distinct paragraph the sections' passages hold, with the best retrieval rank each section gave its document. */
function paragraphPool(sections: SectionInput[]) {
  const byChunk = new Map<string, SourceParagraph[]>();
  const docRank = sections.map(() => new Map<string, number>());
  sections.forEach((section, s) => {
    const documents: string[] = [];
    for (const passage of section.passages) {
      if (!documents.includes(passage.content_id)) documents.push(passage.content_id);
      if (!docRank[s]!.has(passage.content_id)) docRank[s]!.set(passage.content_id, documents.indexOf(passage.content_id));
      if (!byChunk.has(passage.chunk_id)) byChunk.set(passage.chunk_id, readPassage(passage));
    }
  });
  return { paragraphs: [...byChunk.values()].flat(), docRank };
}

export function draftExtractive(sections: SectionInput[], guidelines: Guidelines, brief: DraftBrief): DraftedSection[] {
  const { paragraphs, docRank } = paragraphPool(sections);
  const personAllowed = voiceAllowsPerson(guidelines);

  // Rarer words weigh more: inverse frequency over the paragraphs (text and heading).
  const df = new Map<string, number>();
  for (const p of paragraphs) for (const t of new Set([...p.stems, ...p.headingStems])) df.set(t, (df.get(t) ?? 0) + 1);
  const weight = (t: string) => Math.log(1 + (paragraphs.length + 1) / ((df.get(t) ?? 0) + 0.5));
  // A word that no paragraph or heading says is no evidence: "Overview", "Running costs" over docs that never say it.
  const terms = (words: Iterable<string>, except: Set<string> = new Set()): Terms => {
    const list = [...new Set(words)].filter((t) => !except.has(t) && (df.get(t) ?? 0) > 0).map((t) => ({ t, w: weight(t) }));
    return { list, total: list.reduce((n, x) => n + x.w, 0) };
  };
  const coverage = (p: SourceParagraph, { list, total }: Terms, stems: Set<string> = p.stems) =>
    total === 0
      ? 0
      : list.reduce(
          (n, { t, w }) => n + (stems.has(t) ? w : p.headingStems.has(t) ? IN_HEADING * w : p.titleStems.has(t) ? IN_TITLE * w : 0),
          0,
        ) / total;

  const plans = sections.map((section) => {
    const titleWords = [...new Set(contentStems(section.spec.title).filter((t) => !GENERIC.has(t)))];
    // A heading whose main words the knowledge base never says ("Running costs" over docs without
    // costs) is not answered by its remaining common word ("run"): only its instructions may answer it.
    const missing = titleWords.filter((t) => !df.has(t)).length;
    const title = missing > 0 && missing * 2 >= titleWords.length ? { list: [], total: 0 } : terms(titleWords);
    const instructions = terms(contentStems(section.spec.instructions ?? ''));
    // The piece's subject as the section's query says it (its own words included: a solar section of
    // a piece on solar panels and batteries is on the piece's subject by saying "solar panels").
    // Instructions only add evidence, so their words are not asked of a paragraph here.
    const instructionOnly = new Set(instructions.list.map((x) => x.t).filter((t) => !titleWords.includes(t)));
    const piece = terms(contentStems(section.query).filter((t) => !GENERIC.has(t) && !instructionOnly.has(t)));
    return { title, instructions, piece, generic: titleWords.length === 0 };
  });
  /** How much of a section's heading a paragraph answers (for a generic heading, of the piece's subject). */
  const titleShare = (p: SourceParagraph, s: number) => coverage(p, plans[s]!.generic ? plans[s]!.piece : plans[s]!.title);

  const pieceShare = (p: SourceParagraph, s: number) => (plans[s]!.piece.total === 0 ? 1 : coverage(p, plans[s]!.piece));
  /**
   * Whether a paragraph answers the section's instructions: half of what they say, or (long
   * instructions list several things) two of their words and a third of their weight.
   */
  const instructionsShare = (p: SourceParagraph, s: number) => coverage(p, plans[s]!.instructions);
  const answersInstructions = (p: SourceParagraph, s: number) => {
    const { instructions } = plans[s]!;
    const share = instructionsShare(p, s);
    if (share >= ON_SECTION) return true;
    const said = instructions.list.filter(({ t }) => p.stems.has(t) || p.headingStems.has(t)).length;
    return instructions.list.length > 3 && said >= 2 && share >= ON_SECTION / 1.5;
  };

  const shares = paragraphs.map((p) => sections.map((_, s) => titleShare(p, s)));
  const queryWords = plans.map((plan) => new Set([...plan.title.list, ...plan.instructions.list, ...plan.piece.list].map((x) => x.t)));
  /** The words of a section's title. */
  // Headings only: a section's instructions add evidence for it, never take a paragraph from another.
  const ownWords = plans.map((plan) => new Set(plan.title.list.map((x) => x.t)));
  const says = (p: SourceParagraph, t: string) => p.stems.has(t) || p.headingStems.has(t);
  /** Whether the paragraph says more of what sets another section apart from this one than of what sets this one apart from it. */
  const saysMoreOfOthers = (p: SourceParagraph, s: number) =>
    plans.some((plan, o) => {
      if (o === s || plan.generic) return false;
      const theirs = [...ownWords[o]!].filter((t) => !ownWords[s]!.has(t) && says(p, t)).length;
      const mine = [...ownWords[s]!].filter((t) => !ownWords[o]!.has(t) && says(p, t)).length;
      return theirs > mine;
    });
  /**
   * The words that set a section's heading apart from the piece (those not every section's query
   * has): when they weigh at least a third of the heading, a paragraph must say one of them ("Installing
   * a heat pump" in a piece on heat pumps is answered by what says installing).
   */
  const distinct = sections.map((_, s) => {
    const shared = (t: string) => sections.length > 1 && plans.every((plan) => plan.piece.list.some((x) => x.t === t));
    const list = plans[s]!.title.list.filter((x) => !shared(x.t) || sections.length === 1);
    const heavy = list.reduce((n, x) => n + x.w, 0) >= plans[s]!.title.total / 3;
    return sections.length > 1 && heavy ? list.map((x) => x.t) : [];
  });
  const saysDistinct = (p: SourceParagraph, s: number) => distinct[s]!.length === 0 || distinct[s]!.some((t) => says(p, t));
  const candidates = sections.map((_, s) =>
    paragraphs
      .map((p, i) => {
        const own = shares[i]![s]!;
        // Instructions only add: what answers the title alone qualifies whatever they say.
        // A paragraph that (or whose heading) says every word of a specific heading needs no more evidence of being on the piece.
        const whole = !plans[s]!.generic && own >= IN_HEADING - 1e-9;
        if ((own < ON_SECTION && !answersInstructions(p, s)) || (pieceShare(p, s) < ON_PIECE && !whole)) return undefined;
        // Another section's paragraph: it answers that section's own heading clearly better, or says more
        // of the words that set another section apart than of this section's own.
        if (sections.some((_, o) => o !== s && !plans[o]!.generic && shares[i]![o]! >= ON_SECTION && shares[i]![o]! > own + CLEARLY_OTHERS))
          return undefined;
        if (saysMoreOfOthers(p, s) || !saysDistinct(p, s)) return undefined;
        const rank = docRank[s]!.get(p.passage.content_id) ?? sections.length;
        // A generic section ("Overview", "Summary") opens with a document's lead paragraph.
        const lead = plans[s]!.generic && p.chunk === 0 && p.index === 0 ? 0.05 : 0;
        const relevance = 0.5 * own + 0.25 * instructionsShare(p, s) + 0.25 * pieceShare(p, s);
        return { p, score: relevance / (1 + RANK_DECAY * rank) + lead };
      })
      .filter((c) => c !== undefined)
      .sort((a, b) => b.score - a.score || a.p.chunk - b.p.chunk || a.p.index - b.p.index),
  );

  const usable = (x: ParagraphSentence) =>
    x.whole &&
    x.words >= 4 &&
    x.text.length <= 600 &&
    !/\?["'”’)]?$/.test(x.text) &&
    (personAllowed || !authorVoice(x.text)) &&
    !isPointer(x.text) &&
    !isLayoutReference(x.text) &&
    allowed(x.text, guidelines) &&
    allowed(x.quote, guidelines);

  const drafted: ParagraphSentence[] = [];
  const repeats = (x: ParagraphSentence) =>
    drafted.some((d) => normalized(d.text) === normalized(x.text) || jaccard(d.stems, x.stems) >= NEAR_DUPLICATE);
  const perSection = Math.max(30, Math.floor(brief.target_length.max_words / Math.max(1, sections.length)));

  /**
   * A coherent run of a paragraph's sentences: from the first that says a word of the section's
   * query (a long paragraph's opening background is not what answers the section) until two in a
   * row say none; a sentence that refers back only right after the one it follows.
   */
  function runOf(p: SourceParagraph, s: number, room: number, first: boolean): ParagraphSentence[] {
    const query = queryWords[s]!;
    const relevant = p.sentences.map((x) => [...x.stems].some((t) => query.has(t)));
    const from = Math.max(0, relevant.indexOf(true));
    // It ends where two sentences in a row say nothing of the query: the paragraph has moved on.
    let to = p.sentences.length - 1;
    for (let i = from + 1; i + 1 < p.sentences.length; i++)
      if (!relevant[i] && !relevant[i + 1]) {
        to = i - 1;
        break;
      }
    const run: ParagraphSentence[] = [];
    let words = 0;
    let previousTaken = false;
    for (const x of p.sentences.slice(from, to + 1)) {
      const ok = usable(x) && !repeats(x) && (!refersBack(x.text) || previousTaken);
      if (ok && (words + x.words <= room || (first && run.length === 0))) {
        run.push(x);
        drafted.push(x);
        words += x.words;
        previousTaken = true;
      } else {
        previousTaken = false;
        if (ok) break;
      }
    }
    return run;
  }

  const layOut = passageLayout();

  return sections.map((section, s) => {
    const runs: { p: SourceParagraph; sentences: ParagraphSentence[]; score: number }[] = [];
    let words = 0;
    const best = candidates[s]![0]?.score ?? 0;
    const documents = new Set<string>();
    for (const { p, score } of candidates[s]!) {
      if (words >= perSection) break;
      // Another document is drawn on only when it answers the section nearly as well as the best passage.
      if (!documents.has(p.passage.content_id) && documents.size > 0 && score < NEW_DOCUMENT * best) continue;
      const run = runOf(p, s, perSection - words, runs.length === 0);
      if (run.length === 0) continue;
      runs.push({ p, sentences: run, score });
      documents.add(p.passage.content_id);
      words += run.reduce((n, x) => n + x.words, 0);
    }
    const ordered = readingOrder(runs);
    const passages = [...section.passages];
    const indexOf = (p: EvidencePassage) => {
      const at = passages.findIndex((x) => x.chunk_id === p.chunk_id);
      return at >= 0 ? at : passages.push(p) - 1;
    };
    const sentences: DraftedSentence[] = [];
    let paragraph = -1;
    let inParagraph = PARAGRAPH_SENTENCES;
    let previous: SourceParagraph | undefined;
    for (const run of ordered) {
      // A run goes on the paragraph before when it comes from the same document and there is room; else it opens one.
      const follows = previous && run.p.passage.content_id === previous.passage.content_id;
      if (!follows || inParagraph + run.sentences.length > PARAGRAPH_SENTENCES) {
        paragraph++;
        inParagraph = 0;
      }
      run.sentences.forEach((x, k) => {
        // A long run is cut into paragraphs where a sentence stands on its own.
        if (inParagraph >= PARAGRAPH_SENTENCES && !(k > 0 && refersBack(x.text))) {
          paragraph++;
          inParagraph = 0;
        }
        sentences.push({ text: applyPreferredTerms(x.text, guidelines), quote: x.quote, passage: indexOf(run.p.passage), paragraph });
        inParagraph++;
      });
      previous = run.p;
    }
    const cited = new Set(sentences.map((x) => x.passage));
    return {
      section_id: section.section_id,
      title: headingCase(section.spec.title, guidelines),
      passages: passages.map((p, i) => (cited.has(i) ? layOut(p) : p)),
      sentences,
    };
  });
}

/** A term a sentence defines: "`reply.send()` is ...", "Hooks are ...", "A plugin is ...". */
const DEFINES =
  /^(?:(?:an?|the)\s+)?(`[^`]+`|[\p{L}][\p{L}\p{N}-]*(?:\s+[\p{L}][\p{L}\p{N}-]*)?)\s+(?:is|are|refers to|means)\s+(?:an?|the|one|used|called|a\s+set)\b/iu;

/**
 * Runs in the order a reader takes them: documents by their best run, a document's runs in source
 * order; then a run that defines a term moves before the first run that uses it.
 */
function readingOrder<T extends { p: SourceParagraph; sentences: ParagraphSentence[]; score: number }>(runs: T[]): T[] {
  const best = new Map<string, number>();
  for (const r of runs) best.set(r.p.passage.content_id, Math.max(best.get(r.p.passage.content_id) ?? 0, r.score));
  const docs = [...best.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
  const ordered = [...runs].sort(
    (a, b) =>
      docs.indexOf(a.p.passage.content_id) - docs.indexOf(b.p.passage.content_id) ||
      (a.p.chunk || 0) - (b.p.chunk || 0) ||
      a.p.index - b.p.index,
  );
  for (let i = 1; i < ordered.length; i++) {
    const m = DEFINES.exec(ordered[i]!.sentences[0]!.text);
    if (!m) continue;
    const term = m[1]!.replace(/`/g, '').toLowerCase();
    const firstUse = ordered.slice(0, i).findIndex((r) => r.sentences.some((x) => x.text.replace(/`/g, '').toLowerCase().includes(term)));
    if (firstUse >= 0) ordered.splice(firstUse, 0, ...ordered.splice(i, 1));
  }
  return ordered;
}
