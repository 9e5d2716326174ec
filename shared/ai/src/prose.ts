/**
 * Prose and code in a chunk's text: ingest writes a source's code blocks as fenced
 * blocks ("```" line, the code, "```" line) and its prose without markup, inline code kept in
 * backticks. What shows or compares sentences (answers, composers, the fact checker, quotes)
 * takes them only from the prose, and never quotes a "sentence" that is really code or markup.
 */

export interface ProseRange {
  /** UTF-16 offset of the first character. */
  start: number;
  /** UTF-16 offset just after the last character (exclusive). */
  end: number;
}

/** An opening fence line: three or more backticks (no backtick in the info string after them) or tildes, indented at most three spaces. */
const OPENING_FENCE = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})/;

/**
 * The parts of a text that are prose: everything except fenced code blocks, i.e. a fence line
 * (``` or ~~~, indented at most three spaces), everything after it and the closing fence line
 * (the same character, at least as many, nothing else on the line); an unclosed fence runs to
 * the end. Ranges are UTF-16 offsets into `text`, end exclusive, ascending and non-overlapping;
 * ranges of only whitespace (such as the line break between two code blocks) are left out.
 */
export function proseRanges(text: string): ProseRange[] {
  const ranges: ProseRange[] = [];
  const add = (start: number, end: number) => {
    if (end > start && /\S/.test(text.slice(start, end))) ranges.push({ start, end });
  };
  let proseStart = 0;
  /** The opening fence while inside a code block: its character and length. */
  let fence: { char: string; length: number } | undefined;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline < 0 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    if (!fence) {
      const open = OPENING_FENCE.exec(line);
      if (open) {
        add(proseStart, lineStart);
        fence = { char: open[1]![0]!, length: open[1]!.length };
      }
    } else {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) {
        fence = undefined;
        proseStart = lineEnd;
      }
    }
    if (newline < 0) break;
    lineStart = newline + 1;
  }
  if (!fence) add(proseStart, text.length);
  return ranges;
}

// ---------------------------------------------------------------------------------------------
// Inline markup

/** HTML elements whose bare tag (no attributes: "<br>", "<sup>") is markup, not a placeholder such as "<path>" or "Array<string>". */
const HTML_TAGS = new Set(
  (
    'a abbr b big blockquote br center cite code dd del details dfn div dl dt em figcaption figure font h1 h2 h3 h4 h5 h6 hr i img ' +
    'ins kbd li mark ol p picture pre q s samp small span strike strong sub summary sup table tbody td tfoot th thead tr tt u ul var wbr'
  ).split(' '),
);
/** Elements that separate what is around them (a space is left), others join (nothing is left). */
const BLOCK_TAGS = new Set(
  'blockquote br center dd details div dl dt figcaption figure h1 h2 h3 h4 h5 h6 hr li ol p pre summary table tbody td tfoot th thead tr ul'.split(
    ' ',
  ),
);
const TAG =
  /<(\/?)([A-Za-z][A-Za-z0-9-]{0,30})((?:\s+[A-Za-z_:][\w:.-]{0,60}(?:\s*=\s*(?:"[^"]{0,2000}"|'[^']{0,2000}'|[^\s"'=<>`]{1,2000}))?){0,50})\s*(\/?)>/g;

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  middot: '·',
  bull: '•',
  times: '×',
  divide: '÷',
  deg: '°',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  sect: '§',
  para: '¶',
  shy: '',
  zwj: '',
  zwnj: '',
  larr: '←',
  rarr: '→',
  uarr: '↑',
  darr: '↓',
  check: '✓',
};
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z]{2,8}));/g;

/**
 * HTML tags removed, their text kept: a closing tag, a tag with attributes (name="value") or a
 * bare tag of a known HTML element; "<path>" or "Array<string>" is text. An image reads as its alt text.
 */
function stripTags(text: string): string {
  return text.replace(TAG, (whole, closing: string, name: string, attributes: string) => {
    const tag = name.toLowerCase();
    const bare = attributes.trim() === '' || /^\s*(?:open|hidden)\s*$/i.test(attributes);
    if (!closing && !(attributes.includes('=') || (bare && HTML_TAGS.has(tag)))) return whole;
    if (tag === 'img' && !closing) {
      const alt = /\salt\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(attributes);
      return alt ? ` ${alt[1] ?? alt[2]} ` : ' ';
    }
    return BLOCK_TAGS.has(tag) ? ' ' : '';
  });
}

/** Decodes HTML character references (the common named ones and all numeric ones); unknown names stay as written. */
function decodeEntities(text: string): string {
  return text.replace(ENTITY, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return ENTITIES[name] ?? whole;
    const code = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/** The URL part of an inline link or image: "<any>", or no spaces with balanced parentheses one deep, then an optional title. */
// Lengths are bounded so that a long run of text without the closing bracket costs little.
const LINK_TARGET = String.raw`\(\s*(?:<[^<>\n]{0,2000}>|(?:[^()\s]|\([^()\s]{0,500}\)){0,2000})(?:\s+(?:"[^"\n]{0,500}"|'[^'\n]{0,500}'|\([^()\n]{0,500}\)))?\s*\)`;
const LINK_TEXT = String.raw`((?:[^[\]\n]|\[[^[\]\n]{0,500}\]){0,1000})`;
const IMAGE = new RegExp(String.raw`!\[${LINK_TEXT}\](?:${LINK_TARGET}|\[[^[\]\n]{0,500}\])`, 'g');
const LINK = new RegExp(String.raw`\[${LINK_TEXT}\]${LINK_TARGET}`, 'g');
/** "[text][label]" or "[text][]"; a text of only numbers (citation markers "[1][2]") is not a link. */
const REFERENCE_LINK = new RegExp(String.raw`\[(?=[^\]\n]{0,1000}?[^\d\s,\-–[\]])${LINK_TEXT}\]\[([^[\]\n]{0,500})\]`, 'g');
const AUTOLINK = /<((?:https?|ftp):\/\/[^\s<>]+|mailto:[^\s<>]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>/g;
const BARE_URL = /\b(?:https?|ftp):\/\/[^\s<>()[\]`"]+/g;

/** The first of the ascending positions at or after `from`. */
function nextRun(positions: number[] | undefined, from: number): number | undefined {
  if (!positions) return undefined;
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (positions[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return positions[lo];
}

/** Private-use characters mark what the cleaning must not touch (code spans, escapes, URLs) while it runs. */
const HOLD_OPEN = '\uE000';
const HOLD_CLOSE = '\uE001';
const HOLD = /\uE000(\d+)\uE001/g;

interface InlineOptions {
  /** Labels of the document's reference-link definitions (lower case): "[text]" alone is a link to one of them. */
  referenceLabels?: ReadonlySet<string>;
  /** Inline code written in backticks (default, so it stays code) or as its bare text (headings). */
  code?: 'backticks' | 'bare';
}

/**
 * The inline cleaning of one paragraph (or line) of Markdown or HTML-bearing prose; see
 * stripInlineMarkup. Newlines in the text are kept.
 */
function cleanInline(input: string, options: InlineOptions = {}): string {
  const held: string[] = [];
  const hold = (text: string) => `${HOLD_OPEN}${held.push(text) - 1}${HOLD_CLOSE}`;
  const codeSpan = (content: string) => {
    const inner = content.replace(/\s+/g, ' ').trim();
    if (!inner) return '';
    if (options.code === 'bare') return hold(inner);
    return hold(inner.includes('`') ? `\`\` ${inner} \`\`` : `\`${inner}\``);
  };

  let text = input.replace(/[\uE000\uE001]/g, '');
  // HTML code elements are inline code.
  text = text.replace(/<code(?:\s[^<>]*)?>([\s\S]*?)<\/code>/gi, (_, inner: string) => codeSpan(decodeEntities(stripTags(inner))));
  // Code spans (a run of backticks up to the next run of the same length) and backslash escapes.
  const runs = new Map<number, number[]>();
  for (const m of text.matchAll(/`+/g)) {
    const list = runs.get(m[0].length) ?? [];
    list.push(m.index);
    runs.set(m[0].length, list);
  }
  let out = '';
  for (let i = 0; i < text.length;) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      out += hold(text[i + 1]!);
      i += 2;
    } else if (ch === '`') {
      let run = 1;
      while (text[i + run] === '`') run++;
      const close = nextRun(runs.get(run), i + run);
      if (close !== undefined) {
        out += codeSpan(text.slice(i + run, close));
        i = close + run;
      } else {
        out += text.slice(i, i + run);
        i += run;
      }
    } else {
      out += ch;
      i++;
    }
  }
  text = out;

  // Links and images read as their text; an image inside a link goes first.
  for (let pass = 0; pass < 3; pass++) {
    const before = text;
    text = text
      .replace(IMAGE, (_, alt: string) => alt.trim())
      .replace(LINK, (_, label: string) => label)
      .replace(REFERENCE_LINK, (_, label: string) => label);
    if (text === before) break;
  }
  if (options.referenceLabels && options.referenceLabels.size > 0) {
    const labels = options.referenceLabels;
    text = text.replace(/\[([^[\]\n]+)\](?![([:])/g, (whole, label: string) => (labels.has(normalizeLabel(label)) ? label : whole));
  }
  // HTML: comments, scripts and styles go with their content, tags go and leave their text. URLs
  // are kept as written (an underscore in one is not emphasis).
  text = text
    .replace(/<!--[\s\S]*?(?:-->|$)/g, ' ')
    .replace(/<(script|style)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)/gi, ' ')
    .replace(AUTOLINK, (_, url: string) => hold(url));
  text = stripTags(text).replace(BARE_URL, (url) => hold(url));

  // Emphasis and strikethrough read as their text; "a * b", "2*3" and snake_case are not emphasis.
  text = text
    .replace(/(?<![*\\])\*\*\*(?=[^\s*])([^\n]{0,500}?[^\s*])\*\*\*(?!\*)/g, '$1')
    .replace(/(?<![*\\])\*\*(?=[^\s*])([^\n]{0,500}?[^\s*])\*\*(?!\*)/g, '$1')
    .replace(/(?<![*\\\p{L}\p{N}])\*(?=[^\s*])([^*\n]{0,500}?[^\s*])\*(?![*\p{L}\p{N}])/gu, '$1')
    .replace(/(?<![\p{L}\p{N}_\\])___(?=[^\s_])([^\n]{0,500}?[^\s_])___(?![\p{L}\p{N}_])/gu, '$1')
    .replace(/(?<![\p{L}\p{N}_\\])__(?=[^\s_])([^\n]{0,500}?[^\s_])__(?![\p{L}\p{N}_])/gu, '$1')
    .replace(/(?<![\p{L}\p{N}_\\])_(?=[^\s_])([^_\n]{0,500}?[^\s_])_(?![\p{L}\p{N}_])/gu, '$1')
    .replace(/(?<!~)~~(?=[^\s~])([^\n]{0,500}?[^\s~])~~(?!~)/g, '$1');

  text = decodeEntities(text);
  // What was held goes back (a held text never holds another).
  return text.replace(HOLD, (_, n: string) => held[Number(n)] ?? '');
}

const normalizeLabel = (label: string) => label.replace(/\s+/g, ' ').trim().toLowerCase();

/** A reference-link definition line: "[label]: url" or '[label]: <url> "title"'. */
const REFERENCE_DEFINITION = /^ {0,3}\[([^[\]\n]+)\]:[ \t]*(?:<[^<>\n]*>|\S+)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$/;

/**
 * Markdown and HTML inline markup removed from text that arrives with it (a last line of
 * defence; ingest already writes clean text): [text](url) and [text][ref] read as their text,
 * an image as its alt text, an autolink <https://x> as its URL, **x** *x* __x__ _x_ ~~x~~ as x
 * (not "a * b", "2*3" or snake_case), HTML tags go (their text stays; scripts, styles and comments
 * go whole), character references are decoded, reference-link definition lines and blockquote
 * markers go. Inline code keeps its backticks (`x`), and fenced code blocks are left exactly as
 * they are. Line breaks are kept; citation markers such as [1] or [1][2] are not links.
 */
export function stripInlineMarkup(text: string): string {
  let out = '';
  let at = 0;
  for (const range of proseRanges(text)) {
    out += text.slice(at, range.start) + stripProse(text.slice(range.start, range.end));
    at = range.end;
  }
  return out + text.slice(at);
}

function stripProse(prose: string): string {
  const lines = prose.split('\n');
  const labels = new Set<string>();
  const kept: string[] = [];
  for (const line of lines) {
    const definition = REFERENCE_DEFINITION.exec(line);
    if (definition) {
      labels.add(normalizeLabel(definition[1]!));
      continue;
    }
    kept.push(line.replace(/^(?: {0,3}> ?)+/, ''));
  }
  const cleaned = cleanInline(kept.join('\n'), labels.size > 0 ? { referenceLabels: labels } : {});
  // Removing markup can leave runs of spaces inside a line (not its indentation).
  return cleaned
    .split('\n')
    .map((line) => line.trimEnd().replace(/(?<=\S)[ \t]{2,}(?=\S)/g, ' '))
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Code-like sentences

/** Backticked spans (inline code): words of a sentence, not a reason to call it code. */
const CODE_SPAN = /(`+)(?!`)[\s\S]*?[^`]\1(?!`)|``/g;
const CITATION = /\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]/g;
/** Characters that prose rarely has and code often does (letters, digits and ordinary punctuation are not among them). */
const CODE_SYMBOL = /[{}[\]<>=;|\\^~$#@*+&_/`]/g;
/** What only code or markup has, in a sentence whose inline code is already left out. */
const CODE_PATTERNS = [
  /=>/,
  /^(?:\/\/|\/\*|#!|<\?)/,
  /(?:^|\s)\/\/\s/,
  /\{[^{}]*(?:;|\(\)|\w\(|:\s*['"\d{[]|=)[^{}]*\}/,
  /\{\s*$|^\s*\}/,
  /\]\(|!\[/,
  /^\[[^\]]+\]:\s*\S/,
  /<\/[A-Za-z][\w-]*\s*>/,
  /<[A-Za-z][\w-]*\s+[\w:.-]+\s*=\s*["'{]/,
  /<(?:a|br|hr|img|div|span|p|sup|sub|b|i|em|strong|code|pre|table|tr|td|li|ul|ol)\s*\/?>/i,
  /&(?:[a-z]{2,8}|#\d{1,7}|#x[0-9a-f]{1,6});/i,
  /^(?:const|let|var)\s+[\w$]+\s*=|^(?:export\s+)?(?:async\s+)?function\s*[\w$]*\s*\(|^import\s.+\sfrom\s+['"]|\brequire\(\s*['"]|\bconsole\.\w+\(/,
  /\)\s*;\s*(?:$|\}|[\w$.]+\()/,
  /^\$ \w/,
];

/**
 * Whether a "sentence" is really code or markup residue and must not be quoted as prose: it
 * holds a code fence, an arrow function (=>), braces with code inside ({ ...; }, { f() }, { a: 1 }),
 * a line comment, a Markdown link or image, a reference-link definition, an HTML tag or character
 * reference, a declaration or call that only code has (const x =, import ... from '...',
 * require(...), console.log(...)); it is only a URL, or only inline code; or symbols other than
 * letters, digits and ordinary punctuation make up over ~30% of it, or it has no word at all
 * but such symbols. Backticked spans count as
 * words (their content is not inspected) and citation markers [n] are ignored, so ordinary prose
 * with a `backticked` identifier, a number, a percentage or a parenthesis is not code-like.
 */
export function isCodeLike(sentence: string): boolean {
  const raw = sentence.trim();
  if (!raw) return false;
  if (/^(?:`{3,}|~{3,})|\n\s*(?:`{3,}|~{3,})/.test(raw)) return true;
  // Inline code is a word of its own (the private-use character), whatever it holds.
  const text = raw.replace(CODE_SPAN, ' \uE002 ').replace(CITATION, ' ').trim();
  // No word at all: inline code alone or symbols are code; a number alone ("2020.") is not.
  if (!/\p{L}/u.test(text)) return text.includes('\uE002') || /[{}[\]<>=;|\\^~$#@*+&_/`]/.test(text);
  // A URL alone (possibly in <> or with end punctuation).
  if (/^<?(?:(?:https?|ftp):\/\/|www\.)\S+?>?[.,;:!?]?$/i.test(text)) return true;
  if (CODE_PATTERNS.some((p) => p.test(text))) return true;
  const visible = text.replace(/\s+/g, '');
  const symbols = visible.match(CODE_SYMBOL)?.length ?? 0;
  return visible.length >= 6 && symbols / visible.length > 0.3;
}
