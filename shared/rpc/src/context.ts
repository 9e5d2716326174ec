import { timingSafeEqual } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { errors, internalAuthMisconfigured } from '@kb/platform';

/**
 * What the gateway resolved about the caller; travels in gRPC metadata on every
 * internal call. Services trust it only together with the internal token.
 */
export interface CallContext {
  org_id: string;
  principal: { type: 'api_key' | 'user' | 'system'; id: string };
  permissions: string[];
  /** null: the whole knowledge base; otherwise the only KB folders allowed (empty: none). */
  folder_scope: string[] | null;
  request_id: string;
  /**
   * W3C traceparent of the caller's current span, when telemetry is on. The
   * client sends its own span's; the server hands its handler its server span's.
   */
  trace?: string;
}

const H = {
  token: 'x-internal-token',
  org: 'x-org-id',
  principal: 'x-principal',
  permissions: 'x-permissions',
  scope: 'x-folder-scope',
  requestId: 'x-request-id',
  trace: 'traceparent',
} as const;

export function contextToMetadata(ctx: CallContext, internalToken: string): Metadata {
  const md = new Metadata();
  md.set(H.token, internalToken);
  md.set(H.org, ctx.org_id);
  md.set(H.principal, `${ctx.principal.type}:${ctx.principal.id}`);
  md.set(H.permissions, ctx.permissions.join(','));
  md.set(H.scope, ctx.folder_scope === null ? '*' : JSON.stringify(ctx.folder_scope));
  md.set(H.requestId, ctx.request_id);
  if (ctx.trace) md.set(H.trace, ctx.trace);
  return md;
}

const first = (md: Metadata, key: string): string | undefined => {
  const v = md.get(key)[0];
  return v === undefined ? undefined : v.toString();
};

/** Whether the call carries this service's internal token. */
export function hasInternalToken(md: Metadata, internalToken: string): boolean {
  const token = first(md, H.token);
  return token !== undefined && timingSafeEqualStrings(token, internalToken);
}

/**
 * Throws internal_auth_misconfigured when the token is missing or wrong (the
 * services disagree on INTERNAL_TOKEN: an operator's fix, not the end client's),
 * unauthenticated when the context is incomplete.
 */
export function metadataToContext(md: Metadata, internalToken: string): CallContext {
  if (!hasInternalToken(md, internalToken)) {
    throw internalAuthMisconfigured('Missing or wrong internal token: the caller and this service have different INTERNAL_TOKEN values');
  }
  const org = first(md, H.org);
  const principal = first(md, H.principal);
  const requestId = first(md, H.requestId) ?? 'unknown';
  if (!org || !principal) throw errors.unauthenticated('Internal call without a caller context');
  const [type, ...rest] = principal.split(':');
  if (type !== 'api_key' && type !== 'user' && type !== 'system') throw errors.unauthenticated('Unknown principal type');
  const scopeRaw = first(md, H.scope) ?? '*';
  let folder_scope: string[] | null = null;
  if (scopeRaw !== '*') {
    const parsed: unknown = JSON.parse(scopeRaw);
    if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === 'string')) throw errors.unauthenticated('Bad folder scope');
    folder_scope = parsed as string[];
  }
  const perms = first(md, H.permissions) ?? '';
  const trace = first(md, H.trace);
  return {
    org_id: org,
    principal: { type, id: rest.join(':') },
    permissions: perms ? perms.split(',') : [],
    folder_scope,
    request_id: requestId,
    ...(trace && { trace }),
  };
}

function timingSafeEqualStrings(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
