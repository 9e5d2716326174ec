import CFB from 'cfb';
import { checkInflatedSizes, checkZipBomb, readZipDirectory } from './zip.js';
import { FORMAT_NAMES, permanent, type ExtractionLimits, type Format } from './types.js';

const startsWith = (bytes: Buffer, magic: number[], at = 0) => magic.every((b, i) => bytes[at + i] === b);

/** Binary formats we recognise only to name them in a mismatch message. */
const OTHER_MAGIC: [number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'a GIF image'],
  [[0x1f, 0x8b], 'a gzip archive'],
  [[0x52, 0x61, 0x72, 0x21], 'a RAR archive'],
  [[0x37, 0x7a, 0xbc, 0xaf], 'a 7-Zip archive'],
  [[0x7f, 0x45, 0x4c, 0x46], 'an executable (ELF)'],
  [[0x4d, 0x5a], 'a Windows executable'],
];

export type Detected = { format: Format } | { other: string };

/**
 * What the bytes are, regardless of the file's name: PDF and the zip (OOXML) and
 * OLE2 (legacy Office) containers by their magic numbers and inner entries;
 * anything else that decodes as text is text.
 */
export function detectBinary(bytes: Buffer, limits: ExtractionLimits): Detected | undefined {
  if (bytes.subarray(0, 1024).includes('%PDF-')) return { format: 'pdf' };
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) {
    const entries = readZipDirectory(bytes);
    checkZipBomb(entries, limits);
    const names = new Set(entries.map((e) => e.name));
    const format: Format | undefined = names.has('word/document.xml')
      ? 'docx'
      : names.has('xl/workbook.xml')
        ? 'xlsx'
        : names.has('ppt/presentation.xml')
          ? 'pptx'
          : undefined;
    if (!format) return { other: 'a zip archive' };
    checkInflatedSizes(bytes, entries, limits);
    return { format };
  }
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) {
    let container: CFB.CFB$Container;
    try {
      container = CFB.read(bytes, { type: 'buffer' });
    } catch {
      throw permanent('The file is corrupt: its Office 97-2003 container cannot be read');
    }
    const streams = new Set(container.FullPaths.map((p) => p.replace(/\/$/, '').split('/').pop() ?? ''));
    if (streams.has('EncryptedPackage') || streams.has('EncryptionInfo')) {
      throw permanent('The file is password-protected (encrypted); remove the password and upload it again');
    }
    if (streams.has('WordDocument')) return { format: 'doc' };
    if (streams.has('Workbook') || streams.has('Book')) return { format: 'xls' };
    if (streams.has('PowerPoint Document')) return { format: 'ppt' };
    return { other: 'an Office 97-2003 file of another kind' };
  }
  for (const [magic, name] of OTHER_MAGIC) if (startsWith(bytes, magic)) return { other: name };
  return undefined;
}

const TEXT_FORMATS: Format[] = ['txt', 'md', 'csv', 'html', 'json', 'xml'];

/** Decodes text by its byte order mark (UTF-8 or UTF-16), else UTF-8, else Windows-1252. */
export function decodeText(bytes: Buffer): string | undefined {
  if (startsWith(bytes, [0xff, 0xfe])) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (startsWith(bytes, [0xfe, 0xff])) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const body = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? bytes.subarray(3) : bytes;
  if (body.subarray(0, 65536).includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return new TextDecoder('windows-1252').decode(body);
  }
}

function guessTextFormat(text: string): Format {
  const head = text.trimStart().slice(0, 512).toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
  if (head.startsWith('<?xml') || head.startsWith('<')) return 'xml';
  if (head.startsWith('{') || head.startsWith('[')) return 'json';
  return 'txt';
}

/** Does text plausibly have the format its name claims? Returns a reason when not. */
function textMismatch(text: string, claimed: Format): string | undefined {
  const head = text.trimStart().slice(0, 4096).toLowerCase();
  if (claimed === 'xml' && !head.startsWith('<')) return 'its content is not XML';
  if (claimed === 'html' && !/<(html|head|body|div|p|h[1-6]|main|article|section|table|!doctype)[\s>]/i.test(head)) {
    return 'its content is not HTML';
  }
  return undefined;
}

export interface Sniffed {
  format: Format;
  /** Decoded text, for the text formats. */
  text?: string;
}

/**
 * The format to extract with, from the bytes. A file whose content is not what
 * its name says fails: the name is what the uploader meant, the bytes are what
 * they sent.
 */
export function sniff(bytes: Buffer, filename: string, claimed: Format | undefined, limits: ExtractionLimits): Sniffed {
  if (bytes.length === 0) throw permanent('The file is empty');
  const named = claimed ? `"${filename}" is named as ${FORMAT_NAMES[claimed]}` : `"${filename}"`;
  const binary = detectBinary(bytes, limits);
  if (binary && 'other' in binary) throw permanent(`${named} but its content is ${binary.other}`);
  if (binary) {
    if (claimed && claimed !== binary.format) throw permanent(`${named} but its content is ${FORMAT_NAMES[binary.format]}`);
    return { format: binary.format };
  }
  const text = decodeText(bytes);
  if (text === undefined) throw permanent(`${named} but its content is binary data of an unknown kind`);
  if (claimed && !TEXT_FORMATS.includes(claimed)) throw permanent(`${named} but its content is text`);
  const format = claimed ?? guessTextFormat(text);
  const mismatch = textMismatch(text, format);
  if (mismatch) throw permanent(`${named} but ${mismatch}`);
  return { format, text };
}
