import { inflateRawSync } from 'node:zlib';
import { humanSize as size, permanent, type ExtractionLimits } from './types.js';

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated (the only methods OOXML uses). */
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Offset of the entry's local header. */
  localOffset: number;
}

/**
 * Reads a zip's central directory without inflating anything: the entry names
 * tell the OOXML kind apart, and the declared sizes expose decompression bombs
 * before any library inflates them.
 */
export function readZipDirectory(bytes: Buffer): ZipEntry[] {
  // End of central directory: signature 0x06054b50, within the last 64 KiB + 22 bytes.
  const min = Math.max(0, bytes.length - 0xffff - 22);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= min; i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw permanent('The file is corrupt: its zip directory is missing (truncated or damaged)');
  const count = bytes.readUInt16LE(eocd + 10);
  let offset = bytes.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (offset + 46 > bytes.length || bytes.readUInt32LE(offset) !== 0x02014b50) {
      throw permanent('The file is corrupt: its zip directory is damaged');
    }
    const method = bytes.readUInt16LE(offset + 10);
    const compressedSize = bytes.readUInt32LE(offset + 20);
    const uncompressedSize = bytes.readUInt32LE(offset + 24);
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    const localOffset = bytes.readUInt32LE(offset + 42);
    const name = bytes.toString('utf8', offset + 46, offset + 46 + nameLength);
    entries.push({ name, method, compressedSize, uncompressedSize, localOffset });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Refuses containers that would inflate to far more than they weigh. */
export function checkZipBomb(entries: ZipEntry[], limits: ExtractionLimits): void {
  const total = entries.reduce((sum, e) => sum + e.uncompressedSize, 0);
  if (total > limits.maxUncompressedBytes) {
    throw permanent(
      `The file expands to ${size(total)} when unpacked, over the ${size(limits.maxUncompressedBytes)} limit (possible decompression bomb)`,
    );
  }
  for (const e of entries) {
    if (e.uncompressedSize > limits.maxStreamBytes) {
      throw permanent(
        `The file's part ${e.name} unpacks to ${size(e.uncompressedSize)}, over the ${size(limits.maxStreamBytes)} limit for one part`,
      );
    }
    // Small entries compress extremely well legitimately; only big ones matter.
    if (e.uncompressedSize > 1048576 && e.uncompressedSize / Math.max(1, e.compressedSize) > limits.maxCompressionRatio) {
      throw permanent(
        `The file looks like a decompression bomb: ${e.name} is ${Math.round(e.uncompressedSize / Math.max(1, e.compressedSize))} times larger unpacked than packed`,
      );
    }
  }
}

/** Where an entry's data starts: after its local header, whose name and extra field may differ from the directory's. */
function dataStart(bytes: Buffer, entry: ZipEntry): number {
  const at = entry.localOffset;
  if (at + 30 > bytes.length || bytes.readUInt32LE(at) !== 0x04034b50) {
    throw permanent(`The file is corrupt: the zip entry ${entry.name} is missing`);
  }
  return at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
}

/**
 * The declared sizes checked by checkZipBomb are only claims: a crafted file can
 * declare a few KB and inflate to gigabytes, and the zip libraries notice the
 * mismatch only after inflating it all (in memory the worker's heap limit does
 * not cover). So every deflated entry is inflated here first with a hard cap of
 * its declared size (and of what is left of the total limit); more output than
 * that is a bomb, whatever the headers say.
 */
export function checkInflatedSizes(bytes: Buffer, entries: ZipEntry[], limits: ExtractionLimits): void {
  let total = 0;
  for (const entry of entries) {
    if (entry.method !== 8) {
      total += entry.compressedSize;
      continue;
    }
    const start = dataStart(bytes, entry);
    const packed = bytes.subarray(start, start + entry.compressedSize);
    const cap = Math.max(1, Math.min(entry.uncompressedSize, limits.maxStreamBytes, limits.maxUncompressedBytes - total));
    let inflated: number;
    try {
      inflated = inflateRawSync(packed, { maxOutputLength: cap }).length;
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw permanent(
          entry.uncompressedSize > limits.maxUncompressedBytes - total
            ? `The file expands to more than the ${size(limits.maxUncompressedBytes)} limit when unpacked (possible decompression bomb)`
            : `The file looks like a decompression bomb: ${entry.name} unpacks to more than the ${entry.uncompressedSize} bytes it declares`,
        );
      }
      throw permanent(`The file is corrupt: the zip entry ${entry.name} cannot be unpacked (${(err as Error).message})`);
    }
    total += inflated;
  }
}
