import type { Block } from '../types.js';

const paragraphs = (text: string): string[] =>
  text
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length > 0);

/** Plain text: paragraphs are separated by blank lines. */
export function extractPlainText(text: string): Block[] {
  return paragraphs(text).map((p) => ({ kind: 'paragraph', text: p }));
}

// ---------------------------------------------------------------------------------------------
// Inline markup (the same cleaning as stripInlineMarkup in @kb/ai, which ingest does not depend on)

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

const normalizeLabel = (label: string) => label.replace(/\s+/g, ' ').trim().toLowerCase();

interface InlineOptions {
  /** Labels of the document's reference-link definitions (lower case): "[text]" alone is a link to one of them. */
  referenceLabels?: ReadonlySet<string>;
  /** Inline code written in backticks (default, so it stays code) or as its bare text (headings). */
  code?: 'backticks' | 'bare';
}

/**
 * Markdown inline markup removed from one paragraph: [text](url) and [text][ref] read as their
 * text (and [text] alone when ref is a defined label), an image as its alt text, an autolink
 * <https://x> as its URL, **x** *x* __x__ _x_ ~~x~~ as x (not "a * b", "2*3" or snake_case), HTML
 * tags go (their text stays; comments, scripts and styles go whole), character references are
 * decoded and backslash escapes read as the character. Inline code stays in backticks (`x`), its
 * content untouched, or reads as its bare text (headings). Whitespace is collapsed.
 */
export function cleanInline(input: string, options: InlineOptions = {}): string {
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
  const labels = options.referenceLabels;
  if (labels && labels.size > 0) {
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
  return text
    .replace(HOLD, (_, n: string) => held[Number(n)] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

// ---------------------------------------------------------------------------------------------
// Markdown blocks

/** A thematic break ("---", "***", "_ _ _"): it ends a paragraph and is no text. */
const RULE = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;
/** A list item's line: "- item", "* item", "+ item", "1. item", "1) item" (its text in group 1, a task box "[ ] " left out). */
const LIST_ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$/;
/** An opening code fence: three or more backticks (no backtick in the info string) or tildes. */
const FENCE = /^(\s*)(`{3,}(?=[^`]*$)|~{3,})/;
const ATX_HEADING = /^\s{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^\s{0,3}(=+|-+)\s*$/;
/** A table's delimiter row: "|---|:--:|", "--- | ---". */
const DELIMITER_ROW = /^\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?$/;
const isDelimiterRow = (line: string) => line.includes('|') && DELIMITER_ROW.test(line.trim());
/** A line with a pipe at both ends ("| a | b |"). */
const isPipedRow = (line: string) => {
  const t = line.trim();
  return t.length > 1 && t.startsWith('|') && t.endsWith('|');
};
/** A reference-link definition: "[label]: url" or '[label]: <url> "title"'. */
const REFERENCE_DEFINITION = /^ {0,3}\[([^[\]]+)\]:[ \t]*(?:<[^<>]*>|\S+)(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*$/;
/** A line opening or closing an HTML block element: what is on it is a paragraph of its own. */
const HTML_BLOCK_LINE =
  /^\s{0,3}<\/?(?:address|article|aside|blockquote|center|details|dialog|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|header|hr|li|main|nav|ol|p|picture|section|summary|table|tbody|td|tfoot|th|thead|tr|ul)(?:[\s/>]|$)/i;
const HTML_HEADING = /^\s{0,3}<h([1-6])\b[^>]*>(.*?)<\/h\1\s*>\s*$/i;
/** Blockquote markers at a line's start ("> ", ">> "). */
const QUOTE = /^(?:\s{0,3}>[ \t]?)+/;

/** The width of a line's indentation (a tab to the next multiple of four). */
function indentOf(line: string): number {
  let width = 0;
  for (const ch of line) {
    if (ch === ' ') width++;
    else if (ch === '\t') width += 4 - (width % 4);
    else break;
  }
  return width;
}

/** A line without up to `width` columns of indentation. */
function dedent(line: string, width: number): string {
  let i = 0;
  let col = 0;
  while (i < line.length && col < width && (line[i] === ' ' || line[i] === '\t')) {
    col += line[i] === '\t' ? 4 - (col % 4) : 1;
    i++;
  }
  return line.slice(i);
}

/** Whether indented lines read as code (punctuation prose rarely has), not as an indented paragraph. */
const looksLikeCode = (lines: string[]) =>
  lines.some(
    (l) =>
      /[{};=<>]|=>|\(\)|^\s*(?:\/\/|#|\$ |\/\*)|^\s*[\w$.]+\(.*\)\s*$/.test(l) ||
      /^\s*(?:const|let|var|function|import|return|def|class)\b/.test(l),
  );

/** The lines of a code block: no trailing spaces, no blank lines at either end, at least one with text. */
function codeText(lines: string[]): string {
  const trimmed = lines.map((l) => l.replace(/\s+$/, ''));
  while (trimmed.length > 0 && trimmed[0] === '') trimmed.shift();
  while (trimmed.length > 0 && trimmed.at(-1) === '') trimmed.pop();
  return trimmed.join('\n');
}

/** Splits a table row into its cells (a pipe escaped as "\|" or inside inline code is no cell boundary). */
function tableCells(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  const cells: string[] = [];
  let cell = '';
  let code = 0;
  for (let i = 0; i < row.length; i++) {
    const ch = row[i]!;
    if (ch === '\\' && row[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (ch === '`') {
      code = code > 0 ? 0 : 1;
      cell += ch;
    } else if (ch === '|' && code === 0) {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

/** Front matter ("---" lines around YAML at the very start) is metadata, not text. */
function withoutFrontMatter(lines: string[]): string[] {
  if (lines[0]?.trim() !== '---') return lines;
  const end = lines.findIndex((l, i) => i > 0 && /^(?:---|\.\.\.)\s*$/.test(l));
  if (end < 0 || !lines.slice(1, end).some((l) => /^[\w-]+\s*:/.test(l))) return lines;
  return lines.slice(end + 1);
}

/** The labels of a document's reference-link definitions (outside code fences), in lower case. */
function referenceLabels(lines: string[]): Set<string> {
  const labels = new Set<string>();
  let fence: string | undefined;
  for (const line of lines) {
    const open = FENCE.exec(line);
    if (fence) {
      if (open && open[2]![0] === fence[0] && open[2]!.length >= fence.length && line.trim() === open[2]) fence = undefined;
    } else if (open) fence = open[2];
    else {
      const definition = REFERENCE_DEFINITION.exec(line.replace(QUOTE, ''));
      if (definition) labels.add(normalizeLabel(definition[1]!));
    }
  }
  return labels;
}

/**
 * Markdown (raw text intake) into clean blocks: ATX and setext headings open sections (their text
 * without markup, inline code as its bare text), blank lines end paragraphs, table lines are rows
 * (with or without outer pipes), each list item is a paragraph of its own without its marker (as
 * an HTML or DOCX list item is), its continuation lines with it, and a thematic break only ends a
 * paragraph. Fenced code blocks (``` and ~~~), indented code blocks that read as code and <pre>
 * blocks are code blocks with their lines kept. In prose, links read as their text, HTML tags,
 * comments, reference-link definitions, blockquote markers and front matter go, and inline code
 * stays in backticks (see cleanInline).
 */
export function extractMarkdown(text: string): Block[] {
  const lines = withoutFrontMatter(text.split(/\r?\n/));
  const labels = referenceLabels(lines);
  const inline = labels.size > 0 ? { referenceLabels: labels } : {};
  const blocks: Block[] = [];
  let buffer: string[] = [];
  /** Whether the open paragraph is a list item (a setext underline does not make it a heading). */
  let bufferIsItem = false;
  /** Inside a list: indented lines continue its items (they are not code). */
  let inList = false;
  /** Whether the previous line was in a blockquote (entering or leaving one ends a paragraph). */
  let quoted = false;

  const flush = () => {
    const p = cleanInline(buffer.join(' '), inline);
    if (p) blocks.push({ kind: 'paragraph', text: p });
    buffer = [];
    bufferIsItem = false;
  };
  const heading = (level: number, raw: string) => {
    const clean = cleanInline(raw.replace(/\s*\{#[\w-]+\}\s*$/, ''), { ...inline, code: 'bare' });
    if (clean) blocks.push({ kind: 'heading', level, text: clean });
    inList = false;
  };
  const code = (codeLines: string[]) => {
    const body = codeText(codeLines);
    if (body) blocks.push({ kind: 'code', text: body });
  };

  for (let i = 0; i < lines.length; i++) {
    const original = lines[i]!;
    const inQuote = QUOTE.test(original);
    const line = inQuote ? original.replace(QUOTE, '') : original;
    if (inQuote !== quoted) {
      flush();
      quoted = inQuote;
    }
    const unquote = (l: string) => (inQuote ? l.replace(QUOTE, '') : l);

    // Fenced code: up to the closing fence (the same character, at least as many), or the end.
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[2]!;
      const indent = indentOf(fence[1]!);
      const body: string[] = [];
      for (i++; i < lines.length; i++) {
        const inner = unquote(lines[i]!);
        const close = /^\s*(`{3,}|~{3,})\s*$/.exec(inner);
        if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length) break;
        body.push(dedent(inner, indent));
      }
      code(body);
      continue;
    }
    // HTML comments, scripts and styles, over as many lines as they take.
    if (/^\s{0,3}<!--/.test(line) && !line.includes('-->')) {
      let after = '';
      for (i++; i < lines.length; i++) {
        const end = lines[i]!.indexOf('-->');
        if (end >= 0) {
          after = lines[i]!.slice(end + 3);
          break;
        }
      }
      if (after.trim()) buffer.push(after);
      continue;
    }
    const element = /^\s{0,3}<(script|style|pre)\b[^>]*>/i.exec(line);
    if (element) {
      flush();
      const name = element[1]!.toLowerCase();
      const closing = new RegExp(`</${name}\\s*>`, 'i');
      const body: string[] = [line.slice(element.index + element[0].length)];
      if (!closing.test(body[0]!)) {
        for (i++; i < lines.length; i++) {
          body.push(unquote(lines[i]!));
          if (closing.test(lines[i]!)) break;
        }
      }
      const last = body.length - 1;
      body[last] = body[last]!.replace(new RegExp(`</${name}\\s*>[\\s\\S]*$`, 'i'), '');
      if (name === 'pre') code(body.map((l) => decodeEntities(stripTags(l))));
      continue;
    }

    if (line.trim() === '') {
      flush();
      continue;
    }
    const indent = indentOf(line);
    // Indented code: only where a paragraph cannot continue, outside lists, and only when it reads as code.
    if (indent >= 4 && buffer.length === 0 && !inList) {
      let end = i;
      while (end + 1 < lines.length && (indentOf(unquote(lines[end + 1]!)) >= 4 || unquote(lines[end + 1]!).trim() === '')) end++;
      const body = lines.slice(i, end + 1).map((l) => dedent(unquote(l), 4));
      if (looksLikeCode(body)) {
        code(body);
        i = end;
        continue;
      }
    }
    if (indent === 0 && inList && buffer.length === 0 && !LIST_ITEM.test(line)) inList = false;

    const atx = ATX_HEADING.exec(line);
    const htmlHeading = HTML_HEADING.exec(line);
    const setext = SETEXT_UNDERLINE.exec(line);
    if (atx) {
      flush();
      heading(atx[1]!.length, atx[2] ?? '');
    } else if (htmlHeading) {
      flush();
      heading(Number(htmlHeading[1]), htmlHeading[2]!);
    } else if (setext && buffer.length > 0 && !bufferIsItem) {
      const title = buffer.join(' ');
      buffer = [];
      heading(setext[1]![0] === '=' ? 1 : 2, title);
    } else if (RULE.test(line)) {
      flush();
    } else if (isPipedRow(line) || (line.includes('|') && isDelimiterRow(lines[i + 1] ?? ''))) {
      // A table: its header row, then the rows up to a line without a pipe.
      flush();
      for (; i < lines.length; i++) {
        const row = unquote(lines[i]!);
        if (!row.includes('|') || row.trim() === '') {
          i--;
          break;
        }
        if (isDelimiterRow(row)) continue;
        const cells = tableCells(row).map((c) => cleanInline(c, inline));
        if (cells.some((c) => c.length > 0)) blocks.push({ kind: 'row', text: cells.join(' | ') });
      }
    } else if (REFERENCE_DEFINITION.test(line)) {
      // A link's target: not text.
    } else if (HTML_BLOCK_LINE.test(line)) {
      // An HTML block element's line ("<div align=center>", "<details>", "<summary>Title</summary>"): a paragraph of its own, if it has text.
      flush();
      buffer.push(line);
      flush();
    } else {
      const item = LIST_ITEM.exec(line);
      if (item && (indent <= 3 || inList)) {
        flush();
        inList = true;
        bufferIsItem = true;
        buffer.push(item[1]!);
      } else {
        buffer.push(line.replace(/\\$/, ''));
      }
    }
  }
  flush();
  return blocks;
}
