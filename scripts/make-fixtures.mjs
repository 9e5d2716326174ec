#!/usr/bin/env node
// Generates the small real files under test/fixtures/formats that the ingest tests
// and the benchmark use: one sample of every accepted format plus the failure
// cases (corrupt, encrypted PDF and DOCX, empty of text, mismatched, decompression
// bombs with honest and with lying size headers).
// Usage: node scripts/make-fixtures.mjs   (from the repository root; deterministic
// content, so re-running only changes files when a generator library changes,
// except sample.docx and sample.pptx, whose libraries stamp the current time
// into the package metadata: keep the committed ones unless their content changes).
//
// The legacy binary formats have no maintained pure-JS writer except XLS (SheetJS
// writes BIFF8). sample.doc and sample.ppt were converted once from this script's
// sample.docx / sample.pptx with LibreOffice 7.4 and committed:
//   soffice --headless --convert-to doc sample.docx
//   soffice --headless --convert-to ppt sample.pptx
// This script re-creates them the same way when `soffice` is on the PATH and
// leaves the committed files alone otherwise.
import { mkdirSync, writeFileSync, existsSync, copyFileSync, rmSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { deflateRawSync } from 'node:zlib';
import { createHash } from 'node:crypto';

const require = createRequire(join(process.cwd(), 'test/package.json'));
const docx = require('docx');
const { PDFDocument, StandardFonts } = require('pdf-lib');
const PptxGenJS = require('pptxgenjs');
const XLSX = require('xlsx');
const CFB = require('cfb');

const out = join(process.cwd(), 'test/fixtures/formats');
mkdirSync(out, { recursive: true });
const write = (name, bytes) => {
  writeFileSync(join(out, name), bytes);
  console.log(`wrote ${name} (${bytes.length} bytes)`);
};
const FIXED_DATE = new Date('2024-01-01T00:00:00Z');

// --- PDF: two pages of text (the second with a small table), plus one page with no text at all.
{
  const pdf = await PDFDocument.create({ updateMetadata: false });
  pdf.setCreationDate(FIXED_DATE);
  pdf.setModificationDate(FIXED_DATE);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const pages = [
    [
      'Solar Panel Maintenance Guide',
      'Clean the panels every three months with soft water.',
      'Inspect the inverter display for error codes monthly.',
    ],
    ['Warranty Terms', 'The panels carry a twenty five year performance warranty.', 'Claims need the serial number printed on the frame.'],
  ];
  const pdfPages = [];
  for (const lines of pages) {
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 30, size: i === 0 ? 20 : 12, font }));
    pdfPages.push(page);
  }
  // A PDF table is only text placed in columns: the extractor has to see the cells from the gaps.
  [
    ['Component', 'Warranty years'],
    ['Panels', '25'],
    ['Inverter', '10'],
  ].forEach((row, i) => row.forEach((cell, j) => pdfPages[1].drawText(cell, { x: 50 + j * 200, y: 680 - i * 20, size: 12, font })));
  write('sample.pdf', Buffer.from(await pdf.save({ useObjectStreams: false })));

  const blank = await PDFDocument.create({ updateMetadata: false });
  blank.setCreationDate(FIXED_DATE);
  blank.setModificationDate(FIXED_DATE);
  blank.addPage([595, 842]);
  write('no-text.pdf', Buffer.from(await blank.save({ useObjectStreams: false })));
}

// --- DOCX: headings, paragraphs and a table.
const { Document, Packer, Paragraph, HeadingLevel, Table, TableRow, TableCell } = docx;
{
  const cell = (text) => new TableCell({ children: [new Paragraph(text)] });
  const doc = new Document({
    creator: 'fixtures',
    title: 'Heat pump handbook',
    sections: [
      {
        children: [
          new Paragraph({ text: 'Heat Pump Handbook', heading: HeadingLevel.HEADING_1 }),
          new Paragraph('A heat pump moves heat from outside air into the house.'),
          new Paragraph({ text: 'Installation', heading: HeadingLevel.HEADING_2 }),
          new Paragraph('Mount the outdoor unit at least thirty centimetres above the ground.'),
          new Paragraph({ text: 'Efficiency', heading: HeadingLevel.HEADING_2 }),
          new Paragraph('The seasonal coefficient of performance is usually between three and four.'),
          new Table({
            rows: [
              new TableRow({ children: [cell('Model'), cell('Capacity kW')] }),
              new TableRow({ children: [cell('HP-5'), cell('5')] }),
              new TableRow({ children: [cell('HP-8'), cell('8')] }),
            ],
          }),
        ],
      },
    ],
  });
  write('sample.docx', await Packer.toBuffer(doc));
}

// --- XLSX and XLS (SheetJS writes both): two sheets of rows.
{
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(
    wb,
    XLSX.utils.aoa_to_sheet([
      ['Region', 'Installations', 'Revenue'],
      ['North', 120, 54000],
      ['South', 95, 43000],
    ]),
    'Sales',
  );
  XLSX.utils.book_append_sheet(
    wb,
    XLSX.utils.aoa_to_sheet([
      ['Part', 'Stock'],
      ['Inverter', 14],
      ['Mounting rail', 230],
    ]),
    'Inventory',
  );
  write('sample.xlsx', XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }));
  write('sample.xls', XLSX.write(wb, { type: 'buffer', bookType: 'biff8' }));
}

// --- PPTX: three slides with titles and bullet text.
{
  const pptx = new PptxGenJS();
  pptx.company = 'fixtures';
  const slides = [
    ['Battery Storage', 'Home batteries store surplus solar energy for the evening.'],
    ['Sizing', 'A typical home needs ten kilowatt hours of storage.'],
    ['Safety', 'Install batteries in a ventilated room away from heat sources.'],
  ];
  for (const [title, body] of slides) {
    const slide = pptx.addSlide();
    slide.addText(title, { x: 0.5, y: 0.3, w: 9, h: 1, fontSize: 28 });
    slide.addText(body, { x: 0.5, y: 1.5, w: 9, h: 1, fontSize: 16 });
  }
  write('sample.pptx', await pptx.write({ outputType: 'nodebuffer' }));
}

// --- Text formats.
write(
  'sample.html',
  Buffer.from(`<!doctype html>
<html><head><title>Wind Turbines</title><style>body { color: red }</style><script>console.log("not content")</script></head>
<body><nav>Home | About</nav><main>
<h1>Small Wind Turbines</h1>
<p>A small wind turbine suits a site with average wind speeds above five metres per second.</p>
<h2>Noise</h2>
<p>Modern turbines are quieter than a normal conversation at fifty metres.</p>
<table><tr><th>Model</th><th>Rated power</th></tr><tr><td>WT-1</td><td>1 kW</td></tr></table>
</main><footer>Copyright</footer></body></html>
`),
);
write('sample.csv', Buffer.from('product,price,currency\nSolar panel 400W,199,EUR\nInverter 5kW,899,EUR\n"Cable, 10m",25,EUR\n'));
write(
  'sample.json',
  Buffer.from(
    JSON.stringify(
      {
        product: 'Smart thermostat',
        features: ['Learns your schedule', 'Saves up to ten percent on heating'],
        specs: { battery: 'AA', wifi: true },
      },
      null,
      2,
    ),
  ),
);
write(
  'sample.xml',
  Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<catalog>
  <item id="1"><name>Geothermal loop</name><description>A ground loop exchanges heat with the earth at two metres depth.</description></item>
  <item id="2"><name>Buffer tank</name><description>A buffer tank reduces short cycling of the heat pump.</description></item>
</catalog>
`),
);
write(
  'sample.txt',
  Buffer.from(
    'Energy Audit Checklist\n\nCheck the attic insulation depth.\n\nSeal gaps around windows and doors.\n\nReplace old bulbs with LEDs.\n',
  ),
);

// --- Failure cases.
// Corrupt: a PDF header followed by garbage and no xref or objects.
write('corrupt.pdf', Buffer.from('%PDF-1.7\n' + 'garbage '.repeat(64) + '\n'));
// Encrypted PDF: standard security handler (RC4, 40-bit, revision 2) with the user
// password "secret", built by hand since pdf-lib does not encrypt.
write('encrypted.pdf', encryptedPdf('secret', 'Confidential price list'));
// Mismatch: a PNG image named .docx.
write(
  'image-named.docx',
  Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f2a6a50000000049454e44ae426082',
    'hex',
  ),
);
// Encrypted OOXML: what Office writes for a password-protected file (an OLE2
// container with EncryptionInfo and EncryptedPackage streams instead of a zip).
{
  const cfb = CFB.utils.cfb_new();
  CFB.utils.cfb_add(cfb, '/EncryptionInfo', Buffer.from([4, 0, 4, 0, 0x40, 0, 0, 0]));
  CFB.utils.cfb_add(cfb, '/EncryptedPackage', Buffer.alloc(4096, 0x5a));
  write('encrypted.docx', Buffer.from(CFB.write(cfb, { type: 'buffer' })));
}
// Decompression bomb: a zip with a DOCX shape whose document part is 64 MiB of
// zeros deflated to a few dozen KB.
{
  const entries = [
    [
      '[Content_Types].xml',
      Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    ],
    ['word/document.xml', Buffer.alloc(64 * 1024 * 1024, 0x20)],
  ];
  write('bomb.docx', makeZip(entries));
  // The same trick with headers that lie: every entry declares a tiny unpacked
  // size, so only inflating (with a cap) reveals the 64 MiB.
  write(
    'bomb-hidden.xlsx',
    makeZip([
      ['[Content_Types].xml', entries[0][1]],
      ['xl/workbook.xml', Buffer.alloc(64 * 1024 * 1024, 0x20), 1000],
    ]),
  );
}

// --- Legacy DOC and PPT, converted once with LibreOffice (see the header).
const soffice = ['soffice', 'libreoffice'].find((bin) => {
  try {
    execFileSync(bin, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});
if (soffice) {
  const work = mkdtempSync(join(tmpdir(), 'fixtures-'));
  for (const [from, to] of [
    ['sample.docx', 'doc'],
    ['sample.pptx', 'ppt'],
  ]) {
    copyFileSync(join(out, from), join(work, from));
    execFileSync(soffice, ['--headless', '--convert-to', to, '--outdir', work, join(work, from)], { stdio: 'ignore' });
    copyFileSync(join(work, from.replace(/\.\w+$/, `.${to}`)), join(out, `sample.${to}`));
    console.log(`wrote sample.${to} (LibreOffice)`);
  }
  rmSync(work, { recursive: true, force: true });
} else {
  for (const name of ['sample.doc', 'sample.ppt']) {
    console.log(
      existsSync(join(out, name)) ? `kept committed ${name} (no soffice here)` : `MISSING ${name}: install LibreOffice once to create it`,
    );
  }
}

/** RC4, which PDF revision 2 encryption uses (OpenSSL 3 no longer offers it by default). */
function rc4(key, data) {
  const S = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + S[i] + key[i % key.length]) & 255;
    [S[i], S[j]] = [S[j], S[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + S[i]) & 255;
    [S[i], S[j]] = [S[j], S[i]];
    out[n] = data[n] ^ S[(S[i] + S[j]) & 255];
  }
  return out;
}

/** A one-page PDF encrypted with a user password (PDF 1.7 section 7.6.3, algorithms 2 to 4, R2). */
function encryptedPdf(userPassword, text) {
  const PAD = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');
  const pad = (pw) => Buffer.concat([Buffer.from(pw, 'latin1'), PAD]).subarray(0, 32);
  const md5 = (...parts) => createHash('md5').update(Buffer.concat(parts)).digest();
  const id = md5(Buffer.from('kb fixtures encrypted.pdf'));
  const permissions = -44;
  const P = Buffer.alloc(4);
  P.writeInt32LE(permissions);
  const O = rc4(md5(pad('owner-' + userPassword)).subarray(0, 5), pad(userPassword));
  const fileKey = md5(pad(userPassword), O, P, id).subarray(0, 5);
  const U = rc4(fileKey, PAD);
  const objectKey = (num) => md5(fileKey, Buffer.from([num & 255, (num >> 8) & 255, (num >> 16) & 255, 0, 0])).subarray(0, 10);
  const content = rc4(objectKey(4), Buffer.from(`BT /F1 14 Tf 50 780 Td (${text}) Tj ET`));
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    Buffer.concat([Buffer.from(`<< /Length ${content.length} >>\nstream\n`), content, Buffer.from('\nendstream')]),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${O.toString('hex')}> /U <${U.toString('hex')}> /P ${permissions} >>`,
  ];
  const parts = [Buffer.from('%PDF-1.4\n')];
  const offsets = [];
  let length = parts[0].length;
  objects.forEach((body, i) => {
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.from(body), Buffer.from('\nendobj\n')]);
    offsets.push(length);
    parts.push(obj);
    length += obj.length;
  });
  const xref = ['xref', `0 ${objects.length + 1}`, '0000000000 65535 f ', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `)];
  const trailer = `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 6 0 R /ID [<${id.toString('hex')}> <${id.toString('hex')}>] >>`;
  parts.push(Buffer.from(`${xref.join('\n')}\n${trailer}\nstartxref\n${length}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/**
 * A minimal zip writer (deflate, no data descriptors), enough for fixtures. An
 * entry may give a declared unpacked size that differs from its real one.
 */
function makeZip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, data, declared = data.length] of files) {
    const nameBytes = Buffer.from(name);
    const packed = deflateRawSync(data, { level: 9 });
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    locals.push(local, nameBytes, packed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

function crc32(data) {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
