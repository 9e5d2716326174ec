import XLSX from 'xlsx';
import { permanent, type Block } from '../types.js';
import { rowsToBlocks } from './csv.js';

/** XLS and XLSX (SheetJS): every sheet as a table, rows keyed by the header row. */
export function extractSpreadsheet(bytes: Buffer): Block[] {
  let workbook: XLSX.WorkBook;
  try {
    workbook = XLSX.read(bytes, { type: 'buffer', cellFormula: false, cellHTML: false, cellStyles: false, bookVBA: false });
  } catch (err) {
    const message = (err as Error).message;
    if (/password|encrypt/i.test(message))
      throw permanent('The spreadsheet is password-protected (encrypted); remove the password and upload it again');
    throw permanent(`The spreadsheet is corrupt and cannot be read (${message})`);
  }
  const blocks: Block[] = [];
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    if (!sheet) continue;
    const rows = XLSX.utils.sheet_to_json<string[]>(sheet, { header: 1, raw: false, defval: '', blankrows: true });
    const sheetBlocks = rowsToBlocks(rows, { sheet: name });
    if (sheetBlocks.length > 0) blocks.push({ kind: 'heading', level: 1, text: name, sheet: name }, ...sheetBlocks);
  }
  return blocks;
}
