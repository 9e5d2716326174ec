/**
 * HTTP for the bulk-import CLI: one call to the public API, retried while the
 * failure is transient (the connection failed, 429, 500, 502, 503, 504) with
 * exponential backoff and full jitter, honouring Retry-After. Re-sending an
 * intake call is safe because the server skips bytes it already holds.
 */

export interface ApiResult {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
  /** Calls made, the first included. */
  attempts: number;
}

export interface RetryPolicy {
  /** Calls in all, the first included. */
  attempts: number;
  /** Backoff before the first retry; each later one doubles it, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseDelayMs: 500, maxDelayMs: 30_000 };

/** Statuses worth another try: the server is busy or briefly unable (spec 7: 429, 500 once, 502, 503). */
export const isTransientStatus = (status: number): boolean => status === 429 || (status >= 500 && status <= 504 && status !== 501);

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date), or undefined. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Wait before retry number `retry` (1 for the first): a random time up to the
 * exponential bound (full jitter, so many clients do not come back together),
 * and never shorter than the server's Retry-After.
 */
export function backoffMs(retry: number, policy: RetryPolicy, retryAfter?: number, random = Math.random): number {
  const bound = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jittered = Math.round(random() * bound);
  return retryAfter === undefined ? jittered : Math.max(retryAfter, jittered);
}

export interface CallOptions {
  policy?: RetryPolicy;
  /** Told about each retry (for the log). */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof fetch;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One API call with retries. `body` is built for each attempt (a FormData or a
 * stream cannot be sent twice). A connection that keeps failing rethrows its last error.
 */
export async function callApi(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: () => Promise<FormData | string> | FormData | string },
  options: CallOptions = {},
): Promise<ApiResult> {
  const policy = options.policy ?? DEFAULT_RETRY;
  const sleep = options.sleep ?? defaultSleep;
  const doFetch = options.fetch ?? fetch;
  for (let attempt = 1; ; attempt++) {
    let failure: { reason: string; retryAfter?: number; error?: unknown };
    try {
      const body = init.body ? await init.body() : undefined;
      const res = await doFetch(url, { method: init.method, headers: init.headers, ...(body !== undefined && { body }) });
      const text = await res.text();
      if (!isTransientStatus(res.status) || attempt >= policy.attempts) {
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        return { status: res.status, json, text, attempts: attempt };
      }
      const retryAfter = retryAfterMs(res.headers.get('retry-after'));
      failure = { reason: `HTTP ${res.status}`, ...(retryAfter !== undefined && { retryAfter }) };
    } catch (err) {
      if (attempt >= policy.attempts) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      failure = { reason: cause?.code ?? cause?.message ?? (err as Error).message, error: err };
    }
    const delayMs = backoffMs(attempt, policy, failure.retryAfter);
    options.onRetry?.({ attempt, delayMs, reason: failure.reason });
    await sleep(delayMs);
  }
}
