import { Parser } from 'htmlparser2';
import type { Block } from '../types.js';

const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'nav', 'footer', 'aside', 'form', 'button', 'iframe']);
const BLOCK = new Set([
  'p',
  'div',
  'li',
  'blockquote',
  'pre',
  'section',
  'article',
  'main',
  'header',
  'dd',
  'dt',
  'figcaption',
  'br',
  'caption',
]);

/**
 * The main text of an HTML page (also DOCX through mammoth's HTML): headings,
 * paragraphs and table rows; scripts, styles and page chrome (nav, footer,
 * aside) are left out.
 */
export function extractHtml(html: string): Block[] {
  const blocks: Block[] = [];
  let text = '';
  let skipDepth = 0;
  let heading: number | undefined;
  let row: string[] | undefined;
  let cell: string | undefined;

  const flush = () => {
    const clean = text.replace(/\s+/g, ' ').trim();
    text = '';
    if (!clean) return;
    blocks.push(heading ? { kind: 'heading', level: heading, text: clean } : { kind: 'paragraph', text: clean });
  };

  const parser = new Parser(
    {
      onopentag(name) {
        if (skipDepth > 0 || SKIP.has(name)) {
          skipDepth++;
          return;
        }
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = Number(name[1]);
        } else if (name === 'tr') {
          flush();
          row = [];
        } else if ((name === 'td' || name === 'th') && row) {
          cell = '';
        } else if (BLOCK.has(name) && cell === undefined) flush();
      },
      ontext(data) {
        if (skipDepth > 0) return;
        if (cell !== undefined) cell += data;
        else text += data;
      },
      onclosetag(name) {
        if (skipDepth > 0) {
          skipDepth--;
          return;
        }
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = undefined;
        } else if ((name === 'td' || name === 'th') && row && cell !== undefined) {
          row.push(cell.replace(/\s+/g, ' ').trim());
          cell = undefined;
        } else if (name === 'tr' && row) {
          const cells = row.filter((c) => c.length > 0);
          if (cells.length > 0) blocks.push({ kind: 'row', text: row.join(' | ') });
          row = undefined;
        } else if (BLOCK.has(name) && cell === undefined) flush();
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flush();
  return blocks;
}
