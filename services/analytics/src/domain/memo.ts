/**
 * A pure function of a string, memoised in bounded memory: the answers of a
 * fold cite the same URLs and hosts over and over, and parsing them again
 * was most of the cost of a citation. Two generations of at most `size`
 * entries: when the young one is full it becomes the old one and the old one
 * is dropped, so at most 2 x size entries are held, and a key still in use is
 * kept (a hit in the old generation is copied back into the young one).
 * Values are shared between callers, so they must not be mutated.
 */
export function boundedMemo<V extends object | string | number | boolean | null>(fn: (key: string) => V, size: number): (key: string) => V {
  let young = new Map<string, V>();
  let old = new Map<string, V>();
  const remember = (key: string, value: V) => {
    if (young.size >= size) {
      old = young;
      young = new Map();
    }
    young.set(key, value);
    return value;
  };
  return (key) => {
    const hit = young.get(key);
    if (hit !== undefined) return hit;
    const aged = old.get(key);
    return remember(key, aged !== undefined ? aged : fn(key));
  };
}
