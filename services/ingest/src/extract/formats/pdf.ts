// Imported before pdf.js (modules are evaluated in the order imported): it keeps the engine's built-ins.
import { restoreEngineBuiltins } from './engine-builtins.js';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
// pdf.js's own worker code, which it runs in this thread when there is no web worker; loaded
// here (it registers itself as globalThis.pdfjsWorker) rather than by pdf.js at the first
// document, so its polyfills are also undone below.
import 'pdfjs-dist/legacy/build/pdf.worker.mjs';
import { ExtractionError, permanent, tooManyCharacters, type Block, type ExtractionLimits } from '../types.js';
import { checkPdfStreams } from '../pdf-streams.js';

restoreEngineBuiltins();

interface TextItem {
  str: string;
  transform: number[];
  /** Advance width in page units. */
  width?: number;
  hasEOL?: boolean;
}

/** Separator between the cells of a table row (as for HTML, DOCX and sheet tables). */
const CELL = ' | ';
/**
 * A horizontal gap wider than this many font sizes between two runs of one line
 * separates table cells: word spaces are a quarter to one em even in justified
 * text, while a PDF has no table structure other than where text is placed.
 */
const CELL_GAP_EMS = 1.5;

/**
 * PDF text per page (pdf.js). Lines set in a font clearly larger than the
 * document's body text are taken as headings, so chunks keep a heading path;
 * lines whose runs stand in columns apart are table rows, their cells joined
 * with " | ".
 */
export async function extractPdf(bytes: Buffer, limits: ExtractionLimits): Promise<Block[]> {
  checkPdfStreams(bytes, limits);
  let pdf;
  try {
    pdf = await getDocument({
      data: new Uint8Array(bytes),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: true,
      verbosity: 0,
    }).promise;
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'PasswordException') throw permanent('The PDF is password-protected (encrypted); remove the password and upload it again');
    if (name === 'InvalidPDFException' || name === 'FormatError' || name === 'UnknownErrorException') {
      throw permanent(`The PDF is corrupt and cannot be read (${(err as Error).message})`);
    }
    throw new ExtractionError(`The PDF could not be read: ${(err as Error).message}`, false);
  }
  try {
    if (pdf.numPages > limits.maxPages) {
      throw permanent(
        `The PDF has ${pdf.numPages} pages, over the limit of ${limits.maxPages} pages per file; split it into smaller files`,
      );
    }
    const lines: { text: string; size: number; page: number; cells: number }[] = [];
    let characters = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      let line = '';
      let size = 0;
      let cells = 1;
      let lastY: number | undefined;
      /** Where the last visible run of the line ends (x), to measure the gap to the next. */
      let endX: number | undefined;
      const push = () => {
        const clean = line.replace(/\s+/g, ' ').trim();
        if (clean) lines.push({ text: clean, size, page: n, cells });
        characters += clean.length;
        line = '';
        size = 0;
        cells = 1;
        endX = undefined;
      };
      for (const raw of content.items) {
        const item = raw as TextItem;
        if (typeof item.str !== 'string') continue;
        const x = item.transform[4] ?? 0;
        const y = item.transform[5] ?? 0;
        if (lastY !== undefined && Math.abs(y - lastY) > 2 && line) push();
        lastY = y;
        const fontSize = Math.hypot(item.transform[0] ?? 0, item.transform[1] ?? 0);
        if (item.str.trim()) {
          if (endX !== undefined && line.trim() && x - endX > Math.max(fontSize, 1) * CELL_GAP_EMS) {
            line = line.trimEnd() + CELL;
            cells++;
          }
          endX = x + (item.width ?? 0);
        }
        line += item.str;
        size = Math.max(size, fontSize);
        if (item.hasEOL) push();
      }
      push();
      page.cleanup();
      // Stop reading as soon as the text is over the cap, not after the last page.
      if (characters > limits.maxCharacters) throw tooManyCharacters(limits);
    }
    const sizes = lines.map((l) => l.size).sort((a, b) => a - b);
    const body = sizes[Math.floor(sizes.length / 2)] ?? 0;
    return lines.map((l): Block => {
      if (l.cells > 1) return { kind: 'row', text: l.text, page: l.page };
      return l.size > body * 1.3 && l.text.length < 200
        ? { kind: 'heading', level: 1, text: l.text, page: l.page }
        : { kind: 'paragraph', text: l.text, page: l.page };
    });
  } finally {
    await pdf.destroy();
  }
}
