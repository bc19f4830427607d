// SQL of the drivers' earnings (contract section 21): tips per job, a driver's entries over a range
// with what each transaction came to, a company's drivers, a party's balances.
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

  /** A party's balance per currency (party accounts keep theirs in the row). */
  async balances(db: Executor, partyIds: string[]): Promise<{ party_id: string; currency: string; balance: string }[]> {
    if (!partyIds.length) return [];
    return db
      .selectFrom('ledger_accounts')
      .select(['party_id', 'currency', sql<string>`balance::bigint`.as('balance')])
      .where('party_id', 'in', partyIds)
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
