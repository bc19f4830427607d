// The writing side of the transactional outbox: called by the package lifecycle inside the same
// transaction as the status change, so an event exists exactly when its change committed.
import type { Kysely, Transaction } from 'kysely';
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
  /** The package's new status, e.g. DELIVERED. */
  status: string;
  occurredAt: Date;
}

/**
 * Records a delivery event for every enabled endpoint of the business that subscribes to it.
 * Must be called with the transaction that changes the package's status.
 */
export async function recordDeliveryEvent(_trx: Transaction<Database> | Kysely<Database>, _event: DeliveryEvent): Promise<void> {
  // Implemented by the webhooks module (issue 6): fan-out into its delivery table.
}
