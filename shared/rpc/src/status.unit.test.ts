import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { status, type ServiceError } from '@grpc/grpc-js';
import { AppError, errorKinds, type ErrorKind } from '@kb/platform';
import { fromServiceError, toServiceError } from './status.js';

describe('gRPC status mapping', () => {
  for (const kind of Object.keys(errorKinds) as ErrorKind[]) {
    it(`round-trips ${kind} with its code, details and retry-after`, () => {
      const original = new AppError(kind, 'message', { code: `my_${kind}`, details: { field: 'x' }, retryAfterSeconds: 7 });
      const wire = toServiceError(original) as ServiceError;
      const back = fromServiceError(wire, 'svc');
      assert.equal(back.kind, kind);
      assert.equal(back.code, `my_${kind}`);
      assert.deepEqual(back.details, { field: 'x' });
      assert.equal(back.retryAfterSeconds, 7);
      assert.equal(back.httpStatus, errorKinds[kind].http);
    });
  }

  it('never sends a 5xx message across the wire', () => {
    const wire = toServiceError(new Error('database password is hunter2')) as ServiceError;
    assert.equal(wire.code, status.INTERNAL);
    assert.doesNotMatch(String(wire.details), /hunter2/);
  });

  it('maps a transport failure without our metadata to unavailable (503)', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED'), {
      code: status.UNAVAILABLE,
      details: 'No connection established',
      metadata: undefined,
    });
    assert.equal(fromServiceError(err as unknown as ServiceError, 'knowledge-base').httpStatus, 503);
  });
});
