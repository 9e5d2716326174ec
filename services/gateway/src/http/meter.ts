import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '@kb/platform';
import type { CreditsService, Reservation } from '../app/credits.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Credits held for this request by its route's meter. */
    reservation?: Reservation | null;
    /** Units the meter reserved for this request. */
    reservedUnits?: number;
    /**
     * Set by a handler that did less than was reserved (an upload whose files were
     * partly skipped as duplicates): only these units are charged, the rest released.
     */
    meteredUnits?: number;
  }
}

/**
 * Drives credits from the routes' `config.meter` declarations: after auth and
 * validation (preHandler) the cost is reserved, so a 402 means no work was
 * done; as the response is sent, a 2xx settles the reservation (only the units
 * the handler used, when it set request.meteredUnits) and anything else releases it.
 */
export function registerMeter(app: FastifyInstance, credits: CreditsService): void {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    const meter = request.routeOptions.config.meter;
    if (!meter) return;
    if (!request.caller) throw errors.internal('Metered route without a caller');
    const units = meter.units ? meter.units(request) : 1;
    request.reservedUnits = units;
    request.reservation = await credits.reserve(request.caller, meter.operation, units);
  });

  /** Credits the request used: all it reserved, or its share for the units the handler says it used. */
  function costOf(request: FastifyRequest, reservation: Reservation): number {
    const used = request.meteredUnits;
    const reserved = request.reservedUnits ?? 0;
    if (used === undefined || reserved === 0 || used >= reserved) return reservation.amount;
    return Math.max(0, Math.floor((reservation.amount / reserved) * used));
  }

  async function finish(request: FastifyRequest, statusCode: number): Promise<void> {
    const reservation = request.reservation;
    if (!reservation) return;
    request.reservation = null;
    const cost = costOf(request, reservation);
    const ok = statusCode >= 200 && statusCode < 300 && cost > 0;
    try {
      await (ok ? credits.settle(reservation, cost) : credits.release(reservation));
    } catch (err) {
      request.log.error({ err, reservation }, ok ? 'could not settle credits' : 'could not release credits');
    }
  }

  // Before the response leaves, so a client that sees the result also sees the ledger entry.
  app.addHook('onSend', async (request, reply, payload) => {
    await finish(request, reply.statusCode);
    return payload;
  });
  // A request that never got to send (aborted) gives its reservation back.
  app.addHook('onResponse', async (request) => finish(request, 499));
}
