export function dot(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}

/** The best k offered (rowid, score) pairs, kept in a min-heap on score (ties: the lower rowid wins). */
export function topK(k: number) {
  const heap: { rowid: number; score: number }[] = [];
  const worse = (a: { rowid: number; score: number }, b: { rowid: number; score: number }) =>
    a.score < b.score || (a.score === b.score && a.rowid > b.rowid);
  const swap = (i: number, j: number) => ([heap[i], heap[j]] = [heap[j]!, heap[i]!]);
  return {
    offer(rowid: number, score: number) {
      const entry = { rowid, score };
      if (heap.length < k) {
        heap.push(entry);
        for (let i = heap.length - 1; i > 0;) {
          const parent = (i - 1) >> 1;
          if (!worse(heap[i]!, heap[parent]!)) break;
          swap(i, parent);
          i = parent;
        }
        return;
      }
      if (!worse(heap[0]!, entry)) return;
      heap[0] = entry;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
        if (m === i) return;
        swap(i, m);
        i = m;
      }
    },
    sorted: () => [...heap].sort((a, b) => b.score - a.score || a.rowid - b.rowid),
  };
}
