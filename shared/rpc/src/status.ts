import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { AppError, errors, INTERNAL_AUTH_MISCONFIGURED, isAppError, type ErrorKind } from '@kb/platform';

/** The one mapping between the error taxonomy and gRPC status codes. */
const kindToStatus: Record<ErrorKind, status> = {
  validation: status.INVALID_ARGUMENT,
  unauthenticated: status.UNAUTHENTICATED,
  payment_required: status.FAILED_PRECONDITION,
  forbidden: status.PERMISSION_DENIED,
  not_found: status.NOT_FOUND,
  conflict: status.ALREADY_EXISTS,
  unprocessable: status.FAILED_PRECONDITION,
  payload_too_large: status.OUT_OF_RANGE,
  rate_limited: status.RESOURCE_EXHAUSTED,
  internal: status.INTERNAL,
  downstream: status.UNKNOWN,
  unavailable: status.UNAVAILABLE,
};

/** Used when a status arrives without our metadata (transport failures, foreign servers). */
const statusToKind: Partial<Record<status, ErrorKind>> = {
  [status.INVALID_ARGUMENT]: 'validation',
  [status.UNAUTHENTICATED]: 'unauthenticated',
  [status.PERMISSION_DENIED]: 'forbidden',
  [status.NOT_FOUND]: 'not_found',
  [status.ALREADY_EXISTS]: 'conflict',
  [status.ABORTED]: 'conflict',
  [status.FAILED_PRECONDITION]: 'unprocessable',
  [status.RESOURCE_EXHAUSTED]: 'rate_limited',
  [status.UNAVAILABLE]: 'unavailable',
  [status.DEADLINE_EXCEEDED]: 'unavailable',
  [status.CANCELLED]: 'unavailable',
};

const KIND = 'x-error-kind';
const CODE = 'x-error-code';
const DETAILS = 'x-error-details';
const RETRY_AFTER = 'retry-after';
const PUBLIC_DETAILS = 'x-error-details-public';

export function toServiceError(err: unknown): Partial<ServiceError> {
  const app = isAppError(err) ? err : errors.internal('Internal error', { cause: err });
  const md = new Metadata();
  md.set(KIND, app.kind);
  md.set(CODE, app.code);
  if (app.details) md.set(DETAILS, JSON.stringify(app.details));
  if (app.publicDetails) md.set(PUBLIC_DETAILS, '1');
  if (app.retryAfterSeconds !== undefined) md.set(RETRY_AFTER, String(app.retryAfterSeconds));
  // 5xx details stay in the service's logs, never in the message that travels.
  const message = app.httpStatus >= 500 ? 'internal error' : app.message;
  // On the wire a refused internal token is what gRPC calls it; to the caller's caller it is a 503.
  const code = app.code === INTERNAL_AUTH_MISCONFIGURED ? status.UNAUTHENTICATED : kindToStatus[app.kind];
  return { code, details: message, metadata: md };
}

export function fromServiceError(err: ServiceError, service: string): AppError {
  const md = err.metadata;
  const kind = md?.get(KIND)[0]?.toString() as ErrorKind | undefined;
  if (kind && kind in kindToStatus) {
    const details = md.get(DETAILS)[0];
    const retry = md.get(RETRY_AFTER)[0];
    const code = md.get(CODE)[0]?.toString() ?? kind;
    if (code === INTERNAL_AUTH_MISCONFIGURED) {
      // Said here, where it is logged: the other side keeps 5xx messages to itself.
      return new AppError(kind, `${service} refused this service's internal token: set the same INTERNAL_TOKEN on every service`, {
        code,
      });
    }
    return new AppError(kind, err.details, {
      code,
      ...(details ? { details: JSON.parse(details.toString()) as Record<string, unknown> } : {}),
      ...(retry ? { retryAfterSeconds: Number(retry.toString()) } : {}),
      ...(md.get(PUBLIC_DETAILS)[0] !== undefined && { publicDetails: true }),
    });
  }
  const fallback = statusToKind[err.code];
  if (fallback === 'unavailable') return errors.unavailable(`${service} is unavailable`, { cause: err });
  if (fallback) return new AppError(fallback, err.details, { cause: err });
  return errors.internal(`${service} failed`, { cause: err });
}
