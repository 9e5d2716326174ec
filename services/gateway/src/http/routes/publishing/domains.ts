import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp, Uuid, errorResponses } from '../../schemas.js';
import { manage, Open, type App, type PublishingProxies } from './support.js';

/** Custom domains for hosted pages: register, verify by a DNS TXT record, remove. */

export const Domain = Open(
  {
    domain_id: Uuid,
    hostname: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
    verification: Type.Object({ type: Type.Literal('TXT'), name: Type.String(), value: Type.String() }),
    created_at: Timestamp,
    verified_at: NullableTimestamp,
    /** A pending registration can be verified until then; null once verified. */
    expires_at: NullableTimestamp,
  },
  'CustomDomain',
);
const DomainParams = Type.Object({ domain_id: Uuid });

export function domainRoutes(app: App, { dest }: PublishingProxies) {
  const dtags = ['Destinations'];
  app.get(
    '/org/domains',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'List custom domains',
        response: { 200: Type.Array(Type.Ref('CustomDomain')), ...errorResponses(401, 403) },
      },
    },
    dest('ListDomains'),
  );
  app.post(
    '/org/domains',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Register a custom domain',
        description:
          'Answers the DNS TXT record to create; the domain serves the hosted pages once verified. ' +
          'The host name is claimed by verification: 409 domain_taken when an organization has verified it (or this one registered it already).',
        body: Type.Object({ hostname: Type.String({ minLength: 4, maxLength: 253 }) }, { additionalProperties: false }),
        response: { 201: Type.Ref('CustomDomain'), ...errorResponses(400, 401, 403, 409) },
      },
    },
    dest('RegisterDomain', { status: 201 }),
  );
  app.get(
    '/org/domains/:domain_id',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Get a custom domain',
        params: DomainParams,
        response: { 200: Type.Ref('CustomDomain'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    dest('GetDomain'),
  );
  app.post(
    '/org/domains/:domain_id/verify',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Verify a custom domain',
        description:
          'Looks up the TXT record now; 422 dns_record_missing when it is not (yet) there, 422 verification_expired after expires_at, ' +
          '409 domain_taken when another organization verified the host name first.',
        params: DomainParams,
        response: { 200: Type.Ref('CustomDomain'), ...errorResponses(400, 401, 403, 404, 409, 422) },
      },
    },
    dest('VerifyDomain'),
  );
  app.delete(
    '/org/domains/:domain_id',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Remove a custom domain',
        description: 'It stops serving pages at once.',
        params: DomainParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    dest('RemoveDomain', { status: 204 }),
  );
}
