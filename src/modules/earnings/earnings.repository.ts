// SQL of the drivers' earnings (contract section 21): a driver's entries over a range with what each
// transaction came to, the same for all of a company's drivers at once, a company's drivers, balances.
import { sql } from 'kysely';
import type { Executor } from '../../db/executor.js';

export interface DriverEntryRow {
  transaction_id: string;
  source_key: string;
  currency: string;
  created_at: Date;
  code: string;
  amount: string | number;
  /** The sum of the transaction's credits (for a job: its amount). */
  credited: string | number;
}

export class EarningsRepository {
  /**
   * The entries of a driver's accounts booked in [from, to), oldest first, each with its
   * transaction's source key and the sum of that transaction's credits.
   */
  async driverEntries(db: Executor, driverId: string, from: Date, to: Date): Promise<DriverEntryRow[]> {
    const result = await sql<DriverEntryRow>`
      select e.transaction_id, t.source_key, t.currency, t.created_at, e.code, e.amount,
        (select coalesce(sum(x.amount), 0) from ledger_entries x where x.transaction_id = e.transaction_id and x.amount > 0)::bigint as credited
      from ledger_accounts a
      join ledger_entries e on e.account_id = a.id and e.created_at >= ${from} and e.created_at < ${to}
      join ledger_transactions t on t.id = e.transaction_id
      where a.party_id = ${driverId} and a.kind = 'DRIVER'
      order by t.created_at, e.id`.execute(db);
    return result.rows;
  }

  /**
   * The entries of the DRIVER accounts of all of a company's drivers booked in [from, to), each row
   * with its driver: one statement whatever the number of drivers. Per driver the rows come in
   * driverEntries' order (oldest first), so grouping them by driver gives what it gives.
   */
  async companyDriverEntries(
    db: Executor,
    companyId: string,
    from: Date,
    to: Date,
  ): Promise<(DriverEntryRow & { driver_id: string })[]> {
    const result = await sql<DriverEntryRow & { driver_id: string }>`
      select a.party_id as driver_id, e.transaction_id, t.source_key, t.currency, t.created_at, e.code, e.amount,
        (select coalesce(sum(x.amount), 0) from ledger_entries x where x.transaction_id = e.transaction_id and x.amount > 0)::bigint as credited
      from driver_profiles dp
      join ledger_accounts a on a.party_id = dp.user_id and a.kind = 'DRIVER'
      join ledger_entries e on e.account_id = a.id and e.created_at >= ${from} and e.created_at < ${to}
      join ledger_transactions t on t.id = e.transaction_id
      where dp.company_id = ${companyId}
      order by a.party_id, t.created_at, e.id`.execute(db);
    return result.rows;
  }

  /** The balances per currency of all of a company's drivers (what balances() gives for their ids). */
  async companyDriverBalances(
    db: Executor,
    companyId: string,
  ): Promise<{ party_id: string; currency: string; balance: string }[]> {
    return db
      .selectFrom('ledger_accounts as a')
      .innerJoin('driver_profiles as dp', 'dp.user_id', 'a.party_id')
      .select(['a.party_id', 'a.currency', sql<string>`a.balance::bigint`.as('balance')])
      .where('dp.company_id', '=', companyId)
      .orderBy('a.currency')
      .execute() as Promise<{ party_id: string; currency: string; balance: string }[]>;
  }

  /** A driver's balance per currency (a driver's is kept in the account's row, with no deltas: LedgerService). */
  async balances(
    db: Executor,
    driverIds: string[],
  ): Promise<{ party_id: string; currency: string; balance: string }[]> {
    if (!driverIds.length) return [];
    return db
      .selectFrom('ledger_accounts')
      .select(['party_id', 'currency', sql<string>`balance::bigint`.as('balance')])
      .where('party_id', 'in', driverIds)
      .where('kind', '=', 'DRIVER')
      .orderBy('currency')
      .execute() as Promise<{ party_id: string; currency: string; balance: string }[]>;
  }

  /** The drivers of a company, by name. */
  companyDrivers(db: Executor, companyId: string) {
    return db
      .selectFrom('driver_profiles as dp')
      .innerJoin('users as u', 'u.id', 'dp.user_id')
      .select(['u.id', 'u.first_name', 'u.last_name'])
      .where('dp.company_id', '=', companyId)
      .orderBy('u.first_name')
      .orderBy('u.last_name')
      .orderBy('u.id')
      .execute();
  }
}
