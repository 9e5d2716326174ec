import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** API keys are long random secrets, so a fast hash is enough to store them safely. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** Session tokens are random too: stored as this hash, never as given. */
export const hashToken = (token: string): string => createHash('sha256').update(`session:${token}`, 'utf8').digest('hex');

/** `kbs_` + 43 url-safe characters (256 bits). */
export const newSessionToken = (): string => `kbs_${randomBytes(32).toString('base64url')}`;

/** What a well-formed session token looks like; anything else is 401 before any lookup. */
export const SESSION_TOKEN_RE = /^kbs_[A-Za-z0-9_-]{43}$/;

/** `kb_` + 43 url-safe characters (256 bits). */
export const newApiKey = (): string => `kb_${randomBytes(32).toString('base64url')}`;

/** What a well-formed key looks like; anything else is rejected before any lookup. */
export const API_KEY_RE = /^[A-Za-z0-9_\-.]{20,200}$/;

/** Shown instead of the secret after creation. */
export const keyHint = (key: string): string => `${key.slice(0, 6)}…${key.slice(-4)}`;

/** Passwords: scrypt with a per-password salt, encoded as `scrypt$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 64);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  if (expected.length < 16) return false;
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length);
  return timingSafeEqual(actual, expected);
}
