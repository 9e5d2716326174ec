import type { FastifyRequest } from 'fastify';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * This server's own base URL, as tokens are issued for and metadata names it:
 * the configured public URL; without one, the loopback address it listens on.
 * The request's Host is trusted only when it names a loopback alias of the same
 * port (so `localhost:8080` and `127.0.0.1:8080` both work locally); any other
 * Host (a forged one included) gets the default, never a reflection of itself.
 */
export function ownBaseUrl(request: Pick<FastifyRequest, 'headers' | 'raw'>, configured?: string): string {
  if (configured) return configured.replace(/\/+$/, '');
  const port = request.raw.socket?.localPort;
  const fallback = port ? `http://127.0.0.1:${port}` : 'http://127.0.0.1';
  const host = request.headers.host;
  if (typeof host !== 'string' || !port) return fallback;
  try {
    const url = new URL(`http://${host}`);
    return LOOPBACK_HOSTS.has(url.hostname) && Number(url.port || 80) === port ? `http://${url.host}` : fallback;
  } catch {
    return fallback;
  }
}

/** An origin (scheme://host[:port]) as compared: lower case, no trailing slash. */
export const normalizeOrigin = (origin: string): string => origin.replace(/\/+$/, '').toLowerCase();

/** A comma-separated setting of URLs (OAUTH_RESOURCES) as a list. */
export const urlsOf = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
