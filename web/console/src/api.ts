/**
 * The console's only way to the service: the public HTTP API under /api/v1,
 * signed in with the session login (POST /auth/login). No private back door.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface Session {
  token: string;
  expires_at: string;
}

const TOKEN_KEY = 'kb.session';

export interface Api {
  readonly signedIn: boolean;
  login(email: string, password: string): Promise<void>;
  logout(): Promise<void>;
  request<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Like request, with the X-Total-Count header of list routes. */
  list<T>(path: string): Promise<{ items: T[]; total: number }>;
  upload(path: string, form: FormData, onProgress: (sent: number, total: number) => void): Promise<unknown>;
}

async function errorOf(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`;
  let code: string | undefined;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = body.error.message;
    code = body.error?.code;
  } catch {
    // a plain-text error (e.g. the router's 404)
  }
  return new ApiError(res.status, message, code);
}

export function createApi(base = '/api/v1', storage: Storage = sessionStorage, onSignedOut: () => void = () => {}): Api {
  let token = storage.getItem(TOKEN_KEY);

  const signOutLocally = () => {
    token = null;
    storage.removeItem(TOKEN_KEY);
    onSignedOut();
  };

  async function send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
    if (res.status === 401 && token) signOutLocally();
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  return {
    get signedIn() {
      return token !== null;
    },
    async login(email, password) {
      const res = await fetch(`${base}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      if (!res.ok) throw await errorOf(res);
      const session = (await res.json()) as Session;
      token = session.token;
      storage.setItem(TOKEN_KEY, token);
    },
    async logout() {
      try {
        await send('POST', '/auth/logout');
      } finally {
        signOutLocally();
      }
    },
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await send(method, path, body);
      return (res.status === 204 ? undefined : await res.json()) as T;
    },
    async list<T>(path: string) {
      const res = await send('GET', path);
      const items = (await res.json()) as T[];
      return { items, total: Number(res.headers.get('x-total-count') ?? items.length) };
    },
    upload(path, form, onProgress) {
      // XMLHttpRequest, not fetch: fetch reports no upload progress.
      return new Promise((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open('POST', `${base}${path}`);
        if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`);
        xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : e.loaded);
        xhr.onload = () => {
          let body: unknown = xhr.responseText;
          try {
            body = JSON.parse(xhr.responseText);
          } catch {
            // plain text
          }
          if (xhr.status >= 200 && xhr.status < 300) resolve(body);
          else {
            const err = (body as { error?: { message?: string; code?: string } })?.error;
            reject(new ApiError(xhr.status, err?.message ?? `${xhr.status}`, err?.code));
          }
        };
        xhr.onerror = () => reject(new ApiError(0, 'The service could not be reached'));
        xhr.send(form);
      });
    },
  };
}
