// The writing side of the transactional outbox: called by the package lifecycle inside the same
// transaction as the status change, so an event exists exactly when its change committed.
import type { Executor } from '../../db/executor.js';
import { OutboxRepository } from './outbox.repository.js';

export const DELIVERY_EVENTS = [
  'delivery.assigned',
  'delivery.picked_up',
  'delivery.in_transit',
  'delivery.delivered',
  'delivery.failed',
  'delivery.cancelled',
] as const;
export type DeliveryEventName = (typeof DELIVERY_EVENTS)[number];

/**
 * What an endpoint may subscribe to: the delivery events (the default list) and the events sent only
 * to endpoints that name them (`alert.raised`, contract section 23).
 */
export const WEBHOOK_EVENTS = [...DELIVERY_EVENTS, 'alert.raised'] as const;

export interface DeliveryEvent {
  packageId: string;
  /** The package's business (its creator when a BUSINESS created it); null: nobody to notify. */
  businessId: string | null;
  event: DeliveryEventName;
  status: string;
  occurredAt: Date;
}

/** The body, exactly the interface description's four fields in its order. */
export function webhookPayload(event: string, deliveryId: string, status: string, occurredAt: Date): string {
  return JSON.stringify({ event, delivery_id: deliveryId, status, timestamp: occurredAt.toISOString() });
}

/** For callers without the composition root's repository (tests, benches): it keeps no state but its default executor. */
let standalone: OutboxRepository | undefined;

/**
 * One row per enabled endpoint of the business subscribed to the event; in the status change's
 * transaction (`outbox`: the one built in services.ts).
 */
export async function recordDeliveryEvent(
  trx: Executor,
  event: DeliveryEvent,
  outbox: OutboxRepository = (standalone ??= new OutboxRepository(trx as never)),
): Promise<void> {
  if (!event.businessId) return;
  const payload = webhookPayload(event.event, event.packageId, event.status, event.occurredAt);
  await outbox.insertForSubscribers(trx, {
    businessId: event.businessId,
    event: event.event,
    deliveryId: event.packageId,
    payload,
    occurredAt: event.occurredAt,
  });
}
