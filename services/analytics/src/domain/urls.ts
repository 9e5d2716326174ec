import { getDomain } from 'tldts';
import { boundedMemo } from './memo.js';
/**
 * URL normalisation (glossary: "normalised URL"). Two citations of the same page
 * must land on the same key whatever their spelling: the scheme is dropped
 * (http and https are one page), the host is lower-cased without a leading
 * "www." or a default port, the fragment and tracking parameters go, the
 * remaining query parameters are sorted and a trailing slash is removed.
 */
const TRACKING_PARAMS = new Set([
  'gclid',
  'fbclid',
  'msclkid',
  'dclid',
  'yclid',
  'igshid',
  'mc_cid',
  'mc_eid',
  '_ga',
  '_gl',
  'ref',
  'ref_src',
  'srsltid',
]);

/** Distinct URLs (and hosts) remembered per generation of the memos below (see boundedMemo). */
const MEMO_SIZE = 10_000;
/**
 * Longer URLs are parsed every time (and left out of citations.ts's memo), so
 * what the memos hold stays bounded in bytes, not only in entries.
 */
export const MEMO_MAX_URL = 512;

/**
 * The registrable domain of a host (its public suffix plus one label, by the
 * public suffix list in tldts, private suffixes included): docs.example.com ->
 * example.com, news.bbc.co.uk -> bbc.co.uk. A host without one (an IP address,
 * localhost, a bare suffix) is its own.
 */
export const registrableDomain: (host: string) => string = boundedMemo(
  (host) => getDomain(host, { allowPrivateDomains: true }) ?? host,
  MEMO_SIZE,
);

export interface NormalizedUrl {
  /** host + path + sorted query, e.g. example.com/blog/post?id=2 */
  key: string;
  host: string;
  path: string;
}

const isTracking = (name: string) => name.toLowerCase().startsWith('utm_') || TRACKING_PARAMS.has(name.toLowerCase());

/** One URL as cited, normalised (or null when it is not an http(s) page); memoised, so the result is frozen. */
export function normalizeUrl(raw: string): NormalizedUrl | null {
  return raw.length <= MEMO_MAX_URL ? memoised(raw) : parse(raw);
}

function parse(raw: string): NormalizedUrl | null {
  let parsed: URL;
  const text = raw.trim();
  // A scheme without // (mailto:, javascript:, data:) is not a page; a bare host gets https://.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && /^[a-z][a-z0-9+-]*:(?!\d)/i.test(text)) return null;
  try {
    parsed = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  if (parsed.username || parsed.password) return null;
  const host = parsed.hostname
    .toLowerCase()
    .replace(/^www\./, '')
    .replace(/\.$/, '');
  if (!host.includes('.') && host !== 'localhost') return null;
  let path = parsed.pathname.replace(/\/+$/, '');
  try {
    path = decodeURI(path);
  } catch {
    /* keep the encoded form */
  }
  const params = [...parsed.searchParams.entries()].filter(([k]) => !isTracking(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : '';
  return Object.freeze({ key: `${host}${path}${query}`, host, path });
}

const memoised = boundedMemo(parse, MEMO_SIZE);

/** A domain rule or filter value: a bare host name, normalised the same way. */
export function normalizeHost(raw: string): string | null {
  const n = normalizeUrl(raw);
  return n && n.path === '' && !n.key.includes('?') ? n.host : null;
}
