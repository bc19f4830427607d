// Kysely types of the webhook tables (see src/db/migrations/0005_webhooks.ts).
import type { Generated } from 'kysely';

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

export interface WebhookEndpointsTable {
  id: string;
  business_id: string;
  url: string;
  events: string[];
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  description: string | null;
  secret: string;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveriesTable {
  id: string;
  seq: Generated<number>;
  endpoint_id: string;
  event: string;
  /** The package id (a random id for `webhook.test`); events with the same one are sent in order. */
  delivery_id: string;
  /** The exact body, fixed when the event is recorded so every attempt sends the same bytes. */
  payload: string;
  status: Generated<DeliveryStatus>;
  attempts: Generated<number>;
  /** `attempts` when the retry schedule last started over (a manual retry). */
  attempt_base: Generated<number>;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  locked_by: string | null;
  last_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  completed_at: Date | null;
  created_at: Date;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
