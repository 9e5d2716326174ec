import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createDeflate, deflateSync } from 'node:zlib';
import JSZip from 'jszip';
import { extractFile } from './extract.js';
import { DEFAULT_LIMITS, type ExtractionLimits } from './types.js';

/**
 * Hostile files (issue 13, item 2), generated here: what one item may become is
 * capped (decompressed bytes per stream and in total, pages, characters), and a
 * file over a cap fails for good with a reason a person can act on.
 */
const fixtures = fileURLToPath(new URL('../../../../test/fixtures/formats/', import.meta.url));

/** A PDF whose objects are given as [dictionary, stream or undefined]; pages name content objects. */
function buildPdf(pages: { content: Buffer; filter?: string }[], extra: { content: Buffer; filter: string }[] = []): Buffer {
  const objects: Buffer[] = [];
  const kids = pages.map((_, i) => `${4 + i * 2} 0 R`).join(' ');
  objects.push(Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'));
  objects.push(Buffer.from(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`));
  objects.push(Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'));
  const stream = (s: { content: Buffer; filter?: string }) =>
    Buffer.concat([
      Buffer.from(`<< /Length ${s.content.length}${s.filter ? ` /Filter ${s.filter}` : ''} >>\nstream\n`),
      s.content,
      Buffer.from('\nendstream'),
    ]);
  pages.forEach((page, i) => {
    objects.push(
      Buffer.from(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
      ),
    );
    objects.push(stream(page));
  });
  for (const s of extra) objects.push(stream(s));
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let at = parts[0]!.length;
  objects.forEach((body, i) => {
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    offsets.push(at);
    parts.push(obj);
    at += obj.length;
  });
  const xref = [
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`,
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
  ].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
}

const text = (s: string) => Buffer.from(`BT /F1 12 Tf 72 720 Td (${s}) Tj ET`);

/** Deflates `bytes` zero bytes without holding them: a small buffer that inflates to a big one. */
async function deflatedZeros(bytes: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (d: Buffer) => out.push(d));
  const done = new Promise((r) => deflate.on('end', r));
  const chunk = Buffer.alloc(1 << 20);
  for (let left = bytes; left > 0; left -= chunk.length) {
    if (!deflate.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  return Buffer.concat(out);
}

const failsWith = (pattern: RegExp) => (err: Error & { permanent?: boolean }) => {
  assert.match(err.message, pattern);
  assert.equal(err.permanent, true, 'a cap failure is permanent');
  return true;
};

const pdf = (bytes: Buffer, limits: ExtractionLimits = DEFAULT_LIMITS) => extractFile({ bytes, filename: 'hostile.pdf' }, limits);

describe('hostile PDFs', () => {
  it('a readable PDF under every cap still extracts', async () => {
    const result = await pdf(buildPdf([{ content: deflateSync(text('Solar panels carry a warranty')), filter: '/FlateDecode' }]));
    assert.equal(result.format, 'pdf');
    assert.match(result.blocks.map((b) => b.text).join(' '), /Solar panels carry a warranty/);
  });

  it('a small PDF holding a 1 GiB compressed stream fails at the per-stream cap without inflating it', async () => {
    const bomb = await deflatedZeros(1024 ** 3);
    assert.ok(bomb.length < 2 * 1024 * 1024, `the bomb weighs ${bomb.length} bytes`);
    const file = buildPdf(
      [{ content: deflateSync(text('Cover page')), filter: '/FlateDecode' }],
      [{ content: bomb, filter: '/FlateDecode' }],
    );
    const before = process.memoryUsage().rss;
    await assert.rejects(pdf(file), failsWith(/compressed stream that expands to more than the 64 MB limit for one stream/));
    assert.ok(process.memoryUsage().rss - before < 512 * 1024 * 1024, 'the stream was not inflated whole');
  });

  it('a stream deflated twice (filter chain) is capped through every layer', async () => {
    const inner = await deflatedZeros(8 * 1024 * 1024);
    const twice = deflateSync(inner);
    const limits = { ...DEFAULT_LIMITS, maxStreamBytes: 1024 * 1024 };
    const file = buildPdf([{ content: text('Cover') }], [{ content: twice, filter: '[/FlateDecode /FlateDecode]' }]);
    await assert.rejects(pdf(file, limits), failsWith(/limit for one stream/));
  });

  it('many streams each under the per-stream cap fail at the total cap', async () => {
    const part = await deflatedZeros(600 * 1024);
    const limits = { ...DEFAULT_LIMITS, maxStreamBytes: 1024 * 1024, maxUncompressedBytes: 2 * 1024 * 1024 };
    const file = buildPdf(
      [{ content: text('Cover') }],
      Array.from({ length: 5 }, () => ({ content: part, filter: '/FlateDecode' })),
    );
    await assert.rejects(pdf(file, limits), failsWith(/expand to more than the 2 MB limit in total/));
  });

  it('a PDF with more pages than the cap fails before any page is read', async () => {
    const file = buildPdf(Array.from({ length: 40 }, (_, i) => ({ content: text(`Page ${i + 1}`) })));
    assert.equal((await pdf(file)).format, 'pdf');
    await assert.rejects(pdf(file, { ...DEFAULT_LIMITS, maxPages: 30 }), failsWith(/has 40 pages, over the limit of 30 pages/));
  });

  it('a PDF whose text is over the character cap stops at the cap', async () => {
    const file = buildPdf(Array.from({ length: 20 }, () => ({ content: text('x'.repeat(200)) })));
    await assert.rejects(pdf(file, { ...DEFAULT_LIMITS, maxCharacters: 1000 }), failsWith(/more than 1,000 characters of text/));
  });
});

describe('hostile office and text files', () => {
  it('a DOCX whose document part expands past the per-part cap (under the ratio limit) fails before any library reads it', async () => {
    const zip = await JSZip.loadAsync(readFileSync(fixtures + 'sample.docx'));
    const original = await zip.file('word/document.xml')!.async('string');
    // 106:1 like the report: varied enough text to stay under the ratio limit, 3 MB of XML.
    const paragraph = (i: number) => `<w:p><w:r><w:t>Paragraph ${i} about inverter model ${(i * 7919) % 100_000}</w:t></w:r></w:p>`;
    const body = Array.from({ length: 40_000 }, (_, i) => paragraph(i)).join('');
    zip.file('word/document.xml', original.replace('<w:body>', `<w:body>${body}`));
    const bytes = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    const limits = { ...DEFAULT_LIMITS, maxStreamBytes: 1024 * 1024 };
    await assert.rejects(
      extractFile({ bytes, filename: 'expanding.docx' }, limits),
      failsWith(/part word\/document\.xml unpacks to \d+(\.\d)? MB, over the 1 MB limit for one part/),
    );
    // Under the part cap, the character cap still bounds what it yields.
    await assert.rejects(
      extractFile({ bytes, filename: 'expanding.docx' }, { ...DEFAULT_LIMITS, maxCharacters: 100_000 }),
      failsWith(/more than 100,000 characters/),
    );
  });

  it('a text file over the character cap fails', async () => {
    await assert.rejects(
      extractFile({ bytes: Buffer.from('word '.repeat(1000)), filename: 'long.txt' }, { ...DEFAULT_LIMITS, maxCharacters: 1000 }),
      failsWith(/more than 1,000 characters/),
    );
  });
});
