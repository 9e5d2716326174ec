import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
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
export const memberAdded = defineEvent(gw, 'member.added', 1, Type.Object({ org_id: Uuid, user_id: Uuid, role_id: Uuid, at: Timestamp }));
export const memberRoleChanged = defineEvent(
  gw,
  'member.role_changed',
  1,
  Type.Object({ org_id: Uuid, user_id: Uuid, role_id: Uuid, at: Timestamp }),
);
export const memberRemoved = defineEvent(gw, 'member.removed', 1, Type.Object({ org_id: Uuid, user_id: Uuid, at: Timestamp }));

/** Only the fields that changed are present; an empty array clears websites or locations. */
export const organizationUpdated = defineEvent(
  gw,
  'organization.updated',
  1,
  Type.Object({
    org_id: Uuid,
    name: Type.Optional(Type.String({ minLength: 1 })),
    slug: Type.Optional(Type.String({ minLength: 1 })),
    websites: Type.Optional(Type.Array(Type.String())),
    locations: Type.Optional(Type.Array(Type.String())),
    at: Timestamp,
  }),
);
/** The master switch for scheduled prompt runs and content-generation runs (consumed by generation and analytics). */
export const organizationRunsEnabledChanged = defineEvent(
  gw,
  'organization.runs_enabled_changed',
  1,
  Type.Object({ org_id: Uuid, runs_enabled: Type.Boolean(), at: Timestamp }),
);

const RoleFields = {
  name: Type.String({ minLength: 1 }),
  description: Type.String(),
  permissions: Type.Array(Type.String({ minLength: 1 })),
};
/** Each organization owns its roles, built-in copies (admin, collaborator, viewer) and custom ones. */
export const roleCreated = defineEvent(
  gw,
  'role.created',
  1,
  Type.Object({ org_id: Uuid, role_id: Uuid, ...RoleFields, built_in: Type.Boolean(), at: Timestamp }),
);
export const roleUpdated = defineEvent(
  gw,
  'role.updated',
  1,
  Type.Object({
    org_id: Uuid,
    role_id: Uuid,
    name: Type.Optional(RoleFields.name),
    description: Type.Optional(RoleFields.description),
    permissions: Type.Optional(RoleFields.permissions),
    at: Timestamp,
  }),
);
export const roleDeleted = defineEvent(gw, 'role.deleted', 1, Type.Object({ org_id: Uuid, role_id: Uuid, at: Timestamp }));

/** Sessions carry the token's hash, so they stay internal. */
export const sessionStarted = defineEvent(
  gw,
  'session.started',
  1,
  Type.Object({
    session_id: Uuid,
    user_id: Uuid,
    org_id: Type.Union([Uuid, Type.Null()]),
    token_hash: Type.String({ minLength: 32 }),
    expires_at: Timestamp,
    at: Timestamp,
  }),
  { internal: true },
);
export const sessionOrgSwitched = defineEvent(
  gw,
  'session.org_switched',
  1,
  Type.Object({ session_id: Uuid, user_id: Uuid, org_id: Uuid, at: Timestamp }),
  { internal: true },
);
export const sessionEnded = defineEvent(gw, 'session.ended', 1, Type.Object({ session_id: Uuid, user_id: Uuid, at: Timestamp }), {
  internal: true,
});
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

const MeteredOperation = Type.Union([Type.Literal('ingest'), Type.Literal('query'), Type.Literal('generation')]);
const Reservation = {
  org_id: Uuid,
  reservation_id: Uuid,
  operation: MeteredOperation,
  amount: Type.Integer({ minimum: 1 }),
  at: Timestamp,
};
/** Held before a metered operation does any work; internal (settled/released is the fact others need). */
export const creditsReserved = defineEvent(gw, 'credits.reserved', 1, Type.Object(Reservation), { internal: true });
/**
 * The operation succeeded: its reservation is spent. `amount` is what it cost; when
 * it did less than was reserved (an upload whose files were partly duplicates),
 * `refunded` is the rest of the reservation, back to the balance.
 */
export const creditsSettled = defineEvent(
  gw,
  'credits.settled',
  1,
  Type.Object({ ...Reservation, refunded: Type.Optional(Type.Integer({ minimum: 1 })) }),
);
/** The operation failed: its reservation goes back to the balance. */
export const creditsReleased = defineEvent(gw, 'credits.released', 1, Type.Object(Reservation), { internal: true });
/**
 * Work whose size is known only once it is done (ingest: the characters a
 * version stored) is charged after it, beyond what its request reserved. The
 * amount never exceeds what the balance held (`requested` is what the work
 * cost), so the balance never goes below zero; `charge_id` is the work's id.
 */
export const creditsCharged = defineEvent(
  gw,
  'credits.charged',
  1,
  Type.Object({
    org_id: Uuid,
    charge_id: Uuid,
    operation: MeteredOperation,
    amount: Type.Integer({ minimum: 0 }),
    requested: Type.Integer({ minimum: 1 }),
    reason: Type.String({ maxLength: 500 }),
    at: Timestamp,
  }),
);
export const creditsSpendLimitSet = defineEvent(
  gw,
  'credits.spend_limit_set',
  1,
  Type.Object({ org_id: Uuid, monthly_limit: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]), at: Timestamp }),
);
/**
 * Opens the next stream of an organization's credits with the state the previous
 * one ended with, so deciding a reservation never reads more than one bounded stream.
 */
export const creditsCarriedForward = defineEvent(
  gw,
  'credits.carried_forward',
  1,
  Type.Object({
    org_id: Uuid,
    epoch: Type.Integer({ minimum: 1 }),
    balance: Type.Integer(),
    held: Type.Array(
      Type.Object({ reservation_id: Uuid, operation: MeteredOperation, amount: Type.Integer({ minimum: 1 }), month: Type.String() }),
    ),
    monthly_limit: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    month: Type.String(),
    month_spent: Type.Integer({ minimum: 0 }),
    at: Timestamp,
  }),
  { internal: true },
);

export const gatewayEvents = [
  organizationCreated,
  organizationUpdated,
  organizationRunsEnabledChanged,
  userRegistered,
  memberAdded,
  memberRoleChanged,
  memberRemoved,
  roleCreated,
  roleUpdated,
  roleDeleted,
  sessionStarted,
  sessionOrgSwitched,
  sessionEnded,
  apiKeyCreated,
  apiKeyRevoked,
  creditsGranted,
  creditsReserved,
  creditsSettled,
  creditsReleased,
  creditsCharged,
  creditsSpendLimitSet,
  creditsCarriedForward,
];

/** Every event the gateway records (identity, sessions, API keys, credits). */
export type GatewayEvent = EventOf<(typeof gatewayEvents)[number]>;

export type OrganizationCreated = EventData<typeof organizationCreated>;
export type UserRegistered = EventData<typeof userRegistered>;
export type MemberAdded = EventData<typeof memberAdded>;
export type ApiKeyCreated = EventData<typeof apiKeyCreated>;
export type ApiKeyRevoked = EventData<typeof apiKeyRevoked>;
export type CreditsGranted = EventData<typeof creditsGranted>;
export type OrganizationUpdated = EventData<typeof organizationUpdated>;
export type OrganizationRunsEnabledChanged = EventData<typeof organizationRunsEnabledChanged>;
export type MemberRoleChanged = EventData<typeof memberRoleChanged>;
export type MemberRemoved = EventData<typeof memberRemoved>;
export type RoleCreated = EventData<typeof roleCreated>;
export type RoleUpdated = EventData<typeof roleUpdated>;
export type RoleDeleted = EventData<typeof roleDeleted>;
export type SessionStarted = EventData<typeof sessionStarted>;
export type SessionOrgSwitched = EventData<typeof sessionOrgSwitched>;
export type SessionEnded = EventData<typeof sessionEnded>;
export type CreditsReserved = EventData<typeof creditsReserved>;
export type CreditsSettled = EventData<typeof creditsSettled>;
export type CreditsReleased = EventData<typeof creditsReleased>;
export type CreditsSpendLimitSet = EventData<typeof creditsSpendLimitSet>;
export type CreditsCharged = EventData<typeof creditsCharged>;
export type CreditsCarriedForward = EventData<typeof creditsCarriedForward>;
