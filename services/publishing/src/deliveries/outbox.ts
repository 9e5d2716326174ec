import type { StoreTransaction } from '@kb/store';
import { DELIVERIES, type DeliveryDoc } from '../projections/collections.js';

/** The body every webhook carries (Standard Webhooks: type, timestamp, data). */
export const webhookBody = (type: string, at: string, data: Record<string, unknown>) => JSON.stringify({ type, timestamp: at, data });

/**
 * Queues a delivery in the caller's transaction, so it commits with the fact it
 * announces. The id is the webhook-id; an existing id is left alone (idempotent).
 */
export async function enqueueDelivery(
  tx: StoreTransaction,
  d: Omit<DeliveryDoc, 'status' | 'attempts' | 'log' | 'next_attempt_at'> & { next_attempt_at: number },
): Promise<boolean> {
  if (await tx.get(DELIVERIES, d.id)) return false;
  await tx.insert<DeliveryDoc>(DELIVERIES, { ...d, status: 'pending', attempts: 0, log: [] });
  return true;
}
