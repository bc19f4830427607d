// SQL of the ledger. Rows in bulk go as one JSON parameter (jsonb_to_recordset), so that one
// posting and a payout batch of 100,000 take the same few statements and no parameter limit.
import { runPrepared } from '../../db/prepared.js';
import { sql } from 'kysely';
import type { LedgerAccountKind } from '../../db/tables/ledger.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';
import type { Executor } from '../../db/executor.js';

export type { Executor };

export interface AccountRow {
  id: string;
  kind: LedgerAccountKind;
  party_id: string | null;
  currency: string;
}

export interface AccountBalanceRow extends AccountRow {
  balance: number;
}

export interface EntryRow {
  transaction_id: string;
  account_id: string;
  amount: number;
  code: string;
}

export interface TransactionRow {
  id: string;
  source_key: string;
  currency: string;
  memo: string | null;
  created_at: Date;
}

/**
 * `= any(...)` of a list passed as one parameter (a bound parameter each would stop at 65,535). An
 * array, not an IN subquery: the planner then probes the index instead of scanning the table.
 */
const anyOf = (values: string[], type: 'uuid' | 'text') =>
  sql`any(array(select value::${sql.raw(type)} from jsonb_array_elements_text(${JSON.stringify(values)}::jsonb)))`;

/** The balance of `ledger_accounts a`: the stored part plus the deltas not yet rolled up (one snapshot). */
export const balanceExpression = sql<number>`(a.balance + coalesce((select sum(d.amount) from ledger_balance_deltas d where d.account_id = a.id), 0))::bigint`;

export class LedgerRepository {
  /**
   * The accounts with these ids, and per currency those of these parties and operator purposes, in
   * one statement (a posting's accounts cost one round trip). `committed`: the row version was
   * written by a committed transaction, not by the caller's own (an account opened, or a balance
   * changed, earlier in the same transaction), so the account exists whatever the caller does next.
   */
  async findAccounts(
    trx: Executor,
    wanted: { ids: string[]; groups: { currency: string; parties: string[]; operators: LedgerAccountKind[] }[] },
  ): Promise<(AccountRow & { committed: boolean })[]> {
    const columns = sql`id, kind, party_id, currency, not coalesce(xmin = pg_current_xact_id_if_assigned()::xid, false) as committed`;
    const parts = [];
    if (wanted.ids.length)
      parts.push(sql`select ${columns} from ledger_accounts where id = ${anyOf(wanted.ids, 'uuid')}`);
    for (const { currency, parties, operators } of wanted.groups) {
      if (parties.length)
        parts.push(
          sql`select ${columns} from ledger_accounts where currency = ${currency} and party_id = ${anyOf(parties, 'uuid')}`,
        );
      if (operators.length)
        parts.push(
          sql`select ${columns} from ledger_accounts where currency = ${currency} and party_id is null and kind = ${anyOf(operators, 'text')}`,
        );
    }
    if (!parts.length) return [];
    // Prepared: one text per number of currencies and kinds of ref (nearly always the one).
    return runPrepared(
      trx,
      sql<AccountRow & { committed: boolean }>`${sql.join(parts, sql` union all `)}`.compile(trx),
    );
  }

  async userRoles(trx: Executor, userIds: string[]): Promise<{ id: string; role: string }[]> {
    if (!userIds.length) return [];
    return trx
      .selectFrom('users')
      .select(['id', 'role'])
      .where(sql<boolean>`id = ${anyOf(userIds, 'uuid')}`)
      .execute();
  }

  /**
   * New accounts, in the order given (the caller sorts them, so that two postings creating the same
   * accounts wait for each other instead of deadlocking); one that exists already is left alone.
   */
  async insertAccounts(trx: Executor, rows: AccountRow[], now: Date): Promise<void> {
    if (!rows.length) return;
    await sql`
      insert into ledger_accounts (id, kind, party_id, currency, created_at, updated_at)
      select x.id, x.kind, x.party_id, x.currency, ${now}, ${now}
      from rows from (jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as (id uuid, kind text, party_id uuid, currency text))
        with ordinality as x(id, kind, party_id, currency, n)
      order by x.n
      on conflict do nothing`.execute(trx);
  }

  /**
   * Books the transactions whose source key is new, in one statement: their rows, their entries,
   * the balances kept in the row (drivers' and customers': those rows locked first, in id order, so
   * that postings and payout batches touching the same accounts queue instead of deadlocking) and
   * the deltas of the others (businesses' and the operator's: appended, no row lock, so postings do
   * not queue on a business that hundreds of completions a second charge). A transaction whose key was
   * booked before books nothing here. Returns the keys it booked, and whether every account its
   * entries name exists (the entries tables have no foreign keys; false means the caller's ids were
   * wrong and the caller must roll back).
   */
  async bookNew(
    trx: Executor,
    input: {
      transactions: Omit<TransactionRow, 'created_at'>[];
      entries: (EntryRow & { inRow: boolean })[];
      now: Date;
    },
  ): Promise<{ booked: Set<string>; accountsExist: boolean }> {
    const { transactions, entries, now } = input;
    const query = sql<{ source_key: string | null; accounts_exist: boolean }>`
      with txs as (
        insert into ledger_transactions (id, source_key, currency, memo, created_at)
        select x.id, x.source_key, x.currency, x.memo, ${now}::timestamptz
        from jsonb_to_recordset(${JSON.stringify(transactions)}::jsonb) as x(id uuid, source_key text, currency text, memo text)
        order by x.source_key
        on conflict (source_key) do nothing
        returning id, source_key),
      fresh as (
        select x.transaction_id, x.account_id, x.amount, x.code, x.in_row, x.n
        from rows from (jsonb_to_recordset(${JSON.stringify(entries)}::jsonb) as (transaction_id uuid, account_id uuid, amount bigint, code text, "inRow" boolean))
          with ordinality as x(transaction_id, account_id, amount, code, in_row, n)
        join txs on txs.id = x.transaction_id),
      row_changes as (
        select account_id, sum(amount)::bigint as amount from fresh where in_row group by account_id having sum(amount) <> 0),
      locked as materialized (
        select a.id from ledger_accounts a where a.id = any(array(select account_id from row_changes)) order by a.id for update),
      -- Only rows in array(select id from locked): an InitPlan, run to its end (every row-kept
      -- account locked, in id order) before the update reads a row. Not a join on row_changes alone, which
      -- would update rows in whatever order the plan reads them.
      balances as (
        update ledger_accounts a set balance = a.balance + d.amount, updated_at = ${now}::timestamptz
        from row_changes d
        where a.id = any(array(select id from locked)) and d.account_id = a.id),
      appended as (
        insert into ledger_balance_deltas (account_id, amount)
        select account_id, sum(amount)::bigint from fresh where not in_row group by account_id having sum(amount) <> 0),
      booked_entries as (
        insert into ledger_entries (transaction_id, account_id, amount, code, created_at)
        select transaction_id, account_id, amount, code, ${now}::timestamptz from fresh order by n),
      named as (select distinct account_id from fresh)
      select txs.source_key, checked.accounts_exist
      from (select (select count(*) from named) = (select count(*) from ledger_accounts a where a.id = any(array(select account_id from named))) as accounts_exist) checked
      left join txs on true`;
    const rows = await runPrepared(trx, query.compile(trx));
    return {
      booked: new Set(rows.flatMap((r) => (r.source_key === null ? [] : [r.source_key]))),
      accountsExist: rows[0]?.accounts_exist ?? true,
    };
  }

  async transactionsByKey(trx: Executor, sourceKeys: string[]): Promise<TransactionRow[]> {
    if (!sourceKeys.length) return [];
    return trx
      .selectFrom('ledger_transactions')
      .select(['id', 'source_key', 'currency', 'memo', 'created_at'])
      .where(sql<boolean>`source_key = ${anyOf(sourceKeys, 'text')}`)
      .execute();
  }

  async entriesOf(trx: Executor, transactionIds: string[]): Promise<EntryRow[]> {
    if (!transactionIds.length) return [];
    return trx
      .selectFrom('ledger_entries')
      .select(['transaction_id', 'account_id', 'amount', 'code'])
      .where(sql<boolean>`transaction_id = ${anyOf(transactionIds, 'uuid')}`)
      .orderBy('id')
      .execute();
  }

  /**
   * Folds the committed deltas into their accounts' balances, in one statement: a delta is either
   * still in the table or in the balance, never both or neither, for any reader's snapshot. Deltas
   * of postings still in flight are not visible, so they stay for the next run. The accounts are
   * locked in id order before they are updated, as a payout batch locks the businesses' rows, so
   * the two queue instead of deadlocking.
   */
  async rollUpDeltas(trx: Executor): Promise<number> {
    const result = await sql<{ n: number }>`
      with moved as (delete from ledger_balance_deltas returning account_id, amount),
      sums as (select account_id, sum(amount)::bigint as amount, count(*) as n from moved group by account_id),
      locked as materialized (
        select a.id from ledger_accounts a where a.id = any(array(select account_id from sums)) order by a.id for update),
      updated as (
        update ledger_accounts a set balance = a.balance + sums.amount from sums
        where a.id = any(array(select id from locked)) and a.id = sums.account_id returning sums.n)
      select coalesce(sum(n), 0)::int as n from updated`.execute(trx);
    return result.rows[0]?.n ?? 0;
  }

  async accountWithBalance(
    trx: Executor,
    where: { id: string } | { currency: string; partyId: string } | { currency: string; kind: LedgerAccountKind },
  ): Promise<AccountBalanceRow | undefined> {
    const condition =
      'id' in where
        ? sql`a.id = ${where.id}`
        : 'partyId' in where
          ? sql`a.party_id = ${where.partyId} and a.currency = ${where.currency}`
          : sql`a.party_id is null and a.kind = ${where.kind} and a.currency = ${where.currency}`;
    const result = await sql<AccountBalanceRow>`
      select a.id, a.kind, a.party_id, a.currency, ${balanceExpression} as balance
      from ledger_accounts a where ${condition}`.execute(trx);
    return result.rows[0];
  }

  async balances(trx: Executor, filter: { currency?: string; nonZero?: boolean }): Promise<AccountBalanceRow[]> {
    const result = await sql<AccountBalanceRow>`
      select * from (
        select a.id, a.kind, a.party_id, a.currency, ${balanceExpression} as balance
        from ledger_accounts a
        ${filter.currency ? sql`where a.currency = ${filter.currency}` : sql``}
      ) b
      ${filter.nonZero ? sql`where b.balance <> 0` : sql``}
      order by b.currency, b.kind, b.party_id nulls first`.execute(trx);
    return result.rows;
  }

  /**
   * Accounts with a non-zero balance, newest first from the cursor, with their party's name (a
   * business's trading name, a person's full name; none for the operator's own accounts).
   */
  async nonZeroPage(
    trx: Executor,
    filter: { currency?: string; before?: Cursor; limit: number },
  ): Promise<(AccountBalanceRow & { name: string | null; created_at: Date })[]> {
    const result = await sql<AccountBalanceRow & { name: string | null; created_at: Date }>`
      select a.id, a.kind, a.party_id, a.currency, a.created_at, ${balanceExpression} as balance,
        case when a.party_id is null then null else coalesce(bp.business_name, u.first_name || ' ' || u.last_name) end as name
      from ledger_accounts a
      left join users u on u.id = a.party_id
      left join business_profiles bp on bp.user_id = a.party_id and a.kind = 'BUSINESS'
      where ${balanceExpression} <> 0
        ${filter.currency ? sql`and a.currency = ${filter.currency}` : sql``}
        ${filter.before ? sql`and ${beforeCursor(filter.before, 'a.created_at', 'a.id')}` : sql``}
      order by a.created_at desc, a.id desc
      limit ${filter.limit}`.execute(trx);
    return result.rows;
  }

  /**
   * Books the PAYOUT transaction of every line of a batch just inserted (payout-line:<id>, the
   * line's transaction_id): the party's −amount, clearing's +amount. Set-based, where postMany would
   * carry 100,000 lines through Node and JSON: the caller holds the party accounts' row locks (taken
   * when the lines were chosen), and the source keys are new (line ids), so none of postMany's
   * replay checks can apply. Returns the lines booked and their total.
   */
  async bookPayoutLines(
    trx: Executor,
    input: { batchId: string; currency: string; clearingId: string; now: Date },
  ): Promise<{ lines: number; total: number }> {
    const { batchId, currency, clearingId, now } = input;
    const result = await sql<{ lines: number; total: number }>`
      with lines as (select id, account_id, amount, transaction_id from payout_lines where batch_id = ${batchId}),
      txs as (
        insert into ledger_transactions (id, source_key, currency, memo, created_at)
        select transaction_id, 'payout-line:' || id, ${currency}::char(3), null, ${now}::timestamptz from lines),
      entries as (
        insert into ledger_entries (transaction_id, account_id, amount, code, created_at)
        select transaction_id, account_id, -amount, 'PAYOUT', ${now}::timestamptz from lines
        union all
        select transaction_id, ${clearingId}::uuid, amount, 'PAYOUT', ${now}::timestamptz from lines),
      balances as (
        update ledger_accounts a set balance = a.balance - l.amount, updated_at = ${now}::timestamptz
        from lines l where a.id = l.account_id),
      delta as (
        insert into ledger_balance_deltas (account_id, amount)
        select ${clearingId}::uuid, sum(amount) from lines having count(*) > 0)
      select count(*)::int as lines, coalesce(sum(amount), 0)::bigint as total from lines`.execute(trx);
    const row = result.rows[0]!;
    return { lines: row.lines, total: Number(row.total) };
  }

  /**
   * Marks a batch's OPEN lines PAID and books each one's PAYOUT_PAID transaction
   * (payout-line:<id>:paid: clearing −amount, bank +amount) in one statement. A line another
   * transaction is changing is waited for and re-checked (still OPEN?) by PostgreSQL's UPDATE.
   */
  async bookPayoutLinesPaid(
    trx: Executor,
    input: { batchId: string; currency: string; clearingId: string; bankId: string; now: Date },
  ): Promise<{ lines: number; total: number }> {
    const { batchId, currency, clearingId, bankId, now } = input;
    const result = await sql<{ lines: number; total: number }>`
      with paid as (
        update payout_lines set status = 'PAID', closing_transaction_id = gen_random_uuid(), closed_at = ${now}::timestamptz
        where batch_id = ${batchId} and status = 'OPEN'
        returning id, amount, closing_transaction_id as tx),
      txs as (
        insert into ledger_transactions (id, source_key, currency, memo, created_at)
        select tx, 'payout-line:' || id || ':paid', ${currency}::char(3), null, ${now}::timestamptz from paid),
      entries as (
        insert into ledger_entries (transaction_id, account_id, amount, code, created_at)
        select tx, ${clearingId}::uuid, -amount, 'PAYOUT_PAID', ${now}::timestamptz from paid
        union all
        select tx, ${bankId}::uuid, amount, 'PAYOUT_PAID', ${now}::timestamptz from paid),
      deltas as (
        insert into ledger_balance_deltas (account_id, amount)
        select ${clearingId}::uuid, -sum(amount) from paid having count(*) > 0
        union all
        select ${bankId}::uuid, sum(amount) from paid having count(*) > 0)
      select count(*)::int as lines, coalesce(sum(amount), 0)::bigint as total from paid`.execute(trx);
    const row = result.rows[0]!;
    return { lines: row.lines, total: Number(row.total) };
  }

  /** The sum of every account's balance per currency (0 for each, if the books are right). */
  async trialBalance(trx: Executor): Promise<{ currency: string; total: number; accounts: number }[]> {
    const result = await sql<{ currency: string; total: number; accounts: number }>`
      select a.currency, sum(${balanceExpression})::bigint as total, count(*)::int as accounts
      from ledger_accounts a group by a.currency order by a.currency`.execute(trx);
    return result.rows;
  }
}
