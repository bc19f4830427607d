// SQL of M-Pesa B2C payouts (contract section 26): the payments of payout lines, their Transaction
// Status queries, the stored callbacks, and the line and batch states they move.
import { createHash, randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { PayoutLineStatus } from '../../db/tables/ledger.js';
import type {
  B2cPaymentState,
  MpesaB2cPaymentsTable,
  MpesaCallbackKind,
  MpesaCallbacksTable,
} from '../../db/tables/mpesa.js';

/** A payment as the service reads it: the table's columns listed in paymentColumns. */
export type PaymentRow = Pick<Selectable<MpesaB2cPaymentsTable>, (typeof paymentColumns)[number]>;

export interface OpenLine {
  id: string;
  amount: number;
  phone: string;
  party_kind: 'DRIVER' | 'BUSINESS';
  party_id: string;
}

export type CallbackRow = Pick<Selectable<MpesaCallbacksTable>, 'id' | 'kind' | 'token_hash' | 'body'>;

const paymentColumns = [
  'id',
  'batch_id',
  'line_id',
  'part',
  'amount',
  'phone',
  'originator_conversation_id',
  'conversation_id',
  'token_hash',
  'state',
  'attempts',
  'receipt',
  'result_code',
  'result_desc',
  'sent_at',
  'status_asks',
] as const;

export class MpesaRepository {
  async lockBatch(
    trx: Executor,
    batchId: string,
  ): Promise<{ id: string; currency: string; status: 'OPEN' | 'CLOSED' } | undefined> {
    const row = await trx
      .selectFrom('payout_batches')
      .select(['id', 'currency', 'status'])
      .where('id', '=', batchId)
      .forUpdate()
      .executeTakeFirst();
    return row ? { ...row, currency: row.currency.trim() } : undefined;
  }

  async setStopped(trx: Executor, batchId: string, reason: string | null): Promise<void> {
    await trx.updateTable('payout_batches').set({ mpesa_stopped: reason }).where('id', '=', batchId).execute();
  }

  async stopped(trx: Executor, batchId: string): Promise<string | null> {
    const row = await trx
      .selectFrom('payout_batches')
      .select('mpesa_stopped')
      .where('id', '=', batchId)
      .executeTakeFirst();
    return row?.mpesa_stopped ?? null;
  }

  /** The batch's OPEN lines, locked, in line order. */
  async openLines(trx: Executor, batchId: string): Promise<OpenLine[]> {
    return trx
      .selectFrom('payout_lines')
      .select(['id', 'amount', 'phone', 'party_kind', 'party_id'])
      .where('batch_id', '=', batchId)
      .where('status', '=', 'OPEN')
      .orderBy('seq')
      .forUpdate()
      .execute();
  }

  async insertPayments(
    trx: Executor,
    rows: {
      id: string;
      batch_id: string;
      line_id: string;
      part: number;
      amount: number;
      phone: string;
      originator_conversation_id: string;
      token_hash: string;
      created_at: Date;
    }[],
  ): Promise<void> {
    if (!rows.length) return;
    await trx
      .insertInto('mpesa_b2c_payments')
      .values(rows.map((r) => ({ ...r, state: 'QUEUED' as const })))
      .onConflict((oc) => oc.columns(['line_id', 'part']).doNothing())
      .execute();
  }

  async setLineStatus(
    trx: Executor,
    lineId: string,
    status: PayoutLineStatus,
    fields: { reason?: string | null; closedAt?: Date | null; closingTransactionId?: string | null } = {},
  ): Promise<void> {
    await trx
      .updateTable('payout_lines')
      .set({
        status,
        ...(fields.reason !== undefined ? { failure_reason: fields.reason } : {}),
        ...(fields.closedAt !== undefined ? { closed_at: fields.closedAt } : {}),
        ...(fields.closingTransactionId !== undefined ? { closing_transaction_id: fields.closingTransactionId } : {}),
      })
      .where('id', '=', lineId)
      .execute();
  }

  async batchOfLine(trx: Executor, lineId: string): Promise<string | undefined> {
    const row = await trx.selectFrom('payout_lines').select('batch_id').where('id', '=', lineId).executeTakeFirst();
    return row?.batch_id;
  }

  async line(
    trx: Executor,
    lineId: string,
  ): Promise<(OpenLine & { status: PayoutLineStatus; batch_id: string }) | undefined> {
    return trx
      .selectFrom('payout_lines')
      .select(['id', 'amount', 'phone', 'party_kind', 'party_id', 'status', 'batch_id'])
      .where('id', '=', lineId)
      .forUpdate()
      .executeTakeFirst();
  }

  async paymentsOfLine(trx: Executor, lineId: string): Promise<PaymentRow[]> {
    return trx
      .selectFrom('mpesa_b2c_payments')
      .select(paymentColumns)
      .where('line_id', '=', lineId)
      .orderBy('part')
      .execute();
  }

  async payment(trx: Executor, id: string, options: { lock?: boolean } = {}): Promise<PaymentRow | undefined> {
    let q = trx.selectFrom('mpesa_b2c_payments').select(paymentColumns).where('id', '=', id);
    if (options.lock) q = q.forUpdate();
    return q.executeTakeFirst();
  }

  async paymentByToken(trx: Executor, tokenHash: string): Promise<PaymentRow | undefined> {
    return trx
      .selectFrom('mpesa_b2c_payments')
      .select(paymentColumns)
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  async queryByToken(
    trx: Executor,
    tokenHash: string,
  ): Promise<{ id: string; payment_id: string; originator_conversation_id: string | null } | undefined> {
    return trx
      .selectFrom('mpesa_status_queries')
      .select(['id', 'payment_id', 'originator_conversation_id'])
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  /** QUEUED → SENT, once: the caller that wins sends it. */
  async claimForSending(
    trx: Executor,
    id: string,
    now: Date,
    from: 'QUEUED' | 'SENT',
  ): Promise<PaymentRow | undefined> {
    let q = trx
      .updateTable('mpesa_b2c_payments')
      .set((eb) => ({ state: 'SENT', sent_at: now, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .where('state', '=', from);
    if (from === 'SENT') q = q.where('conversation_id', 'is', null);
    return q.returning(paymentColumns).executeTakeFirst();
  }

  async setPayment(
    trx: Executor,
    id: string,
    fields: Partial<{
      state: B2cPaymentState;
      conversation_id: string | null;
      receipt: string | null;
      result_code: string | null;
      result_desc: string | null;
      transaction_id: string | null;
      result_at: Date | null;
      status_asked_at: Date | null;
      status_asks: number;
    }>,
    onlyIn?: B2cPaymentState[],
  ): Promise<boolean> {
    let q = trx.updateTable('mpesa_b2c_payments').set(fields).where('id', '=', id);
    if (onlyIn) q = q.where('state', 'in', onlyIn);
    const result = await q.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** QUEUED payments of batches not stopped, oldest first. */
  async queued(trx: Executor, limit: number): Promise<PaymentRow[]> {
    return trx
      .selectFrom('mpesa_b2c_payments as p')
      .innerJoin('payout_batches as b', 'b.id', 'p.batch_id')
      .select(paymentColumns.map((c) => `p.${c}` as const))
      .where('p.state', '=', 'QUEUED')
      .where('b.mpesa_stopped', 'is', null)
      .orderBy('p.created_at')
      .orderBy('p.part')
      .limit(limit)
      .execute();
  }

  /** Sent but never answered by Daraja (the process stopped mid-request): safe to send again with the same id. */
  async unanswered(trx: Executor, before: Date, limit: number): Promise<PaymentRow[]> {
    return trx
      .selectFrom('mpesa_b2c_payments')
      .select(paymentColumns)
      .where('state', '=', 'SENT')
      .where('conversation_id', 'is', null)
      .where('sent_at', '<', before)
      .limit(limit)
      .execute();
  }

  /** SENT (acknowledged) with no result since `before`: they become UNKNOWN. */
  async markOverdueUnknown(trx: Executor, before: Date): Promise<number> {
    const result = await trx
      .updateTable('mpesa_b2c_payments')
      .set({ state: 'UNKNOWN' })
      .where('state', '=', 'SENT')
      .where('conversation_id', 'is not', null)
      .where('sent_at', '<', before)
      .returning('line_id')
      .execute();
    return result.length;
  }

  /** The lines still SENT that have an UNKNOWN payment (one row per such payment). */
  async unknownLinesStillSent(trx: Executor): Promise<string[]> {
    const rows = await trx
      .selectFrom('mpesa_b2c_payments')
      .innerJoin('payout_lines', 'payout_lines.id', 'mpesa_b2c_payments.line_id')
      .select('mpesa_b2c_payments.line_id')
      .where('mpesa_b2c_payments.state', '=', 'UNKNOWN')
      .where('payout_lines.status', '=', 'SENT')
      .execute();
    return rows.map((r) => r.line_id);
  }

  /**
   * Claims the UNKNOWN payments whose last Transaction Status is older than `before` (or never
   * asked), up to `maxAsks` each: marked asked now, so that two sweepers never ask about one twice.
   */
  async claimToAsk(trx: Executor, before: Date, now: Date, maxAsks: number, limit: number): Promise<PaymentRow[]> {
    return trx
      .updateTable('mpesa_b2c_payments')
      .set((eb) => ({ status_asked_at: now, status_asks: eb('status_asks', '+', 1) }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('mpesa_b2c_payments')
          .select('id')
          .where('state', '=', 'UNKNOWN')
          .where('status_asks', '<', maxAsks)
          .where((w) => w.or([w('status_asked_at', 'is', null), w('status_asked_at', '<', before)]))
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returning(paymentColumns)
      .execute();
  }

  async insertQuery(
    trx: Executor,
    row: { id: string; payment_id: string; token_hash: string; asked_at: Date },
  ): Promise<void> {
    await trx.insertInto('mpesa_status_queries').values(row).execute();
  }

  async setQuery(
    trx: Executor,
    id: string,
    fields: Partial<{
      originator_conversation_id: string;
      conversation_id: string;
      answered_at: Date;
      result_code: string;
    }>,
  ): Promise<void> {
    await trx.updateTable('mpesa_status_queries').set(fields).where('id', '=', id).execute();
  }

  /**
   * Stores a callback as received; a repeat (the same kind, token, ids and body) stores nothing.
   * Returns the row's id, new or old, and whether it is new.
   */
  async storeCallback(
    trx: Executor,
    received: { kind: MpesaCallbackKind; tokenHash: string; ids: readonly string[]; body: unknown; at: Date },
  ): Promise<{ id: string; fresh: boolean }> {
    const text = JSON.stringify(received.body ?? null);
    const digest = createHash('sha256').update(text).digest('hex').slice(0, 16);
    const row = {
      id: randomUUID(),
      dedupe_key: `${received.kind}:${received.tokenHash.slice(0, 16)}:${received.ids.join(':')}:${digest}`,
      kind: received.kind,
      token_hash: received.tokenHash,
      body: text,
      received_at: received.at,
    };
    const inserted = await trx
      .insertInto('mpesa_callbacks')
      .values(row)
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { id: inserted.id, fresh: true };
    const old = await trx
      .selectFrom('mpesa_callbacks')
      .select('id')
      .where('dedupe_key', '=', row.dedupe_key)
      .executeTakeFirstOrThrow();
    return { id: old.id, fresh: false };
  }

  /** One unprocessed callback, locked (SKIP LOCKED: two workers never work the same one). */
  async claimCallback(
    trx: Executor,
    id: string,
    kinds: readonly MpesaCallbackKind[],
  ): Promise<CallbackRow | undefined> {
    return trx
      .selectFrom('mpesa_callbacks')
      .select(['id', 'kind', 'token_hash', 'body'])
      .where('id', '=', id)
      .where('kind', 'in', kinds)
      .where('processed_at', 'is', null)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
  }

  /** Unworked callbacks of these kinds (each kind has one worker: B2C payouts, or STK collections). */
  async unprocessedCallbacks(
    trx: Executor,
    before: Date,
    limit: number,
    kinds: readonly MpesaCallbackKind[],
  ): Promise<string[]> {
    const rows = await trx
      .selectFrom('mpesa_callbacks')
      .select('id')
      .where('processed_at', 'is', null)
      .where('kind', 'in', kinds)
      .where('received_at', '<', before)
      .orderBy('received_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  async finishCallback(trx: Executor, id: string, outcome: string, now: Date): Promise<void> {
    await trx.updateTable('mpesa_callbacks').set({ processed_at: now, outcome }).where('id', '=', id).execute();
  }

  /** Every QUEUED payment of the batch goes; returns their lines. */
  async dropQueued(trx: Executor, batchId: string): Promise<string[]> {
    const rows = await trx
      .deleteFrom('mpesa_b2c_payments')
      .where('batch_id', '=', batchId)
      .where('state', '=', 'QUEUED')
      .returning('line_id')
      .execute();
    return [...new Set(rows.map((r) => r.line_id))];
  }

  async callbackOutcomes(trx: Executor): Promise<{ outcome: string | null; n: number }[]> {
    const rows = await sql<{ outcome: string | null; n: number }>`
      select outcome, count(*)::int as n from mpesa_callbacks group by outcome`.execute(trx);
    return rows.rows;
  }
}
