// SQL of M-Pesa collections (contract section 26): the STK Push prompts of jobs paid by M-Pesa and
// the B2C refunds of paid jobs cancelled or failed.
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type {
  B2cPaymentState,
  MpesaRefundsTable,
  MpesaStkPaymentsTable,
  StkPaymentState,
} from '../../db/tables/mpesa.js';

export type StkRow = Selectable<MpesaStkPaymentsTable>;
export type RefundRow = Selectable<MpesaRefundsTable>;

export class PaymentsRepository {
  async insertStk(
    trx: Executor,
    row: Pick<StkRow, 'id' | 'job_type' | 'job_id' | 'amount' | 'phone' | 'token_hash' | 'created_at'>,
  ): Promise<void> {
    await trx
      .insertInto('mpesa_stk_payments')
      .values({ ...row, state: 'QUEUED' })
      .execute();
  }

  async stk(trx: Executor, id: string, options: { lock?: boolean } = {}): Promise<StkRow | undefined> {
    let q = trx.selectFrom('mpesa_stk_payments').selectAll().where('id', '=', id);
    if (options.lock) q = q.forUpdate();
    return q.executeTakeFirst();
  }

  async stkByToken(trx: Executor, tokenHash: string): Promise<StkRow | undefined> {
    return trx.selectFrom('mpesa_stk_payments').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /** The job's prompts, newest first. */
  async stksOfJob(trx: Executor, jobId: string): Promise<StkRow[]> {
    return trx
      .selectFrom('mpesa_stk_payments')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('created_at', 'desc')
      .execute();
  }

  /** QUEUED → SENT, once: the caller that wins sends it. */
  async claimStk(trx: Executor, id: string, now: Date): Promise<StkRow | undefined> {
    return trx
      .updateTable('mpesa_stk_payments')
      .set((eb) => ({ state: 'SENT', sent_at: now, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .where('state', '=', 'QUEUED')
      .returningAll()
      .executeTakeFirst();
  }

  async setStk(
    trx: Executor,
    id: string,
    fields: Partial<
      Pick<
        StkRow,
        | 'state'
        | 'merchant_request_id'
        | 'checkout_request_id'
        | 'receipt'
        | 'result_code'
        | 'result_desc'
        | 'transaction_id'
        | 'result_at'
        | 'queried_at'
        | 'sent_at'
      >
    >,
    onlyIn?: StkPaymentState[],
  ): Promise<boolean> {
    let q = trx.updateTable('mpesa_stk_payments').set(fields).where('id', '=', id);
    if (onlyIn) q = q.where('state', 'in', onlyIn);
    return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
  }

  async queuedStks(trx: Executor, limit: number): Promise<StkRow[]> {
    return trx
      .selectFrom('mpesa_stk_payments')
      .selectAll()
      .where('state', '=', 'QUEUED')
      .orderBy('created_at')
      .limit(limit)
      .execute();
  }

  /**
   * SENT prompts with no callback since `before` (or never answered by Daraja), not queried since
   * `before`: claimed for STK Push Query (marked queried now, so two sweepers never ask twice at once).
   */
  async claimToQuery(trx: Executor, before: Date, now: Date, limit: number): Promise<StkRow[]> {
    return trx
      .updateTable('mpesa_stk_payments')
      .set((eb) => ({ queried_at: now, queries: eb('queries', '+', 1) }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('mpesa_stk_payments')
          .select('id')
          .where('state', '=', 'SENT')
          .where('sent_at', '<', before)
          .where((w) => w.or([w('queried_at', 'is', null), w('queried_at', '<', before)]))
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .execute();
  }

  async insertRefund(
    trx: Executor,
    row: Pick<
      RefundRow,
      | 'id'
      | 'job_type'
      | 'job_id'
      | 'stk_payment_id'
      | 'amount'
      | 'phone'
      | 'originator_conversation_id'
      | 'token_hash'
      | 'created_at'
    >,
  ): Promise<boolean> {
    const inserted = await trx
      .insertInto('mpesa_refunds')
      .values({ ...row, state: 'QUEUED' })
      .onConflict((oc) => oc.column('job_id').doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async refund(trx: Executor, id: string, options: { lock?: boolean } = {}): Promise<RefundRow | undefined> {
    let q = trx.selectFrom('mpesa_refunds').selectAll().where('id', '=', id);
    if (options.lock) q = q.forUpdate();
    return q.executeTakeFirst();
  }

  async refundByToken(trx: Executor, tokenHash: string): Promise<RefundRow | undefined> {
    return trx.selectFrom('mpesa_refunds').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  async refundOfJob(trx: Executor, jobId: string): Promise<RefundRow | undefined> {
    return trx.selectFrom('mpesa_refunds').selectAll().where('job_id', '=', jobId).executeTakeFirst();
  }

  async claimRefund(trx: Executor, id: string, now: Date, from: 'QUEUED' | 'SENT'): Promise<RefundRow | undefined> {
    let q = trx
      .updateTable('mpesa_refunds')
      .set((eb) => ({ state: 'SENT', sent_at: now, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .where('state', '=', from);
    if (from === 'SENT') q = q.where('conversation_id', 'is', null);
    return q.returningAll().executeTakeFirst();
  }

  async setRefund(
    trx: Executor,
    id: string,
    fields: Partial<
      Pick<
        RefundRow,
        'state' | 'conversation_id' | 'receipt' | 'result_code' | 'result_desc' | 'transaction_id' | 'result_at'
      >
    >,
    onlyIn?: B2cPaymentState[],
  ): Promise<boolean> {
    let q = trx.updateTable('mpesa_refunds').set(fields).where('id', '=', id);
    if (onlyIn) q = q.where('state', 'in', onlyIn);
    return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
  }

  async queuedRefunds(trx: Executor, limit: number): Promise<RefundRow[]> {
    return trx
      .selectFrom('mpesa_refunds')
      .selectAll()
      .where('state', '=', 'QUEUED')
      .orderBy('created_at')
      .limit(limit)
      .execute();
  }

  /** Sent, never answered by Daraja (the process stopped mid-request): safe to send again with the same id. */
  async unansweredRefunds(trx: Executor, before: Date, limit: number): Promise<RefundRow[]> {
    return trx
      .selectFrom('mpesa_refunds')
      .selectAll()
      .where('state', '=', 'SENT')
      .where('conversation_id', 'is', null)
      .where('sent_at', '<', before)
      .limit(limit)
      .execute();
  }
}
