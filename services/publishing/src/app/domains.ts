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

/** Custom domains: register, prove ownership with a DNS TXT record, serve the hosted site there. */
export function createDomainsService(deps: AppDeps & { resolver: TxtResolver; random: (n: number) => Buffer }) {
  const { store, commands, ids, clock, resolver } = deps;
  const now = () => clock.now().toISOString();

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
        if (await s.tx.get(DOMAIN_HOSTS, hostname)) throw errors.conflict(`${hostname} is already registered`, { code: 'domain_taken' });
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
        await commands.transaction(metadataOf(ctx), (s) =>
          s.execute(domainDecider, domainStream(id), { type: 'verify', org_id: ctx.org_id, at: now() }),
        );
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
