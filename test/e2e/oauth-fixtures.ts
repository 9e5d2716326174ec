import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';

/** OAuth 2.1 driven by a script acting as the assistant (registration, consent by form post, token exchange). */

export const form = (body: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) for (const item of [v].flat()) params.append(k, item);
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: params.toString(),
    redirect: 'manual' as const,
  };
};

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

export async function registerClient(baseUrl: string, redirect: string, name = 'Assistant'): Promise<string> {
  const res = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirect] }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { client_id: string }).client_id;
}

/** The authorization request's parameters for a client (PKCE S256), with a fresh verifier. */
export function authorizeParams(clientId: string, redirect: string, extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st',
    ...extra,
  };
  return { params, verifier };
}

export interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  error?: string;
  error_description?: string;
}

export async function tokenRequest(baseUrl: string, body: Record<string, string>): Promise<{ status: number; body: TokenAnswer }> {
  const res = await fetch(`${baseUrl}/oauth/token`, form(body));
  return { status: res.status, body: (await res.json()) as TokenAnswer };
}

/** A raw HTTP request with any Host header (fetch may not set Host). */
export function rawHttp(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
