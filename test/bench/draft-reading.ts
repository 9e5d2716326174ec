/**
 * An automatic reading of a draft, standing for the editor (issue 44 item 6):
 * each sentence is judged on its own terms (could it be kept as it stands?) and
 * against its section (is it on the section's subject?), and the draft against
 * its content type (sections answered, length).
 */
import { contentStems } from '@kb/search';
import { isCodeLike } from '@kb/ai';
import { authorVoice, isPointer, refersBack } from '@kb/generation/bench';

/**
 * What counts as a fragment or markup residue, each rule a test of one draft sentence (as the
 * draft has it, after verification); a sentence is counted once however many rules it breaks.
 */
export const FRAGMENT_RULES: [string, (s: string) => boolean][] = [
  [
    'does not start with a capital letter or a digit (an opening quote or bracket before it allowed)',
    (s) => !/^["'“‘([`]?[\p{Lu}\p{N}`]/u.test(s),
  ],
  [
    'starts with a word that continues a sentence: and, but, or, nor, yet, which, whose, whom, whereas, plus, e.g., i.e., etc., vs., cf.',
    (s) => /^["'“‘([]?(?:and|but|or|nor|yet|which|whose|whom|whereas|plus|e\.g|i\.e|etc|vs|cf)\b/i.test(s),
  ],
  [
    'starts with a list marker or enumeration: - * • … , ; "1. " "2) " "(b) "',
    (s) => /^(?:[-–—•·*+>|,;:.)\]}]|\.\.\.|…|\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})\)\s|\d{1,3}\.\s)/i.test(s),
  ],
  [
    'does not end on . ! or ? (a closing quote or bracket after it allowed); ends on a colon or an ellipsis',
    (s) => !/[.!?]["'”’)]?$/.test(s) || /(?:\.\.\.|…)["'”’)]?$/.test(s),
  ],
  [
    'ends on an abbreviation the splitter took for an end: e.g. i.e. vs. cf. et al. Fig. Eq. No. Dr. Mr. approx.',
    (s) => /(?:^|[\s(])(?:e\.g|i\.e|vs|cf|al|approx|Fig|Figs|Eq|Ref|No|Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|vol|pp|ca)\.["'”’)]?$/i.test(s),
  ],
  ['brackets ( ) [ ] { } or quotes “ ” " ` do not balance', (s) => !balanced(s)],
  [
    'holds markup: a code fence, ** or __, a Markdown link or image, an HTML tag or entity, a heading or quote marker, a table cell separator " | ", a URL, a callout label such as [!NOTE] (inline code in backticks is a word, not markup)',
    (s) =>
      /```|~~~|\*\*|__|\]\(|\]\[|!\[|\[!\w+\]|<\/?[A-Za-z][\w-]*\s*\/?>|&(?:[a-z]{2,8}|#\d{1,7});|^\s*(?:#{1,6}|>)\s|\s\|\s|(?:https?|ftp):\/\//i.test(
        s.replace(/`[^`]*`/g, '`code`'),
      ),
  ],
  ['is code (isCodeLike of @kb/ai: code syntax, or over ~30% symbols)', (s) => isCodeLike(s)],
  ['has fewer than 3 words', (s) => s.split(/\s+/).filter(Boolean).length < 3],
  [
    'runs two sentences together: a stop, then a lower-case word that starts the next ("... at runtime. abstract-logging is used ...")',
    (s) =>
      /[a-z)`]\.\s+[a-z][\w-]*\s+(?:is|are|was|were|has|have|can|will|must|should|does)\b/.test(
        s.replace(/\b(?:e\.g|i\.e|etc|vs|cf)\./gi, ''),
      ),
  ],
];
function balanced(s: string): boolean {
  const open: string[] = [];
  for (const ch of s) {
    if ('([{'.includes(ch)) open.push(ch);
    else if (')]}'.includes(ch) && open.pop() !== '([{'[')]}'.indexOf(ch)]) return false;
  }
  const n = (c: string) => s.split(c).length - 1;
  return open.length === 0 && n('“') === n('”') && n('"') % 2 === 0 && n('`') % 2 === 0;
}
export const isFragment = (s: string) => FRAGMENT_RULES.some(([, test]) => test(s.trim()));

export type Flaw = 'fragment or markup' | 'dangling reference' | 'pointer' | 'author voice';
export const FLAWS: Flaw[] = ['fragment or markup', 'dangling reference', 'pointer', 'author voice'];

export interface ReadSentence {
  text: string;
  paragraph?: number | undefined;
  /** The source sentence it was drafted from and the chunk text holding it (to judge a reference back). */
  source?: { quote: string; chunkText: string } | undefined;
  /** The headings the cited chunk sits under and its document's title. */
  context?: string | undefined;
  /** The chunk it cites (when the source sentence is not known: a reference back then needs its predecessor to cite the same chunk). */
  chunk?: string | undefined;
}

/** Heading words that name a kind of section rather than a subject (read as the piece's subject). */
const GENERIC = new Set(
  contentStems('overview introduction summary background conclusion basics details notes general key points works about'),
);

/**
 * The flaws of each sentence of one section, in order. A reference back ("This ...", "It ...",
 * "However, ...") dangles unless the sentence before it in the same paragraph of the draft is the
 * one right before it in its source.
 */
export function flawsOf(sentences: ReadSentence[]): Flaw[][] {
  return sentences.map((s, i) => {
    const flaws: Flaw[] = [];
    if (isFragment(s.text)) flaws.push('fragment or markup');
    if (isPointer(s.text)) flaws.push('pointer');
    if (authorVoice(s.text)) flaws.push('author voice');
    if (refersBack(s.text)) {
      const prev = sentences[i - 1];
      const adjacent =
        prev !== undefined &&
        prev.paragraph === s.paragraph &&
        (s.source !== undefined && prev.source !== undefined
          ? // A section label the drafter took off in between ("... co-morbidities. METHODS This was ...") keeps them adjacent.
            new RegExp(`${escape(prev.source.quote)}\\s*(?:\\p{Lu}[\\p{Lu}\\s&/-]{2,60}:?\\s+)?${escape(s.source.quote)}`, 'u').test(
              s.source.chunkText,
            )
          : s.chunk !== undefined && prev.chunk === s.chunk);
      if (!adjacent) flaws.push('dangling reference');
    }
    return flaws;
  });
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');

/**
 * Whether a sentence is on its own section's subject, judged by words: the sentence, or the
 * headings and title of the chunk it cites, says a content word of the section's title or
 * instructions (for a title that only names a kind of section, "Overview", "Summary", a word of
 * the piece's subject), and says no more of another section's own words than of its own.
 */
export function onSubject(
  sentence: ReadSentence,
  section: { title: string; instructions?: string | undefined },
  others: { title: string; instructions?: string | undefined }[],
  subject: string,
): boolean {
  const said = new Set(contentStems(`${sentence.text} ${sentence.context ?? ''}`));
  const ownOf = (s: { title: string; instructions?: string | undefined }) => {
    const title = contentStems(s.title).filter((t) => !GENERIC.has(t));
    return new Set(title.length ? [...title, ...contentStems(s.instructions ?? '')] : contentStems(`${subject} ${s.instructions ?? ''}`));
  };
  const own = ownOf(section);
  const hits = [...own].filter((t) => said.has(t)).length;
  if (hits === 0) return false;
  return others.every((o) => [...ownOf(o)].filter((t) => !own.has(t) && said.has(t)).length <= hits);
}

export const wordCount = (texts: string[]) => texts.reduce((n, t) => n + t.split(/\s+/).filter(Boolean).length, 0);
