import { isHeadingLine } from './verify/text.js';

/** Splits text into lines at each heading without end punctuation, so that a heading never joins the sentence under it. */
function splitAtHeadings(text: string): string[] {
  const pieces: string[] = [];
  let from = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    const lineStart = text.lastIndexOf('\n', i - 1) + 1;
    const line = text.slice(lineStart, i);
    if (/^\n[ \t]*["'“‘`(\p{Lu}\p{N}]/u.test(text.slice(i)) && isHeadingLine(line, text, i)) {
      // The heading alone: apart from what comes before it and from what follows.
      if (lineStart > from) pieces.push(text.slice(from, lineStart));
      pieces.push(line);
      from = i + 1;
    }
  }
  pieces.push(text.slice(from));
  return pieces;
}

/**
 * Splits prose into sentences: after . ! ? followed by space and a capital, digit, quote or bracket, and after a
 * heading's line (a short line without end punctuation above a capitalised one).
 */
export function splitSentences(text: string): string[] {
  return splitAtHeadings(text).flatMap((piece) =>
    piece
      .replace(/\s+/g, ' ')
      .split(/(?<=[.!?])\s+(?=["'([\p{Lu}\p{N}])/u)
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
}
