// SQL of payout batches and their lines (migration 0017). The ledger's own tables are written by
// LedgerService only; settlements and business payments are ledger/receipts.repository.ts.
import { sql } from 'kysely';
import type { PayoutBatchStatus, PayoutLineStatus } from '../../db/tables/ledger.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';
import { balanceExpression, type Executor } from '../ledger/ledger.repository.js';

export interface BatchRow {
  id: string;
  number: number;
  currency: string;
  minimum: number;
  status: PayoutBatchStatus;
  line_count: number;
  total: number;
  created_by: string;
  created_at: Date;
  closed_at: Date | null;
}

export interface LineRow {
  id: string;
  batch_id: string;
  seq: number;
  party_kind: 'DRIVER' | 'BUSINESS';
  party_id: string;
  name: string;
  phone: string;
  amount: number;
  status: PayoutLineStatus;
  failure_reason: string | null;
  created_at: Date;
  closed_at: Date | null;
}

const BATCH_COLUMNS = [
  'id',
  'number',
  'currency',
  'minimum',
  'status',
  'line_count',
  'total',
  'created_by',
  'created_at',
  'closed_at',
] as const;
const LINE_COLUMNS = [
  'id',
  'batch_id',
  'seq',
  'party_kind',
  'party_id',
  'name',
  'phone',
  'amount',
  'status',
  'failure_reason',
  'created_at',
  'closed_at',
] as const;

// Number() on bigint columns: node-postgres and PGlite hand them over as strings (or BigInt).
const toBatch = (r: BatchRow): BatchRow => ({
  ...r,
  number: Number(r.number),
  minimum: Number(r.minimum),
  total: Number(r.total),
  currency: r.currency.trim(),
});
const toLine = (r: LineRow): LineRow => ({ ...r, amount: Number(r.amount) });

/** The advisory-lock namespace of payout batch creation (pg_advisory_xact_lock(int, int)). */
const PAYOUT_LOCK_SPACE = 21_017;

export class PayoutsRepository {
  /** Batch creators of one currency take turns (until commit): a second batch sees the first's lines. */
  async lockPayoutCurrency(trx: Executor, currency: string): Promise<void> {
    await sql`select pg_advisory_xact_lock(${PAYOUT_LOCK_SPACE}, hashtext(${currency}))`.execute(trx);
  }

  async insertBatch(
    trx: Executor,
    row: { id: string; currency: string; minimum: number; createdBy: string; now: Date },
  ): Promise<number> {
    const inserted = await trx
      .insertInto('payout_batches')
      .values({
        id: row.id,
        currency: row.currency,
        minimum: row.minimum,
        status: 'OPEN',
        line_count: 0,
        total: 0,
        created_by: row.createdBy,
        created_at: row.now,
      })
      .returning('number')
      .executeTakeFirstOrThrow();
    return Number(inserted.number);
  }

  /**
   * A line for every DRIVER and BUSINESS account of the currency with a balance at or above the
   * minimum and no OPEN line, for its whole balance, in two statements.
   *
   * A business's balance is its row plus its pending deltas (postings append them without locking
   * the row), and the roll-up folds deltas into the row (deleting them) while payouts run. Reading
   * both in the statement that locks the row would count a delta twice when a roll-up commits while
   * that statement waits for the row: PostgreSQL then re-reads the row (deltas folded in) but keeps
   * the statement's older snapshot for the deltas (still there). So the businesses' rows are locked
   * first, in id order (as the roll-up locks them): once they are held, no roll-up can change them,
   * and the second statement's snapshot, taken after, sees each delta either in the row or in the
   * table. Only those businesses are paid; one opened meanwhile, or whose balance reached the
   * minimum meanwhile, waits for the next batch.
   *
   * Drivers' balances are only in the row (no deltas): the second statement locks them in id order
   * (as a posting locks them, so the two never deadlock); a driver a posting changed meanwhile is
   * re-read after its commit and re-checked against the minimum, so the line's amount is the
   * balance at the moment it is locked.
   */
  async insertLines(
    trx: Executor,
    input: { batchId: string; currency: string; minimum: number; now: Date },
  ): Promise<void> {
    const { batchId, currency, minimum, now } = input;
    // Chosen from this statement's snapshot, then locked by id: a row a roll-up changes meanwhile is
    // re-checked for its id only (re-checking the balance would add the new row to the old deltas).
    const businesses = await sql<{ id: string }>`
      with owed as materialized (
        select a.id from ledger_accounts a
        where a.currency = ${currency} and a.kind = 'BUSINESS'
          and ${balanceExpression} >= ${minimum})
      select a.id from ledger_accounts a where a.id = any(array(select id from owed))
      order by a.id
      for update of a`.execute(trx);
    const locked = businesses.rows.map((r) => r.id);
    await sql`
      insert into payout_lines (id, batch_id, seq, account_id, party_kind, party_id, name, phone, amount, status, transaction_id, created_at)
      select gen_random_uuid(), ${batchId}::uuid, row_number() over (order by p.id), p.id, p.kind, p.party_id,
        coalesce(bp.business_name, u.first_name || ' ' || u.last_name), u.phone, p.balance, 'OPEN', gen_random_uuid(), ${now}::timestamptz
      from (
        select a.id, a.kind, a.party_id, b.balance from ledger_accounts a
        cross join lateral (select case when a.kind = 'BUSINESS' then ${balanceExpression} else a.balance end as balance) b
        where a.currency = ${currency}
          and (a.kind = 'DRIVER' or (a.kind = 'BUSINESS' and a.id = any(${locked}::uuid[])))
          and b.balance >= ${minimum}
          and not exists (select 1 from payout_lines l where l.account_id = a.id and l.status in ('OPEN', 'SENT', 'UNKNOWN'))
        order by a.id
        for update of a
      ) p
      join users u on u.id = p.party_id
      left join business_profiles bp on bp.user_id = p.party_id and p.kind = 'BUSINESS'`.execute(trx);
  }

  async setBatchTotals(trx: Executor, batchId: string, totals: { lines: number; total: number }): Promise<void> {
    await trx
      .updateTable('payout_batches')
      .set({ line_count: totals.lines, total: totals.total })
      .where('id', '=', batchId)
      .execute();
  }

  async batch(trx: Executor, batchId: string, options: { lock?: boolean } = {}): Promise<BatchRow | undefined> {
    let query = trx.selectFrom('payout_batches').select(BATCH_COLUMNS).where('id', '=', batchId);
    if (options.lock) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row && toBatch(row as BatchRow);
  }

  async batches(trx: Executor, filter: { currency?: string; before?: Cursor; limit: number }): Promise<BatchRow[]> {
    let query = trx.selectFrom('payout_batches').select(BATCH_COLUMNS);
    if (filter.currency) query = query.where('currency', '=', filter.currency);
    if (filter.before) query = query.where(beforeCursor(filter.before, 'created_at', 'id'));
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map((r) => toBatch(r as BatchRow));
  }

  /** Lines and amounts per status of these batches. */
  async statusTotals(
    trx: Executor,
    batchIds: string[],
  ): Promise<{ batch_id: string; status: PayoutLineStatus; lines: number; amount: number }[]> {
    if (!batchIds.length) return [];
    const rows = await trx
      .selectFrom('payout_lines')
      .select([
        'batch_id',
        'status',
        sql<number>`count(*)::int`.as('lines'),
        sql<number>`sum(amount)::bigint`.as('amount'),
      ])
      .where('batch_id', 'in', batchIds)
      .groupBy(['batch_id', 'status'])
      .execute();
    return rows.map((r) => ({ ...r, amount: Number(r.amount) }));
  }

  async lines(
    trx: Executor,
    batchId: string,
    filter: { afterSeq?: number; status?: PayoutLineStatus; limit?: number },
  ): Promise<LineRow[]> {
    let query = trx.selectFrom('payout_lines').select(LINE_COLUMNS).where('batch_id', '=', batchId);
    if (filter.afterSeq !== undefined) query = query.where('seq', '>', filter.afterSeq);
    if (filter.status) query = query.where('status', '=', filter.status);
    query = query.orderBy('seq');
    if (filter.limit !== undefined) query = query.limit(filter.limit);
    return (await query.execute()).map(toLine);
  }

  async line(trx: Executor, batchId: string, lineId: string): Promise<LineRow | undefined> {
    const row = await trx
      .selectFrom('payout_lines')
      .select(LINE_COLUMNS)
      .where('batch_id', '=', batchId)
      .where('id', '=', lineId)
      .executeTakeFirst();
    return row && toLine(row);
  }

  /** OPEN → FAILED, only if still OPEN (the row lock makes a concurrent paid or failed wait and re-check). */
  async failLine(
    trx: Executor,
    batchId: string,
    lineId: string,
    reason: string | null,
    now: Date,
  ): Promise<LineRow | undefined> {
    const row = await trx
      .updateTable('payout_lines')
      .set({ status: 'FAILED', failure_reason: reason, closed_at: now })
      .where('batch_id', '=', batchId)
      .where('id', '=', lineId)
      .where('status', '=', 'OPEN')
      .returning(LINE_COLUMNS)
      .executeTakeFirst();
    return row && toLine(row);
  }

  async setClosingTransaction(trx: Executor, lineId: string, transactionId: string): Promise<void> {
    await trx
      .updateTable('payout_lines')
      .set({ closing_transaction_id: transactionId })
      .where('id', '=', lineId)
      .execute();
  }

  /** CLOSED once no line is OPEN, SENT or UNKNOWN. */
  async closeBatchIfSettled(trx: Executor, batchId: string, now: Date): Promise<void> {
    await trx
      .updateTable('payout_batches')
      .set({ status: 'CLOSED', closed_at: now })
      .where('id', '=', batchId)
      .where('status', '=', 'OPEN')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('payout_lines')
              .select('id')
              .where('batch_id', '=', batchId)
              .where('status', 'in', ['OPEN', 'SENT', 'UNKNOWN']),
          ),
        ),
      )
      .execute();
  }
}
