import type { Block } from '../extract/types.js';
import type { ChunkData } from './content.js';

export interface ChunkingOptions {
  /** Aim for chunks of about this many characters. */
  targetChars: number;
  /** Characters repeated from the end of one chunk at the start of the next in the same section. */
  overlapChars: number;
}

interface Section {
  page?: number;
  sheet?: string;
  slide?: number;
  headingPath: string[];
}

const sameSection = (a: Section, b: Section) =>
  a.page === b.page && a.sheet === b.sheet && a.slide === b.slide && a.headingPath.join('\u0000') === b.headingPath.join('\u0000');

/**
 * The end of a text, at most n characters, starting at a word boundary (and not inside inline
 * code: a tail that would open with the end of a `code span` starts after it).
 */
export function tailOf(text: string, n: number): string {
  if (n <= 0 || text.length <= n) return n <= 0 ? '' : text;
  const tail = text.slice(-n);
  const space = tail.search(/\s/);
  let out = (space >= 0 ? tail.slice(space + 1) : tail).trim();
  if ((out.match(/`/g)?.length ?? 0) % 2 === 1 && (text.match(/`/g)?.length ?? 0) % 2 === 0) {
    const after = out.slice(out.indexOf('`') + 1);
    const next = after.search(/\s/);
    out = next >= 0 ? after.slice(next).trim() : '';
  }
  return out;
}

/** The fence line a chunk writes around a code block. */
const FENCE = '```';

/**
 * A code block as chunk text: fenced ("```", its lines, "```"), in pieces of at most max
 * characters each fenced on its own when it is longer (split between lines; a line longer than
 * a piece is cut). A line of the code that would close the fence is indented so it does not.
 */
export function fencedPieces(code: string, max: number): string[] {
  const lines = code.split('\n').map((l) => (/^ {0,3}`{3,}\s*$/.test(l) ? `    ${l}` : l));
  const room = Math.max(1, max - 2 * (FENCE.length + 1));
  const pieces: string[] = [];
  let open: string[] = [];
  let size = 0;
  const close = () => {
    if (open.length > 0) pieces.push(`${FENCE}\n${open.join('\n')}\n${FENCE}`);
    open = [];
    size = 0;
  };
  for (const line of lines) {
    for (let at = 0; at === 0 || at < line.length; at += room) {
      const part = line.slice(at, at + room);
      if (open.length > 0 && size + 1 + part.length > room) close();
      size += (open.length > 0 ? 1 : 0) + part.length;
      open.push(part);
    }
  }
  close();
  return pieces;
}

/** Splits one over-long text at sentence or word boundaries into pieces of at most max characters. */
export function splitLong(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
    cut = cut > max * 0.5 ? cut + 1 : window.lastIndexOf(' ');
    if (cut < max * 0.3) cut = max;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/**
 * Chunks that follow the document's structure: a chunk never spans two pages,
 * sheets, slides or sections (heading paths); inside a section, blocks
 * (paragraphs, table rows, code blocks) are packed up to the target size, and
 * consecutive chunks of one section overlap so a fact split across them is
 * still found. A code block is written fenced on lines of its own ("```", its
 * lines, "```"), kept whole in one chunk unless it is longer than a chunk (then
 * each piece is fenced); the overlap is only ever prose after the last code
 * block, so no chunk starts inside code. Each chunk records where it came from.
 */
export function chunkBlocks(blocks: Block[], options: ChunkingOptions): ChunkData[] {
  const target = Math.max(100, options.targetChars);
  const overlap = Math.min(Math.max(0, options.overlapChars), Math.floor(target / 2));
  const chunks: ChunkData[] = [];
  const headings: string[] = [];
  let section: Section | undefined;
  let lines: string[] = [];
  /** Whether each line of the open chunk is a (fenced) code piece. */
  let isCode: boolean[] = [];
  let size = 0;
  let rows: [number, number] | undefined;
  /** Lines of the open chunk that are new (not carried over as overlap). */
  let fresh = 0;

  const emit = (text: string, where: Section, rowRange: [number, number] | undefined) => {
    const chunk: ChunkData = { chunk_index: chunks.length, text };
    if (where.page !== undefined) chunk.page = where.page;
    if (where.sheet !== undefined) chunk.sheet = where.sheet;
    if (where.slide !== undefined) chunk.slide = where.slide;
    if (where.headingPath.length > 0) chunk.heading_path = [...where.headingPath];
    if (rowRange) chunk.row_range = rowRange;
    chunks.push(chunk);
  };

  /** Emits the open chunk; when the section continues, the next one starts with an overlap. */
  const flush = (continues: boolean) => {
    if (!section || fresh === 0) return;
    const text = lines.join('\n');
    emit(text, section, rows);
    const prose = lines.slice(isCode.lastIndexOf(true) + 1).join('\n');
    const carry = continues ? tailOf(prose, overlap) : '';
    lines = carry ? [carry] : [];
    isCode = carry ? [false] : [];
    size = carry.length;
    rows = undefined;
    fresh = 0;
  };

  for (const block of blocks) {
    const code = block.kind === 'code';
    const text = code ? block.text.replace(/\s+$/, '').replace(/^\s*\n/, '') : block.text.replace(/[ \t]+/g, ' ').trim();
    if (!text.trim()) continue;
    if (block.kind === 'heading') {
      const level = Math.min(Math.max(block.level ?? 1, 1), 6);
      headings.length = level - 1;
      headings[level - 1] = text;
    }
    const where: Section = {
      headingPath: headings.filter((h) => h !== undefined),
      ...(block.page !== undefined && { page: block.page }),
      ...(block.sheet !== undefined && { sheet: block.sheet }),
      ...(block.slide !== undefined && { slide: block.slide }),
    };
    if (!section || !sameSection(section, where)) {
      flush(false);
      lines = [];
      isCode = [];
      size = 0;
      fresh = 0;
      section = where;
    }
    const pieces = code
      ? fencedPieces(text, text.length + 2 * (FENCE.length + 1) > target ? target - overlap : target)
      : text.length > target
        ? splitLong(text, target - overlap)
        : [text];
    for (const piece of pieces) {
      if (size > 0 && size + piece.length + 1 > target) flush(true);
      lines.push(piece);
      isCode.push(code);
      size += piece.length + 1;
      fresh++;
      if (block.row !== undefined) rows = rows ? [rows[0], block.row] : [block.row, block.row];
    }
  }
  flush(false);
  return chunks;
}
