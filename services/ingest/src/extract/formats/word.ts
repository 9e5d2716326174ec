// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- the untyped package's declarations must reach every program that compiles this file
/// <reference path="./word-extractor.d.ts" />
import mammoth from 'mammoth';
import WordExtractor from 'word-extractor';
import { permanent, type Block } from '../types.js';
import { extractHtml } from './html.js';
import { extractPlainText } from './text.js';

/** DOCX through mammoth's semantic HTML: headings, paragraphs and tables survive. */
export async function extractDocx(bytes: Buffer): Promise<Block[]> {
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: bytes })).value;
  } catch (err) {
    throw permanent(`The DOCX file is corrupt and cannot be read (${(err as Error).message})`);
  }
  return extractHtml(html);
}

/** Legacy Word 97-2003 (word-extractor reads the OLE2 WordDocument stream). */
export async function extractDoc(bytes: Buffer): Promise<Block[]> {
  let body: string;
  try {
    const doc = await new WordExtractor().extract(bytes);
    body = [doc.getBody(), doc.getFootnotes(), doc.getEndnotes()].filter((s) => s.trim()).join('\n\n');
  } catch (err) {
    throw permanent(`The DOC file is corrupt and cannot be read (${(err as Error).message})`);
  }
  // Word separates paragraphs with single line breaks.
  return extractPlainText(body.replace(/\r?\n/g, '\n\n'));
}
