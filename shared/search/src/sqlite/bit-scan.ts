/**
 * One organization's sign bits, packed in 32-bit words, one row after another, with
 * each row's chunk rowid: the compact copy in memory that dense retrieval scans
 * (48 bytes of bits and 4 of rowid per 384-dimension vector, plus its slot in a map).
 */
export interface OrgBits {
  readonly words: number;
  size(): number;
  set(rowid: number, bits: Uint8Array): void;
  remove(rowid: number): void;
  /** Rows' bits and rowids, valid for size() rows. */
  view(): { bits: Uint32Array; rowids: Int32Array | Float64Array };
}

export function orgBits(words: number): OrgBits {
  let capacity = 1024;
  let bits = new Uint32Array(capacity * words);
  let rowids = new Float64Array(capacity);
  let n = 0;
  const slotOf = new Map<number, number>();
  const grow = () => {
    capacity *= 2;
    const b = new Uint32Array(capacity * words);
    b.set(bits);
    bits = b;
    const r = new Float64Array(capacity);
    r.set(rowids);
    rowids = r;
  };
  return {
    words,
    size: () => n,
    set(rowid, row) {
      let slot = slotOf.get(rowid);
      if (slot === undefined) {
        if (n === capacity) grow();
        slot = n++;
        slotOf.set(rowid, slot);
        rowids[slot] = rowid;
      }
      const padded = new Uint8Array(words * 4);
      padded.set(row.subarray(0, words * 4));
      bits.set(new Uint32Array(padded.buffer), slot * words);
    },
    remove(rowid) {
      const slot = slotOf.get(rowid);
      if (slot === undefined) return;
      // The last row moves into the freed slot.
      const last = --n;
      if (slot !== last) {
        bits.copyWithin(slot * words, last * words, (last + 1) * words);
        rowids[slot] = rowids[last]!;
        slotOf.set(rowids[slot]!, slot);
      }
      slotOf.delete(rowid);
    },
    view: () => ({ bits, rowids }),
  };
}

/**
 * The k rows nearest the query by Hamming distance, nearest first (ties by rowid): every
 * distance once (SWAR popcount), then a histogram of the distances gives the cut-off,
 * so selection is linear whatever k.
 */
export function hammingNearest(org: OrgBits, query: Uint32Array, k: number): number[] {
  const n = org.size();
  if (n === 0 || k <= 0) return [];
  const { bits, rowids } = org.view();
  const w = org.words;
  const dist = new Uint16Array(n);
  const histogram = new Uint32Array(w * 32 + 1);
  for (let i = 0, o = 0; i < n; i++, o += w) {
    let s = 0;
    for (let j = 0; j < w; j++) {
      let x = bits[o + j]! ^ query[j]!;
      x = x - ((x >>> 1) & 0x55555555);
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      s += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    dist[i] = s;
    histogram[s]!++;
  }
  let cut = 0;
  for (let seen = 0; cut < histogram.length; cut++) {
    seen += histogram[cut]!;
    if (seen >= k) break;
  }
  const picked: { rowid: number; d: number }[] = [];
  for (let i = 0; i < n; i++) if (dist[i]! <= cut) picked.push({ rowid: rowids[i]!, d: dist[i]! });
  picked.sort((a, b) => a.d - b.d || a.rowid - b.rowid);
  return picked.slice(0, k).map((p) => p.rowid);
}
