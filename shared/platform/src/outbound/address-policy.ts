import ipaddr from 'ipaddr.js';

/**
 * Which addresses the service may connect to on behalf of a user (destinations,
 * webhooks): public unicast only. Everything else (loopback, RFC 1918,
 * link-local with the cloud metadata address, unique-local, CGNAT, multicast,
 * reserved and documentation ranges, and IPv6 forms that embed an IPv4 address)
 * is refused, so a user cannot make the service reach its own network.
 */
export interface OutboundPolicy {
  /** Also allow loopback and private addresses (ALLOW_PRIVATE_DESTINATIONS, for development and tests). */
  allowPrivate: boolean;
}

/** The setting that relaxes the policy; refusals name it. */
export const ALLOW_PRIVATE_SETTING = 'ALLOW_PRIVATE_DESTINATIONS';

/** Ranges the setting opens: the local machine and private networks (never link-local, metadata or special-purpose). */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'uniqueLocal']);

/** Readable names of ipaddr.js ranges, for refusal messages. */
const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private (RFC 1918)',
  uniqueLocal: 'unique-local',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
};

/** A refused address names its ipaddr.js range (loopback, private, linkLocal, …). */
export type AddressVerdict = { allowed: true; address: string } | { allowed: false; address: string; range: string };

/** Strips the brackets of an IPv6 URL host ("[::1]" → "::1"). */
export const unbracket = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/** True when the text is an IP address in one of the forms the URL parser and the resolver produce. */
export const isIpLiteral = (host: string) => ipaddr.isValid(unbracket(host));

/**
 * Classifies one IP address (the port-free pure part of the policy). IPv4-mapped
 * IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it carries; other IPv4
 * embeddings (NAT64, 6to4, Teredo) are special-purpose ranges and refused. Text
 * that is not an address is refused.
 */
export function classifyAddress(address: string, policy: OutboundPolicy): AddressVerdict {
  const text = unbracket(address);
  if (!ipaddr.isValid(text)) return { allowed: false, address: text, range: 'invalid' };
  let ip = ipaddr.parse(text);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const range = ip.range();
  if (range === 'unicast' || (policy.allowPrivate && PRIVATE_RANGES.has(range))) return { allowed: true, address: ip.toString() };
  return { allowed: false, address: ip.toString(), range };
}

/** What a refusal says: the host and its range (never the network's answer), and the setting that allows private ones. */
export function refusalMessage(host: string, range: string, policy: OutboundPolicy): string {
  const name = RANGE_NAMES[range] ?? `special-purpose (${range})`;
  const hint = PRIVATE_RANGES.has(range) && !policy.allowPrivate ? ` (the operator can allow it with ${ALLOW_PRIVATE_SETTING}=true)` : '';
  return `${host} is a ${name} address, which destinations and webhooks may not reach${hint}`;
}

/** Names that always mean this machine (RFC 6761), refused like 127.0.0.1. */
export const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Checks a destination or webhook URL when it is saved: http(s), no user:pass@,
 * and a host that is not literally a refused address. Returns the reason it is
 * refused, or null. Names are resolved only when connecting (the real check).
 */
export function refusedUrlReason(value: unknown, policy: OutboundPolicy): string | null {
  if (typeof value !== 'string' || value.length > 2048) return 'must be an http(s) URL of at most 2048 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not carry a user name or password (user:pass@); use the secret instead';
  const host = unbracket(url.hostname.replace(/\.$/, '').toLowerCase());
  if (isLocalhostName(host)) return policy.allowPrivate ? null : refusalMessage(host, 'loopback', policy);
  if (!isIpLiteral(host)) return null;
  const verdict = classifyAddress(host, policy);
  return verdict.allowed ? null : refusalMessage(url.hostname, verdict.range, policy);
}

/** The URL as it may be logged: scheme, host, port and path, without credentials or query. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}
