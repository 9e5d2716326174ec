/**
 * The permission catalogue. Every gateway route declares the permission it needs
 * (or none); roles are sets of these.
 */
export const permissionCatalogue = {
  'read:org': 'Read the organization profile',
  'update:org': 'Change the organization profile and its runs switch',
  'manage:users': 'Invite, remove and change the role of users',
  'manage:roles': 'Create, change and delete custom roles',
  'manage:api_keys': 'Create and revoke API keys',
  'read:kb': 'Read the knowledge base, categories, topics, content and search',
  'write:kb': 'Ingest content and change the knowledge base, categories and topics',
  'generate:content': 'Run content generation',
  'publish:content': 'Publish and unpublish content',
  'manage:destinations': 'Configure publishing destinations',
  'read:analytics': 'Read analytics reports',
  'manage:analytics': 'Configure prompt runs, tracked sources and competitors',
  'manage:credits': 'Grant credits and set the spend limit',
} as const;

export type Permission = keyof typeof permissionCatalogue;
export const allPermissions = Object.keys(permissionCatalogue) as Permission[];

/** Management permissions need a signed-in user; an API key never carries them (spec 5.4). */
const userOnly: Permission[] = ['update:org', 'manage:users', 'manage:roles', 'manage:api_keys', 'manage:credits'];
export const apiKeyPermissions: Permission[] = allPermissions.filter((p) => !userOnly.includes(p));

export type BuiltInRole = 'admin' | 'collaborator' | 'viewer';

/** Every organization gets its own copy of these roles when it is created. */
export const builtInRoles: Record<BuiltInRole, Permission[]> = {
  admin: allPermissions,
  collaborator: ['read:org', 'read:kb', 'write:kb', 'generate:content', 'publish:content', 'read:analytics', 'manage:analytics'],
  viewer: ['read:org', 'read:kb', 'read:analytics'],
};

export const isPermission = (p: string): p is Permission => Object.hasOwn(permissionCatalogue, p);

/**
 * What a role actually grants. The built-in admin role grants the whole catalogue as it is
 * now, not as it was when the organization was created: a permission added to the catalogue
 * later must not lock every existing organization's admins out (they could not add it, since
 * the admin role's permissions cannot be changed).
 */
export const grantedBy = (role: { name: string; built_in: boolean; permissions: readonly string[] }): string[] =>
  role.built_in && role.name === 'admin' ? [...allPermissions] : [...role.permissions];

/** The permissions of `wanted` that `held` lacks: a caller may only hand out (or touch) what they hold. */
export const lacking = (held: readonly string[], wanted: readonly string[]): string[] => wanted.filter((p) => !held.includes(p));
