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

/** The end of a text, at most n characters, starting at a word boundary. */
export function tailOf(text: string, n: number): string {
  if (n <= 0 || text.length <= n) return n <= 0 ? '' : text;
  const tail = text.slice(-n);
  const space = tail.search(/\s/);
  return (space >= 0 ? tail.slice(space + 1) : tail).trim();
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
 * (paragraphs, table rows) are packed up to the target size, and consecutive
 * chunks of one section overlap so a fact split across them is still found.
 * Each chunk records where it came from.
 */
export function chunkBlocks(blocks: Block[], options: ChunkingOptions): ChunkData[] {
  const target = Math.max(100, options.targetChars);
  const overlap = Math.min(Math.max(0, options.overlapChars), Math.floor(target / 2));
  const chunks: ChunkData[] = [];
  const headings: string[] = [];
  let section: Section | undefined;
  let lines: string[] = [];
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
    const carry = continues ? tailOf(text, overlap) : '';
    lines = carry ? [carry] : [];
    size = carry.length;
    rows = undefined;
    fresh = 0;
  };

  for (const block of blocks) {
    const text = block.text.replace(/[ \t]+/g, ' ').trim();
    if (!text) continue;
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
      size = 0;
      fresh = 0;
      section = where;
    }
    const pieces = text.length > target ? splitLong(text, target - overlap) : [text];
    for (const piece of pieces) {
      if (size > 0 && size + piece.length + 1 > target) flush(true);
      lines.push(piece);
      size += piece.length + 1;
      fresh++;
      if (block.row !== undefined) rows = rows ? [rows[0], block.row] : [block.row, block.row];
    }
  }
  flush(false);
  return chunks;
}
