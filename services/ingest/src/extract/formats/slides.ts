import JSZip from 'jszip';
import CFB from 'cfb';
import { Parser } from 'htmlparser2';
import { permanent, type Block } from '../types.js';

const slideNumber = (path: string) => Number(/slide(\d+)\.xml$/.exec(path)?.[1] ?? 0);

/** Paragraphs (a:p) of a slide's DrawingML text runs (a:t). */
function slideParagraphs(xml: string): string[] {
  const paragraphs: string[] = [];
  let current: string | undefined;
  let inText = false;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'a:p') current = '';
        else if (name === 'a:t') inText = true;
        else if (name === 'a:br' && current !== undefined) current += ' ';
      },
      ontext(data) {
        if (inText && current !== undefined) current += data;
      },
      onclosetag(name) {
        if (name === 'a:t') inText = false;
        else if (name === 'a:p' && current !== undefined) {
          const clean = current.replace(/\s+/g, ' ').trim();
          if (clean) paragraphs.push(clean);
          current = undefined;
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
  return paragraphs;
}

/** A slide's first paragraph is its title; the rest is its body. */
function slideBlocks(slide: number, paragraphs: string[]): Block[] {
  return paragraphs.map((text, i): Block => (i === 0 ? { kind: 'heading', level: 1, text, slide } : { kind: 'paragraph', text, slide }));
}

/** PPTX: slides in order (ppt/slides/slideN.xml), speaker notes left out. */
export async function extractPptx(bytes: Buffer): Promise<Block[]> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch (err) {
    throw permanent(`The PPTX file is corrupt and cannot be read (${(err as Error).message})`);
  }
  const slides = Object.keys(zip.files)
    .filter((p) => /^ppt\/slides\/slide\d+\.xml$/.test(p))
    .sort((a, b) => slideNumber(a) - slideNumber(b));
  const blocks: Block[] = [];
  for (const path of slides) {
    const xml = await zip.file(path)!.async('string');
    blocks.push(...slideBlocks(slideNumber(path), slideParagraphs(xml)));
  }
  return blocks;
}

// PowerPoint 97-2003 binary records ([MS-PPT]): an 8-byte header (version/instance,
// type, length); version 0xF marks a container.
const RT_SLIDE = 0x03ee;
const RT_MAIN_MASTER = 0x03f8;
const RT_NOTES = 0x03f0;
const RT_SLIDE_LIST_WITH_TEXT = 0x0ff0;
const RT_SLIDE_PERSIST_ATOM = 0x03f3;
const RT_TEXT_CHARS = 0x0fa0;
const RT_TEXT_BYTES = 0x0fa8;

/**
 * Legacy PPT: no maintained npm extractor exists, so this walks the
 * "PowerPoint Document" stream (read with cfb) and collects the text atoms of
 * each Slide container in stream order; masters and notes are skipped. Files
 * whose slides hold no text atoms fall back to the SlideListWithText outline.
 */
export function extractPpt(bytes: Buffer): Block[] {
  let stream: Buffer;
  try {
    const container = CFB.read(bytes, { type: 'buffer' });
    const entry = CFB.find(container, 'PowerPoint Document');
    if (!entry?.content) throw new Error('no PowerPoint Document stream');
    stream = Buffer.from(entry.content as Uint8Array);
  } catch (err) {
    throw permanent(`The PPT file is corrupt and cannot be read (${(err as Error).message})`);
  }
  const bySlide: string[][] = [];
  const outline: string[][] = [];
  const textOf = (type: number, start: number, length: number) =>
    type === RT_TEXT_CHARS ? stream.toString('utf16le', start, start + length) : stream.toString('latin1', start, start + length);

  const walk = (start: number, end: number, context: 'top' | 'slide' | 'outline' | 'skip') => {
    let offset = start;
    while (offset + 8 <= end) {
      const verInstance = stream.readUInt16LE(offset);
      const type = stream.readUInt16LE(offset + 2);
      const length = stream.readUInt32LE(offset + 4);
      const body = offset + 8;
      if (body + length > end) break;
      if ((verInstance & 0x0f) === 0x0f) {
        let next = context;
        if (type === RT_SLIDE) {
          bySlide.push([]);
          next = 'slide';
        } else if (type === RT_MAIN_MASTER || type === RT_NOTES) next = 'skip';
        else if (type === RT_SLIDE_LIST_WITH_TEXT) next = verInstance >> 4 === 0 ? 'outline' : 'skip';
        walk(body, body + length, next);
      } else if (context === 'outline' && type === RT_SLIDE_PERSIST_ATOM) {
        outline.push([]);
      } else if (type === RT_TEXT_CHARS || type === RT_TEXT_BYTES) {
        const text = textOf(type, body, length).replace(/[\r\v]+/g, '\n');
        const target = context === 'slide' ? bySlide[bySlide.length - 1] : context === 'outline' ? outline[outline.length - 1] : undefined;
        for (const line of text.split('\n')) {
          const clean = line.replace(/\s+/g, ' ').trim();
          if (clean && target) target.push(clean);
        }
      }
      offset = body + length;
    }
  };
  walk(0, stream.length, 'top');
  const slides = bySlide.some((s) => s.length > 0) ? bySlide : outline;
  return slides.flatMap((paragraphs, i) => slideBlocks(i + 1, paragraphs));
}
