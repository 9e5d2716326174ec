/**
 * Sentence spans with offsets and the [n] citation markers a sentence carries.
 * Offsets are UTF-16 code units into the original text, end exclusive, so a
 * caller can highlight `text.slice(start, end)`.
 */

export interface SentenceSpan {
  /** Exactly `source.slice(start, end)`: the sentence with its markers. */
  text: string;
  start: number;
  end: number;
  /** The sentence with its [n] markers removed and whitespace collapsed: what gets checked. */
  claim: string;
  /** 1-based source numbers of its [n] / [n, m] / [n-m] markers, in order, distinct. */
  cited: number[];
}

// Abbreviations whose period does not end a sentence.
const ABBREVIATIONS = new Set(
  (
    'e.g i.e et al etc vs cf fig figs eq eqs ref refs no nos approx ca dr mr mrs ms prof st sr jr inc ltd co corp dept ' +
    'jan feb mar apr jun jul aug sep sept oct nov dec mt vol pp ed eds resp min max'
  ).split(' '),
);

const MARKER = /\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]/g;

/** The 1-based numbers a marker like [2], [1, 3] or [2-4] names. */
function markerNumbers(marker: string): number[] {
  const out: number[] = [];
  for (const part of marker.slice(1, -1).split(',')) {
    const [a, b] = part.split(/[-–]/).map((x) => Number(x.trim()));
    if (a === undefined || !Number.isFinite(a)) continue;
    if (b !== undefined && Number.isFinite(b) && b >= a && b - a < 50) for (let n = a; n <= b; n++) out.push(n);
    else out.push(a);
  }
  return out;
}

/** Whether the period at `i` ends an abbreviation or an initial ("J. Smith"). */
function isAbbreviation(text: string, i: number): boolean {
  const before = /([\p{L}.]+)$/u.exec(text.slice(Math.max(0, i - 12), i))?.[1] ?? '';
  if (before.length === 0) return /(?:^|\n)[ \t]*\d+$/.test(text.slice(Math.max(0, i - 8), i));
  const word = before.toLowerCase().replace(/^\.+/, '');
  if (ABBREVIATIONS.has(word)) return true;
  // A single capital letter ("J.") or dotted initials ("U.S").
  return /^\p{Lu}$/u.test(before) || /^(?:\p{L}\.)+\p{L}$/u.test(before);
}

// Words a line broken mid-sentence ends with (a heading never does).
const CONTINUES =
  /(?:^|\s)(?:a|an|the|and|or|but|nor|of|to|in|on|at|by|for|with|from|as|that|which|is|are|was|were|be|its|their|this|these|than|if|when|via|per)\s*$/i;

/**
 * Whether the line ending at `end` is a heading without end punctuation
 * ("Request ID Tracking" above its first paragraph): short, not ending as a
 * sentence or a clause does, not ending with a word a sentence goes on
 * after, and starting a block (the text's start or after a finished line).
 */
export function isHeadingLine(line: string, source: string, end: number): boolean {
  const text = line.trim();
  if (!text || (/[.!?:;,…"'”’)\]]$/.test(text) && !text.endsWith('`'))) return false;
  if (text.split(/\s+/).length > 12 || CONTINUES.test(text) || /[.!?]\s/.test(text)) return false;
  const before = source.slice(0, end - line.length);
  const previous = before.replace(/\s+$/, '');
  if (previous === '' || /\n[ \t]*\n\s*$/.test(before)) return true;
  // After a finished sentence, or after another short line (a heading under a heading).
  const last = previous.slice(previous.lastIndexOf('\n') + 1);
  return /[.!?:"'”’)\]`]$/.test(previous) || isHeadingLine(last, source, previous.length);
}

/**
 * Splits text into sentence spans. A sentence ends at . ! ? (or a line break
 * between blocks, or after a heading's line, with or without a "#") followed by
 * whitespace and a capital, digit, quote or bracket;
 * [n] markers right after the punctuation belong to the sentence they follow.
 */
export function sentenceSpans(source: string): SentenceSpan[] {
  const spans: SentenceSpan[] = [];
  let start = 0;
  const push = (end: number) => {
    let s = start;
    while (s < end && /\s/.test(source[s]!)) s++;
    let e = end;
    while (e > s && /\s/.test(source[e - 1]!)) e--;
    if (e > s) {
      const text = source.slice(s, e);
      const cited = [...new Set([...text.matchAll(MARKER)].flatMap((m) => markerNumbers(m[0])))];
      const claim = text
        .replace(MARKER, ' ')
        .replace(/^\s*(?:[-*•]|\d+[.)]|#+)\s+/, '')
        .replace(/\s+([.,;:!?])/g, '$1')
        .replace(/\s+/g, ' ')
        .trim();
      if (/[\p{L}\p{N}]/u.test(text)) spans.push({ text, start: s, end: e, claim, cited });
    }
    start = end;
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    // A blank line, a line break before a list item or heading, or the end of a
    // heading's own line always ends a block (a heading is never glued to the
    // sentence under it).
    if (ch === '\n') {
      const rest = source.slice(i);
      const blank = /^\n[ \t]*\n/.test(rest);
      const item = /^\n[ \t]*(?:[-*•]|\d+[.)]|#+)\s/.test(rest);
      const line = source.slice(source.lastIndexOf('\n', i - 1) + 1, i);
      const heading = /^[ \t]*#{1,6}[ \t]/.test(line) || (isHeadingLine(line, source, i) && /^\n[ \t]*["'“‘`(\p{Lu}\p{N}]/u.test(rest));
      if (blank || item || heading) {
        push(i);
        i++;
        continue;
      }
    }
    if (ch === '.' || ch === '!' || ch === '?' || ch === '…') {
      let j = i + 1;
      while (j < source.length && /[.!?…"'”’)\]]/.test(source[j]!) && source[j] !== '[') j++;
      // Markers glued to the end: "... [2]" or ".[2]".
      for (;;) {
        const m = /^\s*\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]/.exec(source.slice(j));
        if (!m) break;
        j += m[0].length;
      }
      const next = /^(\s+)(\S)/u.exec(source.slice(j));
      // A line break after end punctuation ends the sentence whatever follows (a heading may be a lowercase name).
      const endsHere =
        j >= source.length ||
        (next !== null &&
          (/["'“‘([\p{Lu}\p{N}*#•`\p{Extended_Pictographic}⚠ℹ-]/u.test(next[2]!) || next[1]!.includes('\n')) &&
          !(ch === '.' && isAbbreviation(source, i)));
      if (endsHere) {
        push(j);
        i = j;
        continue;
      }
      i = j;
      continue;
    }
    i++;
  }
  push(source.length);
  return spans;
}

export interface Token {
  /** The word as written. */
  raw: string;
  /** Lower case, accents folded. */
  lower: string;
  start: number;
  end: number;
}

/**
 * Word tokens with offsets: letter runs (with inner apostrophes, "didn't"),
 * numbers with decimals and thousands separators ("1,200.5"), and the % sign.
 */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(/\p{L}[\p{L}\p{M}\p{N}]*(?:['’]\p{L}+)?|\d+(?:[.,·]\d+)*|%/gu)) {
    const raw = m[0];
    out.push({
      raw,
      lower: raw
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .toLowerCase()
        .replace(/’/g, "'"),
      start: m.index,
      end: m.index + raw.length,
    });
  }
  return out;
}
