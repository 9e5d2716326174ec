import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { OrganizationService } from '../../app/organizations.js';
import { permissionCatalogue } from '../../auth/permissions.js';
import { callerOf } from '../auth-hook.js';
import { Uuid, errorResponses } from '../schemas.js';
import { PermissionName } from '../identity-schemas.js';

const RoleName = Type.String({ minLength: 2, maxLength: 100 });
const RoleDescription = Type.String({ maxLength: 1000 });
const Permissions = Type.Array(PermissionName, { maxItems: 100 });
const RoleParams = Type.Object({ roleId: Uuid });
const read = { auth: { credential: 'user', permission: 'read:org' } } as const;
const manage = { auth: { credential: 'user', permission: 'manage:roles' } } as const;
const tags = ['Roles'];

/** The permission catalogue and the organization's roles (built-in copies and custom ones). */
export function roleRoutes(organizations: OrganizationService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/org/permissions',
      {
        config: { auth: { credential: 'any', permission: 'read:org' } },
        schema: {
          tags: ['Permissions'],
          summary: 'The permission catalogue',
          response: {
            200: Type.Array(Type.Object({ permission: Type.String(), description: Type.String() })),
            ...errorResponses(401, 403, 404),
          },
        },
      },
      async () => Object.entries(permissionCatalogue).map(([permission, description]) => ({ permission, description })),
    );

    app.get(
      '/org/roles',
      {
        config: read,
        schema: {
          tags,
          summary: "The organization's roles",
          response: { 200: Type.Array(Type.Ref('Role')), ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => organizations.listRoles(callerOf(req)),
    );

    app.get(
      '/org/roles/:roleId',
      {
        config: read,
        schema: {
          tags,
          summary: 'One role',
          params: RoleParams,
          response: { 200: Type.Ref('Role'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => organizations.getRole(callerOf(req), req.params.roleId),
    );

    app.post(
      '/org/roles',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Create a custom role',
          description:
            'Names are unique within the organization regardless of case (409). A caller can only grant permissions they hold (403).',
          body: Type.Object(
            { name: RoleName, description: Type.Optional(RoleDescription), permissions: Permissions },
            { additionalProperties: false },
          ),
          response: { 201: Type.Ref('Role'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => reply.status(201).send(await organizations.createRole(callerOf(req), req.body)),
    );

    app.put(
      '/org/roles/:roleId',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Change a role',
          description:
            'Only the fields sent change. Built-in roles cannot be renamed, and the admin role always holds every permission (409). ' +
            'A caller can only change a role, and grant permissions, within what they hold themselves (403).',
          params: RoleParams,
          body: Type.Object(
            { name: Type.Optional(RoleName), description: Type.Optional(RoleDescription), permissions: Type.Optional(Permissions) },
            { additionalProperties: false },
          ),
          response: { 200: Type.Ref('Role'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => organizations.updateRole(callerOf(req), req.params.roleId, req.body),
    );

    app.delete(
      '/org/roles/:roleId',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Delete a custom role',
          description: 'Built-in roles cannot be deleted, nor a role still assigned to members (409).',
          params: RoleParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        await organizations.deleteRole(callerOf(req), req.params.roleId);
        return reply.status(204).send(null);
      },
    );
  };
}
