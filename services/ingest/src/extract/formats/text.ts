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

/** A thematic break ("---", "***", "_ _ _"): it ends a paragraph and is no text. */
const RULE = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;
/** A list item's line: "- item", "* item", "+ item", "1. item", "1) item" (its text in group 1). */
const LIST_ITEM = /^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+(.*)$/;

/**
 * Markdown (raw text intake): ATX headings open sections, blank lines end paragraphs, table lines
 * are rows, each list item is a paragraph of its own without its marker (as an HTML or DOCX list
 * item is), its continuation lines with it, and a thematic break only ends a paragraph.
 */
export function extractMarkdown(text: string): Block[] {
  const blocks: Block[] = [];
  let buffer: string[] = [];
  let inFence = false;
  const flush = () => {
    const p = buffer.join(' ').replace(/\s+/g, ' ').trim();
    if (p) blocks.push({ kind: 'paragraph', text: p });
    buffer = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    const heading = inFence ? null : /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      if (heading[2]) blocks.push({ kind: 'heading', level: heading[1]!.length, text: heading[2] });
    } else if (!inFence && /^\s*\|.*\|\s*$/.test(line)) {
      flush();
      if (!/^\s*\|[\s:|-]+\|\s*$/.test(line)) {
        const cells = line
          .trim()
          .slice(1, -1)
          .split('|')
          .map((c) => c.trim());
        blocks.push({ kind: 'row', text: cells.join(' | ') });
      }
    } else if (line.trim() === '' || (!inFence && RULE.test(line))) flush();
    else {
      const item = inFence ? null : LIST_ITEM.exec(line);
      if (item) flush();
      buffer.push((item ? item[1]! : line).trim());
    }
  }
  flush();
  return blocks;
}
