import { parse } from 'csv-parse/sync';
import { permanent, type Block } from '../types.js';

/** Tabular rows as "column: value" lines, keyed by the header row, with row numbers kept. */
export function rowsToBlocks(rows: string[][], where: { sheet?: string } = {}): Block[] {
  const nonEmpty = rows.map((r, i) => ({ cells: r.map((c) => String(c ?? '').trim()), row: i + 1 })).filter((r) => r.cells.some((c) => c));
  const [header, ...body] = nonEmpty;
  if (!header) return [];
  const names = header.cells;
  const blocks: Block[] = [{ kind: 'row', text: names.filter((n) => n).join(' | '), row: header.row, ...where }];
  for (const { cells, row } of body) {
    const text = cells
      .map((value, i) => (value ? (names[i] ? `${names[i]}: ${value}` : value) : ''))
      .filter((s) => s)
      .join('; ');
    if (text) blocks.push({ kind: 'row', text, row, ...where });
  }
  return blocks;
}

export function extractCsv(text: string): Block[] {
  let rows: string[][];
  try {
    rows = parse(text, { relax_column_count: true, relax_quotes: true, skip_empty_lines: true, bom: true }) as string[][];
  } catch (err) {
    throw permanent(`The CSV file cannot be read: ${(err as Error).message}`);
  }
  return rowsToBlocks(rows);
}
