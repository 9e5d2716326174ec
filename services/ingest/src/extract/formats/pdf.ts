import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ExtractionError, permanent, type Block } from '../types.js';

interface TextItem {
  str: string;
  transform: number[];
  hasEOL?: boolean;
}

/**
 * PDF text per page (pdf.js). Lines set in a font clearly larger than the
 * document's body text are taken as headings, so chunks keep a heading path.
 */
export async function extractPdf(bytes: Buffer): Promise<Block[]> {
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
    const lines: { text: string; size: number; page: number }[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      let line = '';
      let size = 0;
      let lastY: number | undefined;
      const push = () => {
        const clean = line.replace(/\s+/g, ' ').trim();
        if (clean) lines.push({ text: clean, size, page: n });
        line = '';
        size = 0;
      };
      for (const raw of content.items) {
        const item = raw as TextItem;
        if (typeof item.str !== 'string') continue;
        const y = item.transform[5] ?? 0;
        if (lastY !== undefined && Math.abs(y - lastY) > 2 && line) push();
        line += item.str;
        size = Math.max(size, Math.hypot(item.transform[0] ?? 0, item.transform[1] ?? 0));
        lastY = y;
        if (item.hasEOL) push();
      }
      push();
      page.cleanup();
    }
    const sizes = lines.map((l) => l.size).sort((a, b) => a - b);
    const body = sizes[Math.floor(sizes.length / 2)] ?? 0;
    return lines.map((l): Block =>
      l.size > body * 1.3 && l.text.length < 200
        ? { kind: 'heading', level: 1, text: l.text, page: l.page }
        : { kind: 'paragraph', text: l.text, page: l.page },
    );
  } finally {
    await pdf.destroy();
  }
}
