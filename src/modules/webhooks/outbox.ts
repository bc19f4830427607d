// The writing side of the transactional outbox: called by the package lifecycle inside the same
// transaction as the status change, so an event exists exactly when its change committed.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';

export const DELIVERY_EVENTS = [
  'delivery.assigned',
  'delivery.picked_up',
  'delivery.in_transit',
  'delivery.delivered',
  'delivery.failed',
  'delivery.cancelled',
] as const;
export type DeliveryEventName = (typeof DELIVERY_EVENTS)[number];

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

/** One row per enabled endpoint of the business subscribed to the event; in the status change's transaction. */
export async function recordDeliveryEvent(trx: Transaction<Database> | Kysely<Database>, event: DeliveryEvent): Promise<void> {
  if (!event.businessId) return;
  const payload = webhookPayload(event.event, event.packageId, event.status, event.occurredAt);
  // One row per endpoint subscribed at this moment; the row is due at once (next_attempt_at = the change).
  await sql`
    insert into webhook_deliveries (id, endpoint_id, event, delivery_id, payload, status, next_attempt_at, created_at)
    select gen_random_uuid(), e.id, ${event.event}::text, ${event.packageId}::text, ${payload}::text, 'PENDING',
      ${event.occurredAt}::timestamptz, ${event.occurredAt}::timestamptz
    from webhook_endpoints e
    where e.business_id = ${event.businessId}::uuid and e.enabled and ${event.event}::text = any(e.events)
    order by e.created_at, e.id
  `.execute(trx);
}
