// Shared by the payout and settlement tests: money put on accounts through the ledger, the admin
// calls, and the books' invariants read straight from the tables.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Response } from 'light-my-request';
import { cashOnDeliveryEntries, jobCompletedEntries } from '../src/modules/ledger/postings.js';
import type { TestApp } from './helpers/app.js';
import type { TestUser } from './helpers/factories.js';

export type Call = (
  method: 'GET' | 'POST',
  url: string,
  payload?: object,
  headers?: Record<string, string>,
) => Promise<Response>;

export const caller =
  (t: TestApp, admin: TestUser): Call =>
  (method, url, payload, headers = admin.headers) =>
    t.app.inject({ method, url: `/api${url}`, headers, ...(payload ? { payload } : {}) });

/** A driver earns `earnings` on an ACCOUNT job of `business` (commission 0, so the business is charged the same). */
export async function earn(
  t: TestApp,
  driverId: string,
  businessId: string,
  earnings: number,
  currency = 'KES',
): Promise<void> {
  await t.services.ledger.post(t.db, {
    sourceKey: `job:PACKAGE:${randomUUID()}:completed`,
    currency,
    entries: jobCompletedEntries({
      driverId,
      payer: { kind: 'BUSINESS', partyId: businessId },
      paymentMethod: 'ACCOUNT',
      amount: earnings,
      bookingFee: 0,
      commissionRate: 0,
    }),
  });
}

/** A driver collects `amount` in cash on a CASH job with 20 % commission: the driver owes the commission. */
export async function collectCash(t: TestApp, driverId: string, amount: number, currency = 'KES'): Promise<void> {
  await t.services.ledger.post(t.db, {
    sourceKey: `job:RIDE:${randomUUID()}:completed`,
    currency,
    entries: jobCompletedEntries({
      driverId,
      payer: { kind: 'DRIVER', partyId: driverId },
      paymentMethod: 'CASH',
      amount,
      bookingFee: 0,
      commissionRate: 2000,
    }),
  });
}

/** Cash on delivery: the driver holds `amount` of the business's money. */
export async function cashOnDelivery(
  t: TestApp,
  driverId: string,
  businessId: string,
  amount: number,
  currency = 'KES',
): Promise<void> {
  await t.services.ledger.post(t.db, {
    sourceKey: `cod:${randomUUID()}`,
    currency,
    entries: cashOnDeliveryEntries({ driverId, businessId, amount }),
  });
}

export const balanceOf = (t: TestApp, kind: 'DRIVER' | 'BUSINESS', partyId: string, currency = 'KES') =>
  t.services.ledger.balance(currency, { kind, partyId });

/**
 * The books: every transaction sums to zero, every currency sums to zero, every kept balance is the
 * sum of its entries, every payout line's transactions are booked once, and no account has two OPEN
 * lines. Returns the trial balance's accounts for the caller's own checks.
 */
export async function assertBooks(t: TestApp): Promise<void> {
  const one = async (query: ReturnType<typeof sql<{ n: number }>>, message: string) =>
    assert.equal((await query.execute(t.db)).rows[0]!.n, 0, message);
  await one(
    sql`select count(*)::int as n from (select transaction_id from ledger_entries group by transaction_id having sum(amount) <> 0 or count(*) < 2) x`,
    'every transaction sums to zero',
  );
  for (const row of await t.services.ledger.trialBalance()) assert.equal(row.total, 0, `${row.currency} sums to zero`);
  await one(
    sql`select count(*)::int as n from ledger_accounts a
      where a.balance + coalesce((select sum(d.amount) from ledger_balance_deltas d where d.account_id = a.id), 0)
         <> coalesce((select sum(e.amount) from ledger_entries e where e.account_id = a.id), 0)`,
    'every balance is the sum of its entries',
  );
  await one(
    sql`select count(*)::int as n from payout_lines l
      where (select count(*) from ledger_transactions x where x.source_key = 'payout-line:' || l.id and x.id = l.transaction_id) <> 1
         or (l.status = 'OPEN') <> (l.closing_transaction_id is null)
         or (l.status <> 'OPEN' and not exists (select 1 from ledger_transactions x where x.id = l.closing_transaction_id
               and x.source_key = 'payout-line:' || l.id || case l.status when 'PAID' then ':paid' else ':failed' end))`,
    'each line is booked once when created and once when paid or failed',
  );
  await one(sql`select count(*)::int as n from ledger_entries where amount <> trunc(amount)`, 'no fractional amounts');
  // Clearing holds exactly the OPEN lines: what was moved out of balances and not yet paid or returned.
  const clearing = await sql<{ currency: string; open: string; held: string }>`
    select a.currency, coalesce((select sum(l.amount) from payout_lines l join payout_batches b on b.id = l.batch_id where l.status = 'OPEN' and b.currency = a.currency), 0)::bigint as open,
      (a.balance + coalesce((select sum(d.amount) from ledger_balance_deltas d where d.account_id = a.id), 0))::bigint as held
    from ledger_accounts a where a.kind = 'PAYOUTS_CLEARING'`.execute(t.db);
  for (const row of clearing.rows)
    assert.equal(Number(row.held), Number(row.open), `${row.currency}: clearing holds the open lines`);
}
