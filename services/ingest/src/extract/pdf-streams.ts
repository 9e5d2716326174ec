import { constants, inflateSync } from 'node:zlib';
import { humanSize as size, permanent, type ExtractionLimits } from './types.js';

const STREAM = Buffer.from('stream', 'latin1');
const END_STREAM = Buffer.from('endstream', 'latin1');
/** How far before `stream` its dictionary is looked for. */
const DICT_WINDOW = 4096;

/**
 * pdf.js inflates a Flate stream whole when it reads it, whatever the file
 * weighs: a 1 MB PDF can hold a stream that inflates to gigabytes. So before
 * pdf.js sees the file, every Flate-encoded stream is inflated here with a hard
 * output cap (one stream at most maxStreamBytes; all of them together at most
 * maxUncompressedBytes), through every Flate layer of its filter chain. More
 * output than that fails the item; nothing is kept, so memory stays bounded by
 * the caps. Streams with other filters (images: DCT, JPX, CCITT) are left alone:
 * reading text does not decode them.
 */
export function checkPdfStreams(bytes: Buffer, limits: ExtractionLimits): void {
  let total = 0;
  let from = 0;
  for (;;) {
    const at = bytes.indexOf(STREAM, from);
    if (at < 0) return;
    from = at + STREAM.length;
    // `endstream`, or a word that merely contains "stream".
    if (at >= 3 && bytes.toString('latin1', at - 3, at) === 'end') continue;
    let start = from;
    if (bytes[start] === 0x0d) start++;
    if (bytes[start] === 0x0a) start++;
    if (start === from) continue; // the keyword is followed by an end of line
    const end = bytes.indexOf(END_STREAM, start);
    if (end < 0) return;
    from = end + END_STREAM.length;
    const before = bytes.toString('latin1', Math.max(0, at - DICT_WINDOW), at);
    const dict = before.slice(Math.max(0, before.lastIndexOf('obj')));
    const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict)?.[1] ?? '';
    const layers = (filter.match(/\/(FlateDecode|Fl)\b/g) ?? []).length;
    if (layers === 0) continue;
    let data: Buffer = bytes.subarray(start, end);
    for (let layer = 0; layer < layers; layer++) {
      const left = limits.maxUncompressedBytes - total;
      const cap = Math.max(1, Math.min(limits.maxStreamBytes, left));
      try {
        // Sync flush: a truncated stream yields what it has (as pdf.js reads it), not an error.
        data = inflateSync(data, { maxOutputLength: cap, finishFlush: constants.Z_SYNC_FLUSH });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
          throw permanent(
            cap < limits.maxStreamBytes
              ? `The PDF's compressed streams expand to more than the ${size(limits.maxUncompressedBytes)} limit in total (possible decompression bomb)`
              : `The PDF holds a compressed stream that expands to more than the ${size(limits.maxStreamBytes)} limit for one stream (possible decompression bomb)`,
          );
        }
        break; // not valid Flate data: pdf.js decides what to make of it
      }
    }
    total += data.length;
  }
}
