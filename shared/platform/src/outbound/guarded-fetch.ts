import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { classifyAddress, isIpLiteral, isLocalhostName, refusalMessage, unbracket, type OutboundPolicy } from './address-policy.js';

/** The connect-time refusal: the address a name resolved to (or the literal one) is not allowed. */
export class OutboundRefusedError extends Error {
  readonly code = 'destination_refused';
}

/** Resolves a name to every address it has (the system resolver by default; tests and DNS_SERVERS give another). */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

const systemResolveAll: ResolveAll = (hostname) =>
  new Promise((resolve, reject) =>
    systemLookup(hostname, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  );

/**
 * A `lookup` for net/tls connect that resolves the name and refuses it when any
 * of its addresses is refused, so the address checked is the one connected to
 * (a name that resolves differently later, DNS rebinding, is checked again).
 */
export function guardedLookup(policy: OutboundPolicy, resolveAll: ResolveAll = systemResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    // localhost is this machine whatever a DNS server says (RFC 6761).
    const resolved = isLocalhostName(hostname.toLowerCase())
      ? Promise.resolve([
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ])
      : resolveAll(hostname);
    resolved.then(
      (found) => {
        const family = typeof options === 'object' && options.family ? Number(options.family) : 0;
        const addrs = family ? found.filter((a) => a.family === family) : found;
        if (addrs.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
        for (const a of addrs) {
          const verdict = classifyAddress(a.address, policy);
          if (!verdict.allowed) return callback(new OutboundRefusedError(refusalMessage(hostname, verdict.range, policy)), '', 0);
        }
        if (typeof options === 'object' && options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addrs);
        else callback(null, addrs[0]!.address, addrs[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * An undici dispatcher whose every connection goes through the policy: IP
 * literals and localhost names are checked before connecting (net skips the
 * lookup for a literal), other names through guardedLookup.
 */
export function guardedDispatcher(options: { policy: OutboundPolicy; resolveAll?: ResolveAll; connectTimeoutMs?: number }): Agent {
  const connect = buildConnector({
    timeout: options.connectTimeoutMs ?? 10_000,
    lookup: guardedLookup(options.policy, options.resolveAll),
  } as buildConnector.BuildOptions);
  return new Agent({
    connect: (opts, callback) => {
      const host = unbracket(opts.hostname).toLowerCase();
      if (isLocalhostName(host) && !options.policy.allowPrivate)
        return callback(new OutboundRefusedError(refusalMessage(host, 'loopback', options.policy)), null);
      // Whatever net would connect to without a lookup is classified here (an unparsable one is refused).
      if (isIP(host) !== 0 || isIpLiteral(host)) {
        const verdict = classifyAddress(host, options.policy);
        if (!verdict.allowed) return callback(new OutboundRefusedError(refusalMessage(host, verdict.range, options.policy)), null);
      }
      return connect(opts, callback);
    },
  });
}

/**
 * fetch for user-given URLs: through the guarded dispatcher, redirects never
 * followed (a 3xx is the answer), and a refusal thrown as OutboundRefusedError
 * rather than hidden in a TypeError's cause.
 */
export type OutboundFetch = typeof fetch & {
  /** Closes the pooled connections (on service stop). */
  close(): Promise<void>;
};

export function createOutboundFetch(options: {
  policy: OutboundPolicy;
  resolveAll?: ResolveAll;
  connectTimeoutMs?: number;
}): OutboundFetch {
  const dispatcher = guardedDispatcher(options);
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    try {
      const res = await undiciFetch(
        input as string,
        { ...(init as object), redirect: 'manual', dispatcher } as Parameters<typeof undiciFetch>[1],
      );
      return res as unknown as Response;
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof OutboundRefusedError) throw cause;
      throw err;
    }
  };
  return Object.assign(guarded as typeof fetch, { close: () => dispatcher.close() });
}

/**
 * A short reason for a failed outbound call, safe to show the caller: the refusal,
 * or what kind of network failure it was (never a remote body, never an internal address).
 */
export function outboundFailureReason(err: unknown): string {
  if (err instanceof OutboundRefusedError) return err.message;
  const e = err as { name?: string; cause?: { code?: string; name?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.cause?.name === 'ConnectTimeoutError') return 'timed out';
  switch (e.cause?.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timed out';
    default:
      return e.cause?.code?.startsWith('ERR_TLS') || e.cause?.code?.includes('CERT') ? 'TLS failed' : 'could not connect';
  }
}
