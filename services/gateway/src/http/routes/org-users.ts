import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors } from '@kb/platform';
import type { OrganizationService } from '../../app/organizations.js';
import { callerOf } from '../auth-hook.js';
import { Pagination, Timestamp, Uuid, errorResponses } from '../schemas.js';
import { Email } from '../identity-schemas.js';

const UserParams = Type.Object({ userId: Uuid });
const read = { auth: { credential: 'user', permission: 'read:org' } } as const;
const manage = { auth: { credential: 'user', permission: 'manage:users' } } as const;

const Member = Type.Object({
  user_id: Uuid,
  email: Type.String(),
  name: Type.String(),
  role_id: Uuid,
  role_name: Type.String(),
  permissions: Type.Array(Type.String()),
  joined_at: Timestamp,
  status: Type.Literal('active'),
});

/** Users of the organization (spec 4.1) and the Members view of them. All need a signed-in user (spec 5.4). */
export function orgUserRoutes(organizations: OrganizationService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['Users'];

    app.get(
      '/org/users',
      {
        config: read,
        schema: {
          tags,
          summary: 'List the users of the organization',
          description: 'Oldest member first; limit defaults to 10, offset to 0. The total is in X-Total-Count.',
          querystring: Pagination,
          response: { 200: Type.Array(Type.Ref('OrgUserResponse')), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { items, total } = await organizations.listUsers(callerOf(req), req.query);
        void reply.header('x-total-count', String(total));
        return items;
      },
    );

    app.post(
      '/org/users',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Add an existing user to the organization',
          description:
            'Names the user by user_id or by email (exactly one) and assigns one of the organization roles by role_id. ' +
            '404 when no such user; 409 when already a member; 400 when role_id names no role of this organization; ' +
            '403 when the role carries a permission the caller does not hold.',
          body: Type.Object({ user_id: Type.Optional(Uuid), email: Type.Optional(Email), role_id: Uuid }, { additionalProperties: false }),
          response: { 201: Type.Ref('OrgUserResponse'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        if ((req.body.user_id === undefined) === (req.body.email === undefined)) {
          throw errors.validation('Send exactly one of user_id and email', { code: 'validation_failed', details: { field: 'user_id' } });
        }
        return reply.status(201).send(await organizations.addUser(callerOf(req), req.body));
      },
    );

    app.get(
      '/org/users/:userId',
      {
        config: read,
        schema: {
          tags,
          summary: 'One user of the organization',
          params: UserParams,
          response: { 200: Type.Ref('OrgUserResponse'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => organizations.getUser(callerOf(req), req.params.userId),
    );

    app.put(
      '/org/users/:userId',
      {
        config: manage,
        schema: {
          tags,
          summary: "Change a user's role",
          description:
            'Accepts role_id only. 409 when it would leave the organization without an admin; 403 when the new role, or the ' +
            "user's current one, carries a permission the caller does not hold.",
          params: UserParams,
          body: Type.Object({ role_id: Uuid }, { additionalProperties: false }),
          response: { 200: Type.Ref('OrgUserResponse'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => organizations.changeUserRole(callerOf(req), req.params.userId, req.body.role_id),
    );

    app.delete(
      '/org/users/:userId',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Remove a user from the organization',
          description:
            "The organization never loses its last admin (409). 403 when the user's role carries a permission the caller does not hold.",
          params: UserParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        await organizations.removeUser(callerOf(req), req.params.userId);
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/org/members',
      {
        config: read,
        schema: {
          tags: ['Members'],
          summary: 'Who belongs to the organization, with their roles',
          description: 'Each member with their role and the permissions it grants. The total is in X-Total-Count.',
          querystring: Pagination,
          response: { 200: Type.Array(Member), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { items, total } = await organizations.listMembers(callerOf(req), req.query);
        void reply.header('x-total-count', String(total));
        return items;
      },
    );
  };
}
