// SQL of business invoices (migration 0023) and the ledger reads they are made from.
import { sql } from 'kysely';
import type { Executor } from '../../db/executor.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';

/** A business account with entries in the month and no invoice for it yet. */
export interface DueAccountRow {
  account_id: string;
  business_id: string;
  currency: string;
  business_name: string;
  business_address: string | null;
}

export interface MonthEntryRow {
  id: number;
  amount: number;
  code: string;
  created_at: Date;
  source_key: string;
  memo: string | null;
}

export interface InvoiceRow {
  id: string;
  seq: number;
  number: string;
  business_id: string;
  month: string;
  currency: string;
  business_name: string;
  business_address: string | null;
  opening_balance: number;
  closing_balance: number;
  totals: unknown;
  lines: unknown;
  line_count: number;
  created_at: Date;
}

export interface NewInvoice extends Omit<InvoiceRow, 'month' | 'totals' | 'lines'> {
  /** The first day of the month, 'YYYY-MM-01'. */
  monthStart: string;
  totals: object;
  lines: object[];
}

/** The advisory-lock namespace of invoice runs (pg_advisory_xact_lock(int, int)): one run at a time numbers invoices. */
const INVOICE_LOCK_SPACE = 21_023;

// Number() on bigint columns: node-postgres and PGlite hand them over as strings (or BigInt).
const toInvoice = (r: InvoiceRow): InvoiceRow => ({
  ...r,
  seq: Number(r.seq),
  opening_balance: Number(r.opening_balance),
  closing_balance: Number(r.closing_balance),
  currency: r.currency.trim(),
  totals: typeof r.totals === 'string' ? JSON.parse(r.totals) : r.totals,
  lines: typeof r.lines === 'string' ? JSON.parse(r.lines) : r.lines,
});

const SUMMARY_COLUMNS = [
  'i.id',
  'i.seq',
  'i.number',
  'i.business_id',
  'i.currency',
  'i.business_name',
  'i.business_address',
  'i.opening_balance',
  'i.closing_balance',
  'i.totals',
  'i.line_count',
  'i.created_at',
] as const;

export class InvoicesRepository {
  /** Held until the transaction ends: a second run waits, then sees the first one's invoices. */
  async lockRuns(trx: Executor): Promise<void> {
    await sql`select pg_advisory_xact_lock(${INVOICE_LOCK_SPACE}, 0)`.execute(trx);
  }

  /** Business accounts with an entry in [start, end) and no invoice of that month, by business name. */
  async dueAccounts(trx: Executor, start: Date, end: Date, monthStart: string): Promise<DueAccountRow[]> {
    const result = await sql<DueAccountRow>`
      select a.id as account_id, a.party_id as business_id, a.currency, coalesce(bp.business_name, '') as business_name, bp.business_address
      from ledger_accounts a
      left join business_profiles bp on bp.user_id = a.party_id
      where a.kind = 'BUSINESS'
        and exists (select 1 from ledger_entries e where e.account_id = a.id and e.created_at >= ${start} and e.created_at < ${end})
        and not exists (select 1 from invoices i where i.business_id = a.party_id and i.month = ${monthStart}::date and i.currency = a.currency)
      order by business_name, a.party_id, a.currency`.execute(trx);
    return result.rows.map((r) => ({ ...r, currency: r.currency.trim() }));
  }

  /** The account's balance at `before`: the sum of its entries until then (entries are never changed). */
  async balanceBefore(trx: Executor, accountId: string, before: Date): Promise<number> {
    const row = await trx
      .selectFrom('ledger_entries')
      .select(sql<string>`coalesce(sum(amount), 0)::bigint`.as('total'))
      .where('account_id', '=', accountId)
      .where('created_at', '<', before)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async entriesBetween(trx: Executor, accountId: string, start: Date, end: Date): Promise<MonthEntryRow[]> {
    const rows = await trx
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
      .select(['e.id', 'e.amount', 'e.code', 'e.created_at', 't.source_key', 't.memo'])
      .where('e.account_id', '=', accountId)
      .where('e.created_at', '>=', start)
      .where('e.created_at', '<', end)
      .orderBy('e.created_at')
      .orderBy('e.id')
      .execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), amount: Number(r.amount), memo: r.memo ?? null }));
  }

  /** The businesses' own references of these packages. */
  async packageReferences(trx: Executor, ids: string[]): Promise<Map<string, string | null>> {
    if (!ids.length) return new Map();
    const rows = await trx.selectFrom('packages').select(['id', 'reference']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.reference]));
  }

  async lastSeq(trx: Executor): Promise<number> {
    const row = await trx
      .selectFrom('invoices')
      .select(sql<string>`coalesce(max(seq), 0)`.as('seq'))
      .executeTakeFirstOrThrow();
    return Number(row.seq);
  }

  async insert(trx: Executor, rows: NewInvoice[]): Promise<void> {
    if (!rows.length) return;
    await trx
      .insertInto('invoices')
      .values(
        rows.map((r) => ({
          id: r.id,
          seq: r.seq,
          number: r.number,
          business_id: r.business_id,
          month: r.monthStart,
          currency: r.currency,
          business_name: r.business_name,
          business_address: r.business_address,
          opening_balance: r.opening_balance,
          closing_balance: r.closing_balance,
          totals: JSON.stringify(r.totals),
          lines: JSON.stringify(r.lines),
          line_count: r.line_count,
          created_at: r.created_at,
        })),
      )
      .execute();
  }

  async getById(trx: Executor, id: string): Promise<InvoiceRow | undefined> {
    const row = await trx
      .selectFrom('invoices as i')
      .select([...SUMMARY_COLUMNS, 'i.lines', sql<string>`to_char(i.month, 'YYYY-MM')`.as('month')])
      .where('i.id', '=', id)
      .executeTakeFirst();
    return row && toInvoice(row as InvoiceRow);
  }

  /** Newest first; `lines` is not read (a list shows totals). */
  async list(
    trx: Executor,
    filter: { businessId?: string; monthStart?: string; before?: Cursor; limit: number },
  ): Promise<InvoiceRow[]> {
    let query = trx
      .selectFrom('invoices as i')
      .select([...SUMMARY_COLUMNS, sql<string>`to_char(i.month, 'YYYY-MM')`.as('month')]);
    if (filter.businessId) query = query.where('i.business_id', '=', filter.businessId);
    if (filter.monthStart) query = query.where('i.month', '=', filter.monthStart);
    if (filter.before) query = query.where(beforeCursor(filter.before, 'i.created_at', 'i.id'));
    const rows = await query.orderBy('i.created_at', 'desc').orderBy('i.id', 'desc').limit(filter.limit).execute();
    return rows.map((r) => toInvoice({ ...r, lines: [] } as InvoiceRow));
  }
}
