import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { isAppError } from '@kb/platform';
import type { IdentityService } from '../../app/identity.js';
import type { LoginThrottle } from '../../app/login-throttle.js';
import { sessionOf } from '../auth-hook.js';
import { Timestamp, Uuid, errorResponses } from '../schemas.js';
import { Email, OrgName, Password, PersonName, Slug } from '../identity-schemas.js';

const Me = Type.Object({
  user: Type.Ref('User'),
  organization: Type.Union([Type.Ref('OrgDetailResponse'), Type.Null()], { description: "the session's current organization" }),
  permissions: Type.Array(Type.String(), { description: 'what the role in the current organization allows' }),
  organizations: Type.Array(
    Type.Object({ org_id: Uuid, name: Type.String(), slug: Type.String(), role_id: Uuid, role_name: Type.String(), joined_at: Timestamp }),
  ),
  session_expires_at: Timestamp,
});

const SignupAccepted = Type.Object(
  {
    status: Type.Literal('accepted'),
    email: Type.String(),
    message: Type.String(),
  },
  { description: 'The same answer whether the email had an account or not' },
);
const SIGNUP_MESSAGE =
  'If this email had no account, one was created with this password: log in with it. ' +
  'If it had one, nothing was changed: log in with that account’s password.';

const tags = ['Auth'];
const open = { auth: { credential: 'none' } } as const;
const signedIn = { auth: { credential: 'user', permission: null, orgOptional: true } } as const;

/** Users and their sessions (DESIGN section 6): sign up, log in, log out, who am I, switch organization, create one. */
export function authRoutes(identity: IdentityService, throttle: LoginThrottle): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/auth/signup',
      {
        config: open,
        schema: {
          tags,
          summary: 'Sign up',
          description:
            'Creates a user when the email has no account yet; the password has at least 12 characters. The answer is 202 with the ' +
            'same body (and the same time) whether the email already had an account or not, so signup never tells anyone which ' +
            'addresses have accounts: an existing account is left unchanged. Then log in (POST /auth/login).',
          body: Type.Object({ email: Email, password: Password, name: PersonName }, { additionalProperties: false }),
          response: { 202: SignupAccepted, ...errorResponses(400) },
        },
      },
      async (req, reply) => {
        try {
          await identity.signup(req.body);
        } catch (err) {
          if (!(isAppError(err) && err.code === 'email_taken')) throw err;
        }
        return reply.status(202).send({ status: 'accepted' as const, email: req.body.email.trim(), message: SIGNUP_MESSAGE });
      },
    );

    app.post(
      '/auth/login',
      {
        config: open,
        schema: {
          tags,
          summary: 'Log in',
          description:
            'Returns a session token for `Authorization: Bearer <token>`, its expiry, the user and their current organization ' +
            '(their first one, or null when they belong to none yet). Wrong email or password: 401. Failed logins are limited per ' +
            'account and address and per address, with a backoff that doubles; over the limit: 429 with Retry-After (a correct ' +
            'password is never counted, and failures elsewhere never hold up an address the account signed in from).',
          body: Type.Object(
            { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
            {
              additionalProperties: false,
            },
          ),
          response: {
            200: Type.Object({
              token: Type.String(),
              token_type: Type.Literal('Bearer'),
              expires_at: Timestamp,
              user: Type.Ref('User'),
              organization: Type.Union([Type.Ref('OrgDetailResponse'), Type.Null()]),
            }),
            ...errorResponses(400, 401, 429),
          },
        },
      },
      async (req) => {
        await throttle.check(req.body.email, req.ip);
        try {
          const session = await identity.login(req.body);
          await throttle.succeeded(req.body.email, req.ip);
          return session;
        } catch (err) {
          if (isAppError(err) && err.kind === 'unauthenticated') await throttle.failed(req.body.email, req.ip);
          throw err;
        }
      },
    );

    app.post(
      '/auth/logout',
      {
        config: signedIn,
        schema: {
          tags,
          summary: 'Log out',
          description: 'Ends the session: its token is refused from now on.',
          response: { 204: Type.Null(), ...errorResponses(401) },
        },
      },
      async (req, reply) => {
        await identity.logout(sessionOf(req));
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/auth/me',
      {
        config: signedIn,
        schema: { tags, summary: 'The signed-in user and their organizations', response: { 200: Me, ...errorResponses(401) } },
      },
      async (req) => identity.me(sessionOf(req)),
    );

    app.put(
      '/auth/session/organization',
      {
        config: signedIn,
        schema: {
          tags,
          summary: "Switch the session's current organization",
          description: 'Every following request of this session acts in that organization. 404 when the user is not a member.',
          body: Type.Object({ org_id: Uuid }, { additionalProperties: false }),
          response: { 200: Me, ...errorResponses(400, 401, 404) },
        },
      },
      async (req) => identity.switchOrganization(sessionOf(req), req.body.org_id),
    );

    app.post(
      '/orgs',
      {
        config: signedIn,
        schema: {
          tags: ['Organization'],
          summary: 'Create an organization',
          description:
            'The signed-in user becomes its admin; it gets its own copies of the built-in roles admin, collaborator and viewer, ' +
            "and becomes the session's current organization. A slug that is sent must be free (409); left out, a free one is " +
            'derived from the name (with a short suffix when another organization has it).',
          body: Type.Object({ name: OrgName, slug: Type.Optional(Slug) }, { additionalProperties: false }),
          response: { 201: Type.Ref('OrgDetailResponse'), ...errorResponses(400, 401, 409) },
        },
      },
      async (req, reply) => reply.status(201).send(await identity.createOrganization(sessionOf(req), req.body)),
    );
  };
}
