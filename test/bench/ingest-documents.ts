/**
 * Documents of an ordinary size for the ingest benchmark (`CORPUS=documents`):
 * the twelve samples are a few hundred characters each, so the benchmark over
 * them measures the pipeline's fixed cost per file; these carry 13,000 to
 * 100,000 characters of text each (a dozen PDF pages, a handbook in DOCX, a
 * price list of 600 rows, a deck of 25 slides), generated with the writers the
 * fixtures script uses.
 * Deterministic: the text comes from a seeded generator, and copy `n` differs
 * from the others only in its first line (so none is a duplicate). DOC and PPT
 * have no maintained writer; their samples are used as they are.
 */
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { createRequire } from 'node:module';
import XLSX from 'xlsx';
import { variant, type CorpusFile } from './ingest-corpus.js';
import { seededRandom } from './seeded-random.js';

// pptxgenjs ships CommonJS whose types declare a namespace, not a constructor, to an ES module.
const PptxGenJS = createRequire(import.meta.url)('pptxgenjs') as typeof import('pptxgenjs').default;

const WORDS = (
  'panel inverter battery storage heat pump insulation warranty installation roof meter grid tariff export ' +
  'efficiency capacity cable rail mounting frame string voltage current load peak season winter summer audit ' +
  'customer service contract maintenance inspection cleaning monitoring sensor controller thermostat boiler ' +
  'radiator floor heating ventilation window door seal attic cellar wall facade shading orientation yield ' +
  'payback subsidy loan invoice quote order delivery stock region supplier warehouse technician schedule'
).split(' ');

function writer(seed: number) {
  const next = seededRandom(seed);
  const word = () => WORDS[Math.floor(next() * WORDS.length)]!;
  const sentence = () => {
    const words = Array.from({ length: 8 + Math.floor(next() * 10) }, word);
    return `${words[0]!.charAt(0).toUpperCase()}${words.join(' ').slice(1)}.`;
  };
  const paragraph = (sentences = 4) => Array.from({ length: sentences }, sentence).join(' ');
  const title = () => {
    const words = Array.from({ length: 2 + Math.floor(next() * 3) }, word).join(' ');
    return words.charAt(0).toUpperCase() + words.slice(1);
  };
  const int = (max: number) => Math.floor(next() * max);
  return { sentence, paragraph, title, int, word };
}

const ROWS = 600;

async function pdf(n: number): Promise<Buffer> {
  const w = writer(1);
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < 12; p++) {
    const page = doc.addPage([595, 842]);
    page.drawText(p === 0 ? `Field guide, copy ${n}` : w.title(), { x: 50, y: 790, size: 18, font });
    for (let line = 0; line < 42; line++) page.drawText(w.sentence().slice(0, 90), { x: 50, y: 760 - line * 17, size: 10, font });
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

async function docx(n: number): Promise<Buffer> {
  const w = writer(2);
  const children: (Paragraph | Table)[] = [new Paragraph({ text: `Installer handbook, copy ${n}`, heading: HeadingLevel.HEADING_1 })];
  for (let section = 0; section < 10; section++) {
    children.push(new Paragraph({ text: w.title(), heading: HeadingLevel.HEADING_2 }));
    for (let p = 0; p < 12; p++) children.push(new Paragraph(w.paragraph()));
  }
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  children.push(
    new Table({
      rows: Array.from({ length: 30 }, (_, i) => new TableRow({ children: [cell(w.title()), cell(String(i * 7 + 3)), cell(w.word())] })),
    }),
  );
  return Packer.toBuffer(new Document({ creator: 'bench', sections: [{ children }] }));
}

function rows(seed: number): (string | number)[][] {
  const w = writer(seed);
  return [
    ['Item', 'Region', 'Supplier', 'Units', 'Price', 'Note'],
    ...Array.from({ length: ROWS }, () => [w.title(), w.word(), w.word(), w.int(500), w.int(100_000) / 100, w.sentence()]),
  ];
}

function workbook(n: number, bookType: 'xlsx' | 'biff8'): Buffer {
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([[`Price list, copy ${n}`], ...rows(3)]), 'Prices');
  return XLSX.write(book, { type: 'buffer', bookType, ...(bookType === 'xlsx' && { compression: true }) }) as Buffer;
}

async function pptx(n: number): Promise<Buffer> {
  const w = writer(4);
  const deck = new PptxGenJS();
  for (let s = 0; s < 25; s++) {
    const slide = deck.addSlide();
    slide.addText(s === 0 ? `Sales deck, copy ${n}` : w.title(), { x: 0.5, y: 0.3, w: 9, h: 1, fontSize: 28 });
    slide.addText(
      Array.from({ length: 5 }, () => ({ text: w.sentence(), options: { bullet: true } })),
      { x: 0.5, y: 1.4, w: 9, h: 4, fontSize: 14 },
    );
  }
  return (await deck.write({ outputType: 'nodebuffer' })) as Buffer;
}

const csvCell = (v: string | number) => (typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : String(v));

function csv(n: number): Buffer {
  return Buffer.from([[`Price list copy ${n}`], ...rows(5)].map((row) => row.map(csvCell).join(',')).join('\n') + '\n');
}

function html(n: number): Buffer {
  const w = writer(6);
  const sections = Array.from(
    { length: 10 },
    () => `<h2>${w.title()}</h2>\n${Array.from({ length: 12 }, () => `<p>${w.paragraph()}</p>`).join('\n')}`,
  );
  return Buffer.from(
    `<!doctype html><html><head><title>Guide ${n}</title></head><body><nav>Home</nav><main>\n<h1>Maintenance guide, copy ${n}</h1>\n${sections.join('\n')}\n</main></body></html>\n`,
  );
}

function json(n: number): Buffer {
  const w = writer(7);
  const products = Array.from({ length: 200 }, (_, i) => ({ id: i, name: w.title(), description: w.paragraph(2), stock: w.int(900) }));
  return Buffer.from(JSON.stringify({ catalogue: `copy ${n}`, products }, null, 2));
}

function xml(n: number): Buffer {
  const w = writer(8);
  const items = Array.from(
    { length: 200 },
    (_, i) => `  <item id="${i}"><name>${w.title()}</name><description>${w.paragraph(2)}</description></item>`,
  );
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n<catalog copy="${n}">\n${items.join('\n')}\n</catalog>\n`);
}

function txt(n: number): Buffer {
  const w = writer(9);
  return Buffer.from(`Service notes, copy ${n}\n\n${Array.from({ length: 120 }, () => w.paragraph()).join('\n\n')}\n`);
}

/** `rounds` copies of each kind of document, named `<prefix>-<round>.<ext>`, copies `first`, `first + 1`, ... */
export async function documents(prefix: string, first: number, rounds: number): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  for (let r = 0; r < rounds; r++) {
    const n = first + r;
    const name = (ext: string) => `${prefix}-${r}.${ext}`;
    files.push(
      { name: name('pdf'), bytes: await pdf(n) },
      { name: name('txt'), bytes: txt(n) },
      { name: name('csv'), bytes: csv(n) },
      { name: name('doc'), bytes: variant('sample.doc', n) },
      { name: name('docx'), bytes: await docx(n) },
      { name: name('xls'), bytes: workbook(n, 'biff8') },
      { name: name('xlsx'), bytes: workbook(n, 'xlsx') },
      { name: name('ppt'), bytes: variant('sample.ppt', n) },
      { name: name('pptx'), bytes: await pptx(n) },
      { name: name('html'), bytes: html(n) },
      { name: name('json'), bytes: json(n) },
      { name: name('xml'), bytes: xml(n) },
    );
  }
  return files;
}
