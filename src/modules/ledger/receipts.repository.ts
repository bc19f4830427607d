// SQL of settlements and business payments (migration 0017): the receipts that book cash in, and
// the party and currency checks before them. The ledger's own tables are written by LedgerService only.
import { sql } from 'kysely';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';
import type { Executor } from './ledger.repository.js';

export interface PartyRow {
  id: string;
  role: string;
  /** The currency of the party's country; null for a party without a country. */
  currency: string | null;
}

export type ReceiptTable = 'settlements' | 'business_payments';

export interface ReceiptRow {
  id: string;
  party_id: string;
  party_name: string;
  amount: number;
  currency: string;
  reference: string;
  recorded_by: string;
  recorded_by_name: string;
  transaction_id: string;
  created_at: Date;
}

export class ReceiptsRepository {
  async party(trx: Executor, userId: string): Promise<PartyRow | undefined> {
    return trx
      .selectFrom('users as u')
      .leftJoin('countries as c', 'c.id', 'u.country_id')
      .select(['u.id', 'u.role', 'c.currency'])
      .where('u.id', '=', userId)
      .executeTakeFirst()
      .then((r) => r && { ...r, currency: r.currency?.trim() ?? null });
  }

  async isCountryCurrency(trx: Executor, currency: string): Promise<boolean> {
    return (
      (await trx.selectFrom('countries').select('id').where('currency', '=', currency).limit(1).executeTakeFirst()) !==
      undefined
    );
  }

  /** A party account's balance, its row locked until the transaction ends; undefined when there is no account. */
  async lockPartyBalance(trx: Executor, partyId: string, currency: string): Promise<number | undefined> {
    const row = await trx
      .selectFrom('ledger_accounts')
      .select('balance')
      .where('party_id', '=', partyId)
      .where('currency', '=', currency)
      .forUpdate()
      .executeTakeFirst();
    return row ? Number(row.balance) : undefined;
  }

  async insertReceipt(
    trx: Executor,
    table: ReceiptTable,
    row: {
      id: string;
      partyId: string;
      amount: number;
      currency: string;
      reference: string;
      recordedBy: string;
      transactionId: string;
      now: Date;
    },
  ): Promise<void> {
    const common = {
      id: row.id,
      amount: row.amount,
      currency: row.currency,
      reference: row.reference,
      recorded_by: row.recordedBy,
      transaction_id: row.transactionId,
      created_at: row.now,
    };
    if (table === 'settlements')
      await trx
        .insertInto('settlements')
        .values({ ...common, driver_id: row.partyId })
        .execute();
    else
      await trx
        .insertInto('business_payments')
        .values({ ...common, business_id: row.partyId })
        .execute();
  }

  /**
   * Settlements or business payments, newest first, with the party's name (a business's trading
   * name, else the person's) and the recording admin's, as they are now.
   */
  async receipts(
    trx: Executor,
    table: ReceiptTable,
    filter: { partyId?: string; currency?: string; before?: Cursor; limit: number },
  ): Promise<ReceiptRow[]> {
    // The two tables have the same columns but the party's; typed as settlements for Kysely.
    const party = (table === 'settlements' ? 'r.driver_id' : 'r.business_id') as 'r.driver_id';
    let query = trx
      .selectFrom(`${table} as r` as 'settlements as r')
      .innerJoin('users as p', 'p.id', party)
      .leftJoin('business_profiles as bp', 'bp.user_id', party)
      .innerJoin('users as a', 'a.id', 'r.recorded_by')
      .select([
        'r.id',
        sql.ref<string>(party).as('party_id'),
        sql<string>`coalesce(bp.business_name, p.first_name || ' ' || p.last_name)`.as('party_name'),
        'r.amount',
        'r.currency',
        'r.reference',
        'r.recorded_by',
        sql<string>`a.first_name || ' ' || a.last_name`.as('recorded_by_name'),
        'r.transaction_id',
        'r.created_at',
      ]);
    if (filter.partyId) query = query.where(party, '=', filter.partyId);
    if (filter.currency) query = query.where('r.currency', '=', filter.currency);
    if (filter.before) query = query.where(beforeCursor(filter.before, 'r.created_at', 'r.id'));
    const rows = await query.orderBy('r.created_at', 'desc').orderBy('r.id', 'desc').limit(filter.limit).execute();
    return rows.map((r) => ({ ...r, amount: Number(r.amount), currency: r.currency.trim() }));
  }
}
