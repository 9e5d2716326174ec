import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import { domainDecider, domainStream } from '../domain/aggregates.js';
import { DOMAINS, DOMAIN_HOSTS, type DomainDoc } from '../projections/collections.js';
import { metadataOf, type AppDeps } from './context.js';

/** The DNS port: TXT records of a name (node:dns/promises by default; tests point it at a local server). */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
}

const HOSTNAME_RE = /^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
export const TXT_PREFIX = '_kb-verify';

/**
 * Custom domains: register, prove ownership with a DNS TXT record, serve the
 * hosted site there. A host name is claimed only by verification: any number
 * of organizations may hold a pending registration of it, the first to verify
 * takes it, and a pending one can no longer be verified after
 * verificationTtlSeconds (register it again).
 */
export function createDomainsService(
  deps: AppDeps & { resolver: TxtResolver; random: (n: number) => Buffer; verificationTtlSeconds?: number },
) {
  const { store, commands, ids, clock, resolver } = deps;
  const now = () => clock.now().toISOString();
  const ttlMs = (deps.verificationTtlSeconds ?? 604_800) * 1000;
  const expiresAt = (d: DomainDoc) => (d.status === 'pending' ? new Date(Date.parse(d.created_at) + ttlMs).toISOString() : null);
  const expired = (d: DomainDoc) => d.status === 'pending' && Date.parse(expiresAt(d)!) <= clock.now().getTime();
  /** The organization that verified a host name, if one did. */
  const claimOf = async (tx: { get: typeof store.get }, hostname: string) => {
    const claim = await tx.get<{ id: string; domain_id: string; org_id: string; verified: boolean }>(DOMAIN_HOSTS, hostname);
    return claim?.verified ? claim : undefined;
  };

  async function load(orgId: string, id: string): Promise<DomainDoc> {
    const d = await store.get<DomainDoc>(DOMAINS, id);
    if (!d || d.org_id !== orgId) throw errors.notFound('Domain');
    return d;
  }
  const view = (d: DomainDoc) => ({
    domain_id: d.id,
    hostname: d.hostname,
    status: d.status,
    verification: { type: 'TXT', name: `${TXT_PREFIX}.${d.hostname}`, value: d.token },
    created_at: d.created_at,
    verified_at: d.verified_at ?? null,
    expires_at: expiresAt(d),
  });

  return {
    async list(ctx: CallContext) {
      const docs = await store.find<DomainDoc>(DOMAINS, { where: { org_id: ctx.org_id }, sort: [{ field: 'created_at', order: 'asc' }] });
      return docs.map(view);
    },
    get: async (ctx: CallContext, id: string) => view(await load(ctx.org_id, id)),
    async register(ctx: CallContext, input: { hostname?: string }) {
      const hostname = (input.hostname ?? '').trim().toLowerCase().replace(/\.$/, '');
      if (!HOSTNAME_RE.test(hostname))
        throw errors.validation('hostname must be a domain name such as docs.example.com', { details: { field: 'hostname' } });
      const id = ids.uuid();
      const token = `kb-site-verification=${deps.random(16).toString('hex')}`;
      await commands.transaction(metadataOf(ctx), async (s) => {
        // Only a verified claim takes a name; a pending one of another organization blocks nobody.
        if (await claimOf(s.tx, hostname)) throw errors.conflict(`${hostname} is already registered`, { code: 'domain_taken' });
        const mine = await s.tx.find<DomainDoc>(DOMAINS, { where: { org_id: ctx.org_id, hostname } });
        if (mine.some((d) => !expired(d))) throw errors.conflict(`${hostname} is already registered`, { code: 'domain_taken' });
        // An expired registration of one's own is replaced (a new verification value).
        for (const old of mine) await s.execute(domainDecider, domainStream(old.id), { type: 'remove', org_id: ctx.org_id, at: now() });
        await s.execute(domainDecider, domainStream(id), {
          type: 'register',
          domain_id: id,
          org_id: ctx.org_id,
          hostname,
          token,
          at: now(),
        });
      });
      return view(await load(ctx.org_id, id));
    },
    /** Looks the TXT record up now; 422 when it is not there (yet). */
    async verify(ctx: CallContext, id: string) {
      const d = await load(ctx.org_id, id);
      if (d.status !== 'verified') {
        if (expired(d))
          throw errors.unprocessable(`The registration of ${d.hostname} expired unverified; register it again`, {
            code: 'verification_expired',
            details: { expired_at: expiresAt(d) },
          });
        let records: string[][] = [];
        try {
          records = await resolver.resolveTxt(`${TXT_PREFIX}.${d.hostname}`);
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (code !== 'ENOTFOUND' && code !== 'ENODATA' && code !== 'ESERVFAIL' && code !== 'ETIMEOUT' && code !== 'ECONNREFUSED')
            throw errors.unavailable('DNS lookup failed', { cause: err });
        }
        if (!records.some((chunks) => chunks.join('') === d.token))
          throw errors.unprocessable(`No TXT record ${TXT_PREFIX}.${d.hostname} with the verification value was found`, {
            code: 'dns_record_missing',
            details: { name: `${TXT_PREFIX}.${d.hostname}`, value: d.token },
          });
        await commands.transaction(metadataOf(ctx), async (s) => {
          const claim = await claimOf(s.tx, d.hostname);
          if (claim && claim.domain_id !== id)
            throw errors.conflict(`${d.hostname} was verified by another organization first`, { code: 'domain_taken' });
          return s.execute(domainDecider, domainStream(id), { type: 'verify', org_id: ctx.org_id, at: now() });
        });
      }
      return view(await load(ctx.org_id, id));
    },
    async remove(ctx: CallContext, id: string) {
      await load(ctx.org_id, id);
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(domainDecider, domainStream(id), { type: 'remove', org_id: ctx.org_id, at: now() }),
      );
    },
  };
}
export type DomainsService = ReturnType<typeof createDomainsService>;
