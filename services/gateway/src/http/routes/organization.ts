import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { OrganizationService } from '../../app/organizations.js';
import { callerOf } from '../auth-hook.js';
import { errorResponses } from '../schemas.js';
import { OrgName, Slug } from '../identity-schemas.js';

const Website = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });
const Location = Type.String({ minLength: 1, maxLength: 255 });

const tags = ['Organization'];

/** The credential's organization (spec 4.1): its profile and its runs switch. */
export function organizationRoutes(organizations: OrganizationService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/org/me',
      {
        config: { auth: { credential: 'any', permission: 'read:org' } },
        schema: {
          tags,
          summary: "The credential's organization",
          description: 'Accepts an API key too, so a key can find out its own organization.',
          response: { 200: Type.Ref('OrgDetailResponse'), ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => organizations.getOrganization(callerOf(req)),
    );

    app.put(
      '/org/me',
      {
        config: { auth: { credential: 'user', permission: 'update:org' } },
        schema: {
          tags,
          summary: 'Update the organization',
          description:
            'Only the fields sent change. An empty websites or locations array clears it. The slug is unique across organizations (409).',
          body: Type.Object(
            {
              name: Type.Optional(OrgName),
              slug: Type.Optional(Slug),
              websites: Type.Optional(Type.Array(Website, { maxItems: 50, uniqueItems: true })),
              locations: Type.Optional(Type.Array(Location, { maxItems: 50, uniqueItems: true })),
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Ref('OrgDetailResponse'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => organizations.updateOrganization(callerOf(req), req.body),
    );

    app.patch(
      '/org/me/runs-enabled',
      {
        config: { auth: { credential: 'user', permission: 'update:org' } },
        schema: {
          tags,
          summary: 'Switch runs on or off',
          description:
            'The master switch for scheduled prompt runs and content-generation runs. Needs update:org (403 without). ' +
            'A change emits organization.runs_enabled_changed.',
          body: Type.Object({ runs_enabled: Type.Boolean() }, { additionalProperties: false }),
          response: { 200: Type.Ref('OrgDetailResponse'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => organizations.setRunsEnabled(callerOf(req), req.body.runs_enabled),
    );
  };
}
