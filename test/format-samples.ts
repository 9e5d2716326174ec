import { fileURLToPath } from 'node:url';

/** Where the real files of every format live (made by scripts/make-fixtures.mjs). */
export const fixturesDir = fileURLToPath(new URL('./fixtures/formats', import.meta.url));

/** The twelve upload formats of the Organization API (spec 8), one real file each. */
export const SAMPLES = [
  'sample.pdf',
  'sample.txt',
  'sample.csv',
  'sample.doc',
  'sample.docx',
  'sample.xls',
  'sample.xlsx',
  'sample.ppt',
  'sample.pptx',
  'sample.html',
  'sample.json',
  'sample.xml',
];
