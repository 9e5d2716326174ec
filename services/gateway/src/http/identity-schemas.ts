import { Type } from '@sinclair/typebox';
import { allPermissions, type Permission } from '../auth/permissions.js';
import { Timestamp, Uuid } from './schemas.js';

/** Schemas shared by the identity, organization, role, API key and credits routes. */

export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Password = Type.String({ minLength: 12, maxLength: 1024, description: 'at least 12 characters' });
export const PersonName = Type.String({ minLength: 1, maxLength: 255 });
export const OrgName = Type.String({ minLength: 2, maxLength: 255 });
export const Slug = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$',
  description: 'lower-case letters, digits and inner hyphens, at most 63 characters; unique across organizations',
});
export const PermissionName = Type.Unsafe<Permission>({
  type: 'string',
  enum: allPermissions,
  description: 'a permission of the catalogue',
});

export const User = Type.Object({ user_id: Uuid, email: Type.String(), name: Type.String(), created_at: Timestamp }, { $id: 'User' });

export const OrgDetail = Type.Object(
  {
    org_id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    websites: Type.Array(Type.String()),
    locations: Type.Array(Type.String()),
    runs_enabled: Type.Boolean({ description: 'master switch for scheduled prompt runs and content-generation runs' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'OrgDetailResponse' },
);

export const OrgUser = Type.Object(
  {
    user: Type.Object({ id: Uuid, email: Type.String(), name: Type.String() }),
    role: Type.Object({ role_id: Uuid, name: Type.String() }),
    joined_at: Timestamp,
    status: Type.Literal('active'),
  },
  { $id: 'OrgUserResponse' },
);

export const Role = Type.Object(
  {
    role_id: Uuid,
    name: Type.String(),
    description: Type.String(),
    permissions: Type.Array(Type.String()),
    built_in: Type.Boolean({ description: 'admin, collaborator and viewer: cannot be deleted or renamed' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Role' },
);

export const ApiKey = Type.Object(
  {
    key_id: Uuid,
    name: Type.String(),
    hint: Type.String({ description: 'redacted form of the secret' }),
    folder_scope: Type.Union([Type.Array(Uuid), Type.Null()], {
      description: 'null: the whole knowledge base; a list: only those KB folders (empty: no KB access)',
    }),
    created_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()]),
    revoked_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'ApiKey' },
);

export const CreditBalance = Type.Object(
  {
    balance: Type.Integer({ description: 'credits that can still be spent (outstanding reservations already deducted)' }),
    reserved: Type.Integer({ description: 'credits held by operations in progress' }),
    monthly_spend_limit: Type.Union([Type.Integer(), Type.Null()]),
    spent_this_month: Type.Integer({ description: 'spent and held in the current UTC calendar month' }),
    month: Type.String({ description: 'the current month, YYYY-MM (UTC)' }),
  },
  { $id: 'CreditBalance' },
);

export const identitySchemas = [User, OrgDetail, OrgUser, Role, ApiKey, CreditBalance];
