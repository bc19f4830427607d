// Webhook endpoints, the event outbox and the delivery log (webhooks module).
import type { Kysely } from 'kysely';

export async function up(_db: Kysely<any>): Promise<void> {
  // Filled by the module that owns these tables.
}

export async function down(_db: Kysely<any>): Promise<void> {}
