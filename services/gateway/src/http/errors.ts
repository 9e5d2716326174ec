import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors, isAppError, toErrorBody } from '@kb/platform';

interface ValidationIssue {
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Names the offending field: `name`, `topics/0/name`, or the missing property. */
function fieldOf(issue: ValidationIssue): string {
  const missing = issue.params?.missingProperty ?? issue.params?.additionalProperty;
  const path = issue.instancePath.replace(/^\//, '');
  if (typeof missing === 'string') return path ? `${path}/${missing}` : missing;
  return path || '(body)';
}

/**
 * busboy's parse errors (a body that ends before its closing boundary, one whose
 * boundary is not the header's, a part header cut short): they carry no status,
 * only their message.
 */
const MALFORMED_MULTIPART =
  /^(Multipart: |Unexpected end of (form|file|multipart data)|Malformed part header|(Part|Preamble) terminated early|Boundary not found)/;

/** Maps every failure to the taxonomy; this is the only place HTTP errors are shaped. */
export function toAppError(err: FastifyError | Error): AppError {
  if (isAppError(err)) return err;
  const fe = err as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fe.validation && fe.validation.length > 0) {
    const issue = fe.validation[0]!;
    const field = fieldOf(issue);
    const where = fe.validationContext ?? 'request';
    const reason = issue.params?.additionalProperty ? 'is not an accepted field' : (issue.message ?? 'is invalid');
    return errors.validation(`${where}.${field} ${reason}`.replace(`${where}.(body)`, where), {
      code: 'validation_failed',
      details: { field, location: where },
    });
  }
  // A malformed or truncated multipart body (busboy's parse errors carry no status).
  if (!fe.statusCode && MALFORMED_MULTIPART.test(err.message))
    return new AppError('validation', `Malformed multipart body: ${err.message}`, { code: 'malformed_multipart' });
  const status = fe.statusCode ?? 500;
  if (status === 413) return errors.payloadTooLarge('Request body is too large', { code: 'body_too_large' });
  // Spec section 7 has no 415: an unsupported body type is a malformed request.
  if (status === 415) return new AppError('validation', err.message, { code: 'unsupported_media_type' });
  if (status >= 400 && status < 500) return new AppError('validation', err.message, { code: (fe.code ?? 'bad_request').toLowerCase() });
  return errors.internal('Internal error', { cause: err });
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: FastifyError | Error) {
  const app = toAppError(err);
  if (app.httpStatus >= 500) request.log.error({ err, cause: app.cause }, 'request failed');
  if (app.retryAfterSeconds !== undefined) void reply.header('retry-after', String(app.retryAfterSeconds));
  return reply.status(app.httpStatus).type('application/json').send(toErrorBody(app));
}
