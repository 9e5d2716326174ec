import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { extractFile } from './extract.js';
import { DEFAULT_LIMITS, formatOfName } from './types.js';

const dir = fileURLToPath(new URL('../../../../test/fixtures/formats/', import.meta.url));
const limits = { ...DEFAULT_LIMITS, maxUncompressedBytes: 50 * 1024 * 1024, maxCompressionRatio: 200 };
const extract = (name: string, bytes = readFileSync(dir + name), filename = name) => extractFile({ bytes, filename }, limits);

describe('extractFile: the format comes from the bytes', () => {
  for (const [name, format] of Object.entries({
    'sample.pdf': 'pdf',
    'sample.docx': 'docx',
    'sample.doc': 'doc',
    'sample.xlsx': 'xlsx',
    'sample.xls': 'xls',
    'sample.pptx': 'pptx',
    'sample.ppt': 'ppt',
    'sample.html': 'html',
    'sample.csv': 'csv',
    'sample.json': 'json',
    'sample.xml': 'xml',
    'sample.txt': 'txt',
  })) {
    it(`reads ${name} as ${format} with text`, async () => {
      const result = await extract(name);
      assert.equal(result.format, format);
      assert.ok(result.blocks.length > 0);
    });
  }

  it('fails permanently with a readable reason for broken files', async () => {
    const cases: [string, RegExp][] = [
      ['corrupt.pdf', /corrupt/],
      ['encrypted.pdf', /PDF is password-protected/],
      ['encrypted.docx', /password-protected/],
      ['no-text.pdf', /no text/],
      ['image-named.docx', /named as Word \(DOCX\) but its content is a PNG image/],
      ['bomb.docx', /decompression bomb/],
      // Headers that declare 1000 bytes for 64 MiB: caught by inflating under a cap, not by trusting them.
      ['bomb-hidden.xlsx', /decompression bomb: xl\/workbook\.xml unpacks to more than the 1000 bytes it declares/],
    ];
    for (const [name, reason] of cases) {
      await assert.rejects(
        extract(name),
        (err: Error & { permanent?: boolean }) => reason.test(err.message) && err.permanent === true,
        name,
      );
    }
  });

  it('keeps PDF pages, headings and table rows (cells from the gaps between text runs)', async () => {
    const { blocks } = await extract('sample.pdf');
    assert.deepEqual(
      blocks.filter((b) => b.kind !== 'paragraph').map((b) => [b.kind, b.text, b.page]),
      [
        ['heading', 'Solar Panel Maintenance Guide', 1],
        ['heading', 'Warranty Terms', 2],
        ['row', 'Component | Warranty years', 2],
        ['row', 'Panels | 25', 2],
        ['row', 'Inverter | 10', 2],
      ],
    );
    // Words of one sentence are never split into cells.
    assert.ok(blocks.some((b) => b.kind === 'paragraph' && b.text === 'The panels carry a twenty five year performance warranty.'));
  });

  it('a zip-based file over the unpacked total limit fails even when its entries are small', async () => {
    const small = { ...DEFAULT_LIMITS, maxUncompressedBytes: 4096, maxCompressionRatio: 200 };
    await assert.rejects(
      extractFile({ bytes: readFileSync(dir + 'sample.docx'), filename: 'sample.docx' }, small),
      (err: Error & { permanent?: boolean }) =>
        /expands to \d+(\.\d)? KB when unpacked, over the 4 KB limit/.test(err.message) && err.permanent === true,
    );
  });

  it('refuses a file whose name and bytes disagree, an empty file, and invalid JSON or XML', async () => {
    await assert.rejects(
      extract('sample.pdf', readFileSync(dir + 'sample.pdf'), 'sheet.xlsx'),
      /named as Excel \(XLSX\) but its content is PDF/,
    );
    await assert.rejects(extract('sample.txt', readFileSync(dir + 'sample.txt'), 'text.pdf'), /named as PDF but its content is text/);
    await assert.rejects(extract('x', Buffer.alloc(0), 'empty.txt'), /empty/);
    await assert.rejects(extract('x', Buffer.from('{"a":'), 'bad.json'), /not valid JSON/);
    await assert.rejects(extract('x', Buffer.from('<a><b></a>'), 'bad.xml'), /not well-formed/);
  });

  it('maps names to claimed formats', () => {
    assert.equal(formatOfName('Report.PDF'), 'pdf');
    assert.equal(formatOfName('page.htm'), 'html');
    assert.equal(formatOfName('archive.tar.gz'), undefined);
    assert.equal(formatOfName('README'), undefined);
  });
});
