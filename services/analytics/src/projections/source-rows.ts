import { emptySourceCounts, type SourceCounts, type SourceMap, type SourceTally } from '../domain/counts.js';

/**
 * The stored form of a source row's maps: per family (domains, pages,
 * registrable domains, rules) the keys, sorted, and beside them the answers
 * citing each (runs) and its citations. A key with a citation always has a
 * run, so the two maps share their keys and each key is written once (the
 * maps were two thirds of the bytes the fold wrote), and arrays parse and
 * add up faster than objects with thousands of keys. Sorted keys make a row
 * the same whatever order its answers were folded in (so a replay, batched
 * differently, writes the same rows) and let two rows be added in one pass.
 */
export type Family = [keys: string[], runs: number[], citations: number[]];
export interface CompactSources {
  domains: Family;
  pages: Family;
  sites: Family;
  rules: Family;
}

/** Each family's name and the two SourceCounts maps it holds. */
export const FAMILIES = [
  ['domains', 'domain_runs', 'domain_citations'],
  ['pages', 'page_runs', 'page_citations'],
  ['sites', 'site_runs', 'site_citations'],
  ['rules', 'rule_runs', 'rule_citations'],
] as const satisfies readonly (readonly [keyof CompactSources, SourceMap, SourceMap])[];

/** Rows folded before this form keep the SourceCounts maps (objects); both are read. */
export const isCompact = (doc: object): doc is CompactSources => 'pages' in doc;

const emptyFamily = (): Family => [[], [], []];

type CountMap = Map<string, number> | Record<string, number>;
const own = (m: Record<string, number>, k: string) => (Object.prototype.hasOwnProperty.call(m, k) ? m[k]! : 0);

/** The counts of the keys in order from a map (absent keys are 0), in an array of exactly their number. */
function countsAt(m: CountMap | undefined, keys: string[]): number[] {
  const out = new Array<number>(keys.length);
  if (m instanceof Map) for (let i = 0; i < keys.length; i++) out[i] = m.get(keys[i]!) ?? 0;
  else if (m) for (let i = 0; i < keys.length; i++) out[i] = own(m, keys[i]!);
  else out.fill(0);
  return out;
}

/** Below this many keys an insertion sort: most deltas hold a few keys, and Array#sort allocates a work area per call. */
const FEW_KEYS = 12;

/** Sorts distinct keys in place in code unit order (the order of Array#sort without a comparator, which any correct sort gives for distinct keys). */
function sortKeys(keys: string[]): string[] {
  if (keys.length > FEW_KEYS) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = k;
  }
  return keys;
}

/**
 * A family from a runs and a citations map (a Map or a stored object). Every
 * delta of a flush goes through here, so the maps are read once per key,
 * without a closure or a type test per key.
 */
export function familyOf(runs: CountMap | undefined, citations: CountMap | undefined): Family {
  if (!citations) return emptyFamily();
  const keys = sortKeys(citations instanceof Map ? Array.from(citations.keys()) : Object.keys(citations));
  return [keys, countsAt(runs, keys), countsAt(citations, keys)];
}

/** The compact form of a tally, of stored SourceCounts (maps a row lacks are empty families), or of a compact row itself. */
export function compactOf(s: SourceTally | SourceCounts | CompactSources): CompactSources {
  if (isCompact(s)) return { domains: s.domains, pages: s.pages, sites: s.sites, rules: s.rules };
  const out = {} as CompactSources;
  for (const [name, runs, citations] of FAMILIES) out[name] = familyOf(s[runs], s[citations]);
  return out;
}

/**
 * a + sign * b in one pass over both sorted key lists; an entry whose runs and
 * citations both reach 0 is dropped (a fold never stores one).
 */
export function addFamily(a: Family, b: Family, sign: 1 | -1 = 1): Family {
  const [ak, ar, ac] = a;
  const [bk, br, bc] = b;
  if (bk.length === 0) return a;
  // Written by index into arrays of the largest possible length, cut to the entries kept (no closure, no growing).
  const most = ak.length + bk.length;
  const keys = new Array<string>(most);
  const runs = new Array<number>(most);
  const cites = new Array<number>(most);
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < ak.length || j < bk.length) {
    let k: string;
    let r: number;
    let c: number;
    if (j >= bk.length || (i < ak.length && ak[i]! < bk[j]!)) {
      k = ak[i]!;
      r = ar[i]!;
      c = ac[i]!;
      i++;
    } else if (i >= ak.length || bk[j]! < ak[i]!) {
      k = bk[j]!;
      r = sign * br[j]!;
      c = sign * bc[j]!;
      j++;
    } else {
      k = ak[i]!;
      r = ar[i]! + sign * br[j]!;
      c = ac[i]! + sign * bc[j]!;
      i++;
      j++;
    }
    if (r === 0 && c === 0) continue;
    keys[n] = k;
    runs[n] = r;
    cites[n] = c;
    n++;
  }
  keys.length = n;
  runs.length = n;
  cites.length = n;
  return [keys, runs, cites];
}

/** a + sign * b, family by family. */
export function addCompact(a: CompactSources, b: CompactSources, sign: 1 | -1 = 1): CompactSources {
  const out = {} as CompactSources;
  for (const [name] of FAMILIES) out[name] = addFamily(a[name], b[name], sign);
  return out;
}

/**
 * The maps listed summed over stored rows of either form, as SourceCounts
 * dictionaries (what the reports take), and whether a row predates the
 * per-rule and registrable-domain maps. Compact rows (the usual case) are
 * summed family by family by merging their sorted keys (addFamily): a year's
 * report adds twelve rows of thousands of pages, and merging sorted arrays
 * costs about half of adding every entry to a Map. Rows of the earlier form
 * go through Maps (adding to a dictionary-mode object, and for-in over one,
 * cost several times more).
 */
export function sumSourceRows(docs: readonly (SourceCounts | CompactSources)[], maps: readonly SourceMap[]) {
  const wanted = FAMILIES.filter(([, runs, citations]) => maps.includes(runs) || maps.includes(citations));
  const families = new Map(wanted.map(([name]) => [name, emptyFamily()]));
  const sums = new Map<SourceMap, Map<string, number>>(maps.map((m) => [m, new Map()]));
  let legacy = false;
  let mapped = false;
  const add = (into: Map<string, number>, k: string, n: number) => into.set(k, (into.get(k) ?? 0) + n);
  for (const d of docs) {
    if (isCompact(d)) {
      for (const [name, family] of families) families.set(name, addFamily(family, d[name]));
      continue;
    }
    mapped = true;
    if (d.site_citations === undefined && Object.keys(d.page_citations).length > 0) legacy = true;
    for (const [m, into] of sums) {
      const from = d[m];
      if (from) for (const k of Object.keys(from)) add(into, k, from[k]!);
    }
  }
  const merged = emptySourceCounts();
  for (const [name, runs, citations] of wanted) {
    const [keys, r, c] = families.get(name)!;
    const sr = maps.includes(runs) ? merged[runs] : undefined;
    const sc = maps.includes(citations) ? merged[citations] : undefined;
    if (!mapped) {
      for (let i = 0; i < keys.length; i++) {
        if (sr) sr[keys[i]!] = r[i]!;
        if (sc) sc[keys[i]!] = c[i]!;
      }
      continue;
    }
    for (let i = 0; i < keys.length; i++) {
      if (sums.has(runs)) add(sums.get(runs)!, keys[i]!, r[i]!);
      if (sums.has(citations)) add(sums.get(citations)!, keys[i]!, c[i]!);
    }
  }
  if (mapped) for (const [m, sum] of sums) for (const [k, n] of sum) merged[m][k] = n;
  return { merged, legacy };
}
