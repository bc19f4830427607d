// SQL of packages paid by M-Pesa (contract section 26): their payment state, what the payments
// module reads of them, and the ones to expire or refund.
import { sql } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { JobPaymentState } from '../../db/tables/mpesa.js';

const COLUMNS = [
  'id',
  'status',
  'created_by',
  'customer_id',
  'price_amount',
  'price_currency',
  'payment_phone',
  'payment_state',
  'vehicle_type',
  'pickup_lat',
  'pickup_lng',
  'parcel',
  'created_at',
] as const;

export class PackagePaymentsRepository {
  async load(db: Executor, id: string, options: { lock?: boolean } = {}) {
    let q = db.selectFrom('packages').select(COLUMNS).where('id', '=', id).where('payment_method', '=', 'MPESA');
    if (options.lock) q = q.forUpdate();
    return q.executeTakeFirst();
  }

  /** Moves the payment state from one of `from`; returns whether it moved. */
  async setState(
    db: Executor,
    id: string,
    to: JobPaymentState,
    from: JobPaymentState[],
    fields: { payment_receipt?: string | null; payment_failure?: string | null; payment_phone?: string } = {},
  ): Promise<boolean> {
    const result = await db
      .updateTable('packages')
      .set({ payment_state: to, ...fields })
      .where('id', '=', id)
      .where('payment_state', 'in', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async setReceipt(db: Executor, id: string, receipt: string): Promise<void> {
    await db
      .updateTable('packages')
      .set({ payment_receipt: receipt })
      .where('id', '=', id)
      .where('payment_receipt', 'is', null)
      .execute();
  }

  async unpaidBefore(db: Executor, before: Date, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('packages')
      .select('id')
      .where('payment_state', 'in', ['PENDING', 'FAILED'])
      .where('status', '=', 'PENDING')
      .where('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Paid packages cancelled or failed without a refund row: what was paid less any cancellation fee. */
  async toRefund(db: Executor, limit: number): Promise<{ id: string; refundable: number }[]> {
    const result = await sql<{ id: string; refundable: string | number }>`
      select p.id, p.price_amount - coalesce(p.cancellation_fee, 0) as refundable from packages p
      where p.payment_state = 'PAID' and p.status in ('CANCELLED', 'FAILED')
        and not exists (select 1 from mpesa_refunds r where r.job_id = p.id)
      order by p.updated_at limit ${limit}`.execute(db);
    return result.rows.map((r) => ({ id: r.id, refundable: Number(r.refundable) }));
  }
}

/** The account's own phone (the default payer of its M-Pesa packages). */
export async function accountPhone(db: Executor, userId: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('phone').where('id', '=', userId).executeTakeFirst();
  return row?.phone ?? undefined;
}
