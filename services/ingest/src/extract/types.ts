/**
 * What an extractor produces: the document as a flat list of structural blocks,
 * each knowing where it came from, so chunks (and citations) can point back to a
 * page, sheet, slide or heading. Text is clean: no Markdown or HTML markup, inline
 * code in backticks. A code block (a Markdown fence, an HTML <pre>) keeps its lines
 * as they are, newlines and indentation included, without fence lines; chunks
 * write it fenced so it is never read as prose.
 */
export interface Block {
  kind: 'heading' | 'paragraph' | 'row' | 'code';
  text: string;
  /** Heading level, 1 = top. */
  level?: number;
  page?: number;
  sheet?: string;
  slide?: number;
  /** 1-based row number of a table row (sheets, CSV). */
  row?: number;
}

export const FORMATS = ['pdf', 'txt', 'md', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'html', 'json', 'xml'] as const;
export type Format = (typeof FORMATS)[number];

export const FORMAT_NAMES: Record<Format, string> = {
  pdf: 'PDF',
  txt: 'plain text',
  md: 'Markdown',
  csv: 'CSV',
  doc: 'Word 97-2003 (DOC)',
  docx: 'Word (DOCX)',
  xls: 'Excel 97-2003 (XLS)',
  xlsx: 'Excel (XLSX)',
  ppt: 'PowerPoint 97-2003 (PPT)',
  pptx: 'PowerPoint (PPTX)',
  html: 'HTML',
  json: 'JSON',
  xml: 'XML',
};

export const MEDIA_TYPES: Record<Format, string> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  html: 'text/html',
  json: 'application/json',
  xml: 'application/xml',
};

/** The format a file name claims, from its extension. */
export function formatOfName(filename: string): Format | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
  if (!ext) return undefined;
  const aliases: Record<string, Format> = { htm: 'html', text: 'txt', markdown: 'md' };
  const format = aliases[ext] ?? ext;
  return (FORMATS as readonly string[]).includes(format) ? (format as Format) : undefined;
}

/**
 * A failure of one file. Permanent ones (corrupt, encrypted, empty, mismatch,
 * too big, bomb) fail the item at once; others are retried with backoff.
 */
export class ExtractionError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}

export const permanent = (message: string) => new ExtractionError(message, true);

/**
 * What one item may become (issue 13): each cap fails the item with a reason
 * instead of letting a small hostile file take memory, disk, or a worker for minutes.
 */
export interface ExtractionLimits {
  /** Largest total decompressed size of one file: all zip entries (OOXML), or all Flate streams of a PDF. */
  maxUncompressedBytes: number;
  /** Largest uncompressed/compressed ratio accepted for a big zip entry. */
  maxCompressionRatio: number;
  /** Largest decompressed size of one stream: one zip entry, or one PDF stream. */
  maxStreamBytes: number;
  /** Most characters of text one file may yield. */
  maxCharacters: number;
  /** Most pages of a PDF. */
  maxPages: number;
}

/** The defaults of the ingest service's settings (config.ts), for tools and tests. */
export const DEFAULT_LIMITS: ExtractionLimits = {
  maxUncompressedBytes: 209715200,
  maxCompressionRatio: 200,
  maxStreamBytes: 67108864,
  maxCharacters: 10_000_000,
  maxPages: 3000,
};

/** The reason an item fails when its text is over maxCharacters. */
export const tooManyCharacters = (limits: Pick<ExtractionLimits, 'maxCharacters'>) =>
  permanent(
    `The file holds more than ${limits.maxCharacters.toLocaleString('en-US')} characters of text, over the limit per file; split it into smaller files`,
  );

/** A size for people: MB from 1 MB up, else KB. */
export const humanSize = (bytes: number) =>
  bytes >= 1048576 ? `${Math.round((bytes / 1048576) * 10) / 10} MB` : `${Math.round((bytes / 1024) * 10) / 10} KB`;

export interface ExtractionResult {
  format: Format;
  blocks: Block[];
}

/** What an extraction worker says once its code is loaded: the pool's time limit per file starts then. */
export const WORKER_READY = 'ready';
