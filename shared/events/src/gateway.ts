import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData } from './define.js';
import { topics } from './topics.js';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const gw = topics.gateway;

export const organizationCreated = defineEvent(
  gw,
  'organization.created',
  1,
  Type.Object({
    org_id: Uuid,
    name: Type.String({ minLength: 1 }),
    slug: Type.String({ minLength: 1 }),
    created_by: Type.Union([Uuid, Type.Null()]),
    at: Timestamp,
  }),
);
export const userRegistered = defineEvent(
  gw,
  'user.registered',
  1,
  Type.Object({
    user_id: Uuid,
    email: Type.String({ minLength: 3 }),
    name: Type.String(),
    /** scrypt hash, never the password; the event is internal, so it never leaves the gateway's store. */
    password_hash: Type.String({ minLength: 10 }),
    at: Timestamp,
  }),
  { internal: true },
);
export const memberAdded = defineEvent(
  gw,
  'member.added',
  1,
  Type.Object({ org_id: Uuid, user_id: Uuid, role: Type.String({ minLength: 1 }), at: Timestamp }),
);
export const apiKeyCreated = defineEvent(
  gw,
  'api_key.created',
  1,
  Type.Object({
    key_id: Uuid,
    org_id: Uuid,
    name: Type.String({ minLength: 1 }),
    key_hash: Type.String({ minLength: 32 }),
    hint: Type.String(),
    /** null: the whole knowledge base; an array: only those folders (empty: none). */
    folder_scope: Type.Union([Type.Array(Uuid), Type.Null()]),
    created_by: Type.Union([Uuid, Type.Null()]),
    at: Timestamp,
  }),
  { internal: true },
);
export const apiKeyRevoked = defineEvent(gw, 'api_key.revoked', 1, Type.Object({ key_id: Uuid, org_id: Uuid, at: Timestamp }));
export const creditsGranted = defineEvent(
  gw,
  'credits.granted',
  1,
  Type.Object({ org_id: Uuid, amount: Type.Integer({ minimum: 1 }), reason: Type.String(), at: Timestamp }),
);

export const gatewayEvents = [organizationCreated, userRegistered, memberAdded, apiKeyCreated, apiKeyRevoked, creditsGranted];

export type OrganizationCreated = EventData<typeof organizationCreated>;
export type UserRegistered = EventData<typeof userRegistered>;
export type MemberAdded = EventData<typeof memberAdded>;
export type ApiKeyCreated = EventData<typeof apiKeyCreated>;
export type ApiKeyRevoked = EventData<typeof apiKeyRevoked>;
export type CreditsGranted = EventData<typeof creditsGranted>;
