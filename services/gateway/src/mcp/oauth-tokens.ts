/** OAuth access tokens name their grant (for the per-grant rate limit); the secret part is what is checked. */
export const ACCESS_TOKEN_RE = /^kbat_([0-9a-f]{32})_[A-Za-z0-9_-]{43}$/;
export const REFRESH_TOKEN_RE = /^kbrt_([0-9a-f]{32})_[A-Za-z0-9_-]{43}$/;

export function grantIdOfAccessToken(token: string): string {
  const id = ACCESS_TOKEN_RE.exec(token)?.[1];
  if (!id) throw new Error('not an access token');
  return id;
}
