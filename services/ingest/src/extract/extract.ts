import { sniff } from './sniff.js';
import { extractCsv } from './formats/csv.js';
import { extractHtml } from './formats/html.js';
import { extractJson } from './formats/json.js';
import { extractPdf } from './formats/pdf.js';
import { extractPptx, extractPpt } from './formats/slides.js';
import { extractSpreadsheet } from './formats/sheet.js';
import { extractMarkdown, extractPlainText } from './formats/text.js';
import { extractDoc, extractDocx } from './formats/word.js';
import { extractXml } from './formats/xml.js';
import {
  formatOfName,
  permanent,
  tooManyCharacters,
  type Block,
  type ExtractionLimits,
  type ExtractionResult,
  type Format,
} from './types.js';

export { DEFAULT_LIMITS, type ExtractionLimits } from './types.js';

/**
 * Extracts one file: the format comes from its bytes (checked against its name),
 * then the format's library turns it into structural blocks. A file with no
 * text at all fails: there is nothing to index or cite.
 */
export async function extractFile(
  input: { bytes: Buffer; filename: string; format?: Format },
  limits: ExtractionLimits,
): Promise<ExtractionResult> {
  const claimed = input.format ?? formatOfName(input.filename);
  const { format, text } = sniff(input.bytes, input.filename, claimed, limits);
  if (text !== undefined && text.length > limits.maxCharacters) throw tooManyCharacters(limits);
  const blocks = await extractAs(format, input.bytes, text ?? '', limits);
  if (blocks.reduce((n, b) => n + b.text.length, 0) > limits.maxCharacters) throw tooManyCharacters(limits);
  if (!blocks.some((b) => b.text.trim().length > 0)) {
    throw permanent(
      format === 'pdf'
        ? 'The PDF contains no text (it may be a scanned image; text recognition is not supported)'
        : 'The file contains no text to extract',
    );
  }
  return { format, blocks };
}

async function extractAs(format: Format, bytes: Buffer, text: string, limits: ExtractionLimits): Promise<Block[]> {
  switch (format) {
    case 'pdf':
      return extractPdf(bytes, limits);
    case 'docx':
      return extractDocx(bytes);
    case 'doc':
      return extractDoc(bytes);
    case 'xls':
    case 'xlsx':
      return extractSpreadsheet(bytes);
    case 'pptx':
      return extractPptx(bytes);
    case 'ppt':
      return extractPpt(bytes);
    case 'html':
      return extractHtml(text);
    case 'csv':
      return extractCsv(text);
    case 'json':
      return extractJson(text);
    case 'xml':
      return extractXml(text);
    case 'md':
      return extractMarkdown(text);
    case 'txt':
      return extractPlainText(text);
    default: {
      const never: never = format;
      throw permanent(`Unsupported format ${String(never)}`);
    }
  }
}
