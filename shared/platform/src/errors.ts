/**
 * The closed error taxonomy (spec section 7). Every failure that crosses a
 * boundary is an AppError of one kind; each transport maps kinds exactly once
 * (HTTP status here, gRPC status in @kb/rpc, retry vs dead-letter on the bus).
 */
export const errorKinds = {
  validation: { http: 400, retriable: false },
  unauthenticated: { http: 401, retriable: false },
  payment_required: { http: 402, retriable: false },
  forbidden: { http: 403, retriable: false },
  not_found: { http: 404, retriable: false },
  conflict: { http: 409, retriable: false },
  unprocessable: { http: 422, retriable: false },
  /** A request body over a size budget (uploads). */
  payload_too_large: { http: 413, retriable: false },
  rate_limited: { http: 429, retriable: true },
  internal: { http: 500, retriable: true },
  downstream: { http: 502, retriable: true },
  unavailable: { http: 503, retriable: true },
} as const;

export type ErrorKind = keyof typeof errorKinds;

export interface AppErrorOptions {
  /** Stable snake_case code for people and logs, e.g. `category_name_taken`. */
  code?: string;
  /** Field or extra facts that help the caller fix the request. */
  details?: Record<string, unknown>;
  /** Seconds, for 429/503. */
  retryAfterSeconds?: number;
  /**
   * The details are safe to show even on a 5xx (e.g. each destination's result
   * of a publish, which the caller configured): 5xx details are hidden otherwise.
   */
  publicDetails?: boolean;
  cause?: unknown;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly publicDetails: boolean;

  constructor(kind: ErrorKind, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.code = options.code ?? kind;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.publicDetails = options.publicDetails === true;
  }

  get httpStatus(): number {
    return errorKinds[this.kind].http;
  }

  get retriable(): boolean {
    return errorKinds[this.kind].retriable;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

export const errors = {
  validation: (message: string, opts?: AppErrorOptions) => new AppError('validation', message, opts),
  unauthenticated: (message = 'Missing or invalid credential', opts?: AppErrorOptions) => new AppError('unauthenticated', message, opts),
  paymentRequired: (message = 'Insufficient credits', opts?: AppErrorOptions) => new AppError('payment_required', message, opts),
  forbidden: (message = 'Not allowed', opts?: AppErrorOptions) => new AppError('forbidden', message, opts),
  notFound: (what: string, opts?: AppErrorOptions) => new AppError('not_found', `${what} not found`, { code: 'not_found', ...opts }),
  conflict: (message: string, opts?: AppErrorOptions) => new AppError('conflict', message, opts),
  unprocessable: (message: string, opts?: AppErrorOptions) => new AppError('unprocessable', message, opts),
  payloadTooLarge: (message: string, opts?: AppErrorOptions) => new AppError('payload_too_large', message, opts),
  rateLimited: (retryAfterSeconds: number, opts?: AppErrorOptions) =>
    new AppError('rate_limited', 'Too many requests', { retryAfterSeconds, ...opts }),
  internal: (message = 'Internal error', opts?: AppErrorOptions) => new AppError('internal', message, opts),
  downstream: (message: string, opts?: AppErrorOptions) => new AppError('downstream', message, opts),
  unavailable: (message = 'Service temporarily unavailable', opts?: AppErrorOptions) => new AppError('unavailable', message, opts),
};

/** The code of a call between services refused for its internal token: a deployment fault, not the client's. */
export const INTERNAL_AUTH_MISCONFIGURED = 'internal_auth_misconfigured';

/**
 * A service refused a call of another service for its internal token: the services were
 * started with different INTERNAL_TOKEN values (an operator's fix). A 503 to the client,
 * whose credential is not at fault.
 */
export const internalAuthMisconfigured = (message: string, opts?: AppErrorOptions) =>
  new AppError('unavailable', message, { ...opts, code: INTERNAL_AUTH_MISCONFIGURED });

/** Concurrency failure on (stream, version): callers retry or answer 409. */
export class ConcurrencyError extends AppError {
  constructor(streamId: string, expected: number, actual: number) {
    super('conflict', `Stream ${streamId} is at version ${actual}, expected ${expected}`, {
      code: 'concurrent_modification',
      details: { stream_id: streamId, expected_version: expected, actual_version: actual },
    });
    this.name = 'ConcurrencyError';
  }
}

/** The public JSON error body. 5xx messages never leak internals. */
export function toErrorBody(err: AppError): { error: { code: string; message: string; details?: Record<string, unknown> } } {
  const status = err.httpStatus;
  if (status >= 500) {
    // Only details marked public (what the caller's own destination answered) go out.
    const details = err.publicDetails && err.details ? { details: err.details } : {};
    return { error: { code: err.code, message: publicMessageFor(err.kind, err.code), ...details } };
  }
  return err.details
    ? { error: { code: err.code, message: err.message, details: err.details } }
    : { error: { code: err.code, message: err.message } };
}

function publicMessageFor(kind: ErrorKind, code: string): string {
  if (code === INTERNAL_AUTH_MISCONFIGURED)
    return 'The service is misconfigured (its internal services refuse each other); not a fault of your request or credential';
  switch (kind) {
    case 'downstream':
      return 'A downstream service failed';
    case 'unavailable':
      return 'Service temporarily unavailable; retry with backoff';
    default:
      return 'Internal error; safe to retry once';
  }
}
