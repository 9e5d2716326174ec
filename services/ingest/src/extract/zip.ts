import { permanent, type ExtractionLimits } from './types.js';

export interface ZipEntry {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
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
    const compressedSize = bytes.readUInt32LE(offset + 20);
    const uncompressedSize = bytes.readUInt32LE(offset + 24);
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    const name = bytes.toString('utf8', offset + 46, offset + 46 + nameLength);
    entries.push({ name, compressedSize, uncompressedSize });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Refuses containers that would inflate to far more than they weigh. */
export function checkZipBomb(entries: ZipEntry[], limits: ExtractionLimits): void {
  const total = entries.reduce((sum, e) => sum + e.uncompressedSize, 0);
  if (total > limits.maxUncompressedBytes) {
    throw permanent(
      `The file expands to ${Math.round(total / 1048576)} MB when unpacked, over the ${Math.round(limits.maxUncompressedBytes / 1048576)} MB limit (possible decompression bomb)`,
    );
  }
  for (const e of entries) {
    // Small entries compress extremely well legitimately; only big ones matter.
    if (e.uncompressedSize > 1048576 && e.uncompressedSize / Math.max(1, e.compressedSize) > limits.maxCompressionRatio) {
      throw permanent(
        `The file looks like a decompression bomb: ${e.name} is ${Math.round(e.uncompressedSize / Math.max(1, e.compressedSize))} times larger unpacked than packed`,
      );
    }
  }
}
