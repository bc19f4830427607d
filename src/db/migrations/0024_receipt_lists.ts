// GET /admin/settlements and /admin/business-payments page newest first, all or one party's
// (contract section 21): (created_at desc, id desc) indexes, as payout_batches and invoices have.
// The party indexes of 0017 gain the id, so one party's page starts at the cursor too.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index settlements_created_idx on settlements (created_at desc, id desc);
    create index business_payments_created_idx on business_payments (created_at desc, id desc);
    drop index settlements_driver_idx;
    create index settlements_driver_idx on settlements (driver_id, created_at desc, id desc);
    drop index business_payments_business_idx;
    create index business_payments_business_idx on business_payments (business_id, created_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index settlements_created_idx;
    drop index business_payments_created_idx;
    drop index settlements_driver_idx;
    create index settlements_driver_idx on settlements (driver_id, created_at desc);
    drop index business_payments_business_idx;
    create index business_payments_business_idx on business_payments (business_id, created_at desc);
  `.execute(db);
}
