// The ledger on a real database (contract section 21): random sequences of section 21's flows
// through LedgerService keep the books balanced, replays book nothing, and bad input is a 4xx.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import Fastify from 'fastify';
import { sql } from 'kysely';
import type { Role } from '../src/db/schema.js';
import { registerErrorHandling } from '../src/http/errors.js';
import { LedgerRepository } from '../src/modules/ledger/ledger.repository.js';
import { LedgerService } from '../src/modules/ledger/ledger.service.js';
import {
  businessPaymentEntries,
  cancellationFeeEntries,
  cashOnDeliveryEntries,
  jobCompletedEntries,
  payoutLineEntries,
  payoutLineFailedEntries,
  payoutLinePaidEntries,
  settlementEntries,
  sourceKeys,
  tipEntries,
  type EntryInput,
  type PartyRef,
  type TransactionInput,
} from '../src/modules/ledger/postings.js';
import { ManualClock } from '../src/shared/clock.js';
import { AppError } from '../src/shared/errors.js';
import { createTestDatabase, serverDatabaseUrl, type TestDatabase } from './helpers/database.js';

const rejects = (promise: Promise<unknown>, statusCode: number, code: string) =>
  assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.statusCode, statusCode);
    assert.equal(err.code, code);
    return true;
  });

describe('ledger', () => {
  let t: TestDatabase;
  let ledger: LedgerService;
  let phone = 0;

  async function user(role: Role): Promise<string> {
    const id = randomUUID();
    phone += 1;
    await t.db
      .insertInto('users')
      .values({
        id,
        email: `${id}@example.com`,
        phone: `+2547${String(phone).padStart(8, '0')}`,
        password_hash: 'x',
        first_name: 'L',
        last_name: role,
        role,
        status: 'ACTIVE',
        status_reason: null,
        country_id: null,
      })
      .execute();
    return id;
  }

  /** The books' invariants, straight from the tables. */
  async function assertBooksBalance() {
    const unbalanced = await sql<{ n: number }>`
      select count(*)::int as n from (select e.transaction_id from ledger_entries e group by e.transaction_id having sum(e.amount) <> 0 or count(*) < 2) x`.execute(
      t.db,
    );
    assert.equal(unbalanced.rows[0]!.n, 0, 'every transaction sums to zero with two entries or more');
    const mixed = await sql<{ n: number }>`
      select count(*)::int as n from ledger_entries e join ledger_transactions x on x.id = e.transaction_id join ledger_accounts a on a.id = e.account_id
      where a.currency <> x.currency`.execute(t.db);
    assert.equal(mixed.rows[0]!.n, 0, "an entry is always in its account's currency");
    for (const row of await ledger.trialBalance()) assert.equal(row.total, 0, `${row.currency} sums to zero`);
    // The kept balance (stored part + pending deltas) is the sum of the account's entries.
    const drift = await sql<{ n: number }>`
      select count(*)::int as n from ledger_accounts a
      where a.balance + coalesce((select sum(d.amount) from ledger_balance_deltas d where d.account_id = a.id), 0)
         <> coalesce((select sum(e.amount) from ledger_entries e where e.account_id = a.id), 0)`.execute(t.db);
    assert.equal(drift.rows[0]!.n, 0, 'every balance is the sum of its entries');
    const orphans = await sql<{ n: number }>`
      select count(*)::int as n from ledger_entries e
      where not exists (select 1 from ledger_transactions x where x.id = e.transaction_id) or not exists (select 1 from ledger_accounts a where a.id = e.account_id)`.execute(
      t.db,
    );
    assert.equal(
      orphans.rows[0]!.n,
      0,
      'every entry has its transaction and account (no foreign keys: see the migration)',
    );
  }

  const counts = async () => {
    const r = await sql<{
      tx: number;
      entries: number;
    }>`select (select count(*) from ledger_transactions)::int as tx, (select count(*) from ledger_entries)::int as entries`.execute(
      t.db,
    );
    return r.rows[0]!;
  };

  before(async () => {
    t = await createTestDatabase();
    ledger = new LedgerService({
      db: t.db,
      clock: new ManualClock(new Date('2026-01-05T10:00:00Z')),
      repo: new LedgerRepository(),
    });
  });
  after(async () => t.close());

  test('a cash ride, a cash-on-delivery package, a settlement: the worked example of docs/money.md', async () => {
    const driver = await user('DRIVER');
    const business = await user('BUSINESS');
    const customer = await user('CUSTOMER');
    const ride = randomUUID();
    const pkg = randomUUID();
    await ledger.post(t.db, {
      sourceKey: sourceKeys.jobCompleted('RIDE', ride),
      currency: 'KES',
      entries: jobCompletedEntries({
        driverId: driver,
        payer: { kind: 'CUSTOMER', partyId: customer },
        paymentMethod: 'CASH',
        amount: 27_000,
        bookingFee: 2_000,
        commissionRate: 2000,
      }),
    });
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), -7_000);
    await ledger.postMany(t.db, [
      {
        sourceKey: sourceKeys.jobCompleted('PACKAGE', pkg),
        currency: 'KES',
        entries: jobCompletedEntries({
          driverId: driver,
          payer: { kind: 'BUSINESS', partyId: business },
          paymentMethod: 'ACCOUNT',
          amount: 10_000,
          bookingFee: 0,
          commissionRate: 2000,
        }),
      },
      {
        sourceKey: sourceKeys.cashOnDelivery(pkg),
        currency: 'KES',
        entries: cashOnDeliveryEntries({ driverId: driver, businessId: business, amount: 50_000 }),
      },
    ]);
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), -7_000 + 8_000 - 50_000);
    assert.equal(await ledger.balance('KES', { kind: 'BUSINESS', partyId: business }), -10_000 + 50_000);
    await ledger.post(t.db, {
      sourceKey: sourceKeys.settlement(randomUUID()),
      currency: 'KES',
      entries: settlementEntries({ driverId: driver, amount: 49_000 }),
    });
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), 0);
    assert.equal(await ledger.balance('KES', { kind: 'OPERATOR_CASH' }), -49_000);
    assert.equal(await ledger.balance('KES', { kind: 'OPERATOR_COMMISSION' }), 5_000 + 2_000);
    assert.equal(await ledger.balance('KES', { kind: 'OPERATOR_BOOKING_FEES' }), 2_000);
    assert.equal(
      await ledger.balance('UGX', { kind: 'DRIVER', partyId: driver }),
      0,
      'no account in that currency yet',
    );
    await assertBooksBalance();
  });

  test('random sequences of jobs, fees, tips, cash, settlements and payouts keep the books balanced, and replaying them books nothing', async () => {
    const amount = fc.integer({ min: 1, max: 5_000_000 });
    const event = fc.oneof(
      fc.record({
        type: fc.constant('job' as const),
        amount,
        feePercent: fc.integer({ min: 0, max: 30 }),
        rate: fc.integer({ min: 0, max: 10_000 }),
        cash: fc.boolean(),
        d: fc.nat(2),
        b: fc.nat(1),
      }),
      fc.record({
        type: fc.constant('fee' as const),
        amount,
        rate: fc.integer({ min: 0, max: 10_000 }),
        d: fc.nat(2),
        b: fc.nat(1),
        customer: fc.boolean(),
      }),
      fc.record({ type: fc.constant('tip' as const), amount, cash: fc.boolean(), d: fc.nat(2), b: fc.nat(1) }),
      fc.record({ type: fc.constant('cod' as const), amount, d: fc.nat(2), b: fc.nat(1) }),
      fc.record({ type: fc.constant('settlement' as const), amount, d: fc.nat(2) }),
      fc.record({ type: fc.constant('payment' as const), amount, b: fc.nat(1) }),
      fc.record({ type: fc.constant('payout' as const), amount, d: fc.nat(2), paid: fc.boolean() }),
      fc.record({ type: fc.constant('rollUp' as const) }),
    );
    const run = fc.record({
      currency: fc.constantFrom('KES', 'UGX'),
      events: fc.array(event, { minLength: 1, maxLength: 25 }),
    });

    await fc.assert(
      fc.asyncProperty(run, async ({ currency, events }) => {
        const drivers = [await user('DRIVER'), await user('DRIVER'), await user('DRIVER')];
        const businesses = [await user('BUSINESS'), await user('BUSINESS')];
        const customer: PartyRef = { kind: 'CUSTOMER', partyId: await user('CUSTOMER') };
        const business = (i: number): PartyRef => ({ kind: 'BUSINESS', partyId: businesses[i]! });
        const posted: TransactionInput[] = [];
        const expected = new Map<string, number>();
        const book = async (sourceKey: string, entries: EntryInput[]) => {
          const input = { sourceKey, currency, entries };
          const result = await ledger.post(t.db, input);
          assert.equal(result.replayed, false);
          posted.push(input);
          for (const e of entries)
            if ('partyId' in e.account)
              expected.set(e.account.partyId, (expected.get(e.account.partyId) ?? 0) + e.amount);
        };
        for (const e of events) {
          const id = randomUUID();
          if (e.type === 'rollUp') await ledger.rollUp();
          else if (e.type === 'job') {
            const bookingFee = Math.floor((e.amount * e.feePercent) / 100);
            await book(
              sourceKeys.jobCompleted('PACKAGE', id),
              jobCompletedEntries({
                driverId: drivers[e.d]!,
                payer: business(e.b),
                paymentMethod: e.cash ? 'CASH' : 'ACCOUNT',
                amount: e.amount,
                bookingFee,
                commissionRate: e.rate,
              }),
            );
          } else if (e.type === 'fee') {
            await book(
              sourceKeys.cancellationFee('RIDE', id),
              cancellationFeeEntries({
                driverId: drivers[e.d]!,
                payer: e.customer ? customer : business(e.b),
                fee: e.amount,
                commissionRate: e.rate,
              }),
            );
          } else if (e.type === 'tip') {
            await book(
              sourceKeys.tip('PACKAGE', id),
              tipEntries({
                driverId: drivers[e.d]!,
                payer: business(e.b),
                paymentMethod: e.cash ? 'CASH' : 'ACCOUNT',
                amount: e.amount,
              }),
            );
          } else if (e.type === 'cod') {
            await book(
              sourceKeys.cashOnDelivery(id),
              cashOnDeliveryEntries({ driverId: drivers[e.d]!, businessId: businesses[e.b]!, amount: e.amount }),
            );
          } else if (e.type === 'settlement') {
            await book(sourceKeys.settlement(id), settlementEntries({ driverId: drivers[e.d]!, amount: e.amount }));
          } else if (e.type === 'payment') {
            await book(
              sourceKeys.businessPayment(id),
              businessPaymentEntries({ businessId: businesses[e.b]!, amount: e.amount }),
            );
          } else {
            const party: PartyRef = { kind: 'DRIVER', partyId: drivers[e.d]! };
            await book(sourceKeys.payoutLine(id), payoutLineEntries({ party, amount: e.amount }));
            if (e.paid) await book(sourceKeys.payoutLinePaid(id), payoutLinePaidEntries({ amount: e.amount }));
            else await book(sourceKeys.payoutLineFailed(id), payoutLineFailedEntries({ party, amount: e.amount }));
          }
        }
        for (const [partyId, balance] of expected) {
          const got = await ledger.balance(currency, {
            accountId: (await ledger.account(t.db, currency, { kind: await kindOf(partyId), partyId })).id,
          });
          assert.equal(got, balance);
          assert.ok(Number.isSafeInteger(got));
        }
        await assertBooksBalance();

        // Replayed one by one and all at once: each returns the first booking and books nothing.
        const before = await counts();
        const balancesBefore = await ledger.balances({ currency });
        for (const input of posted) assert.equal((await ledger.post(t.db, input)).replayed, true);
        if (posted.length) assert.ok((await ledger.postMany(t.db, [...posted].reverse())).every((r) => r.replayed));
        assert.deepEqual(await counts(), before);
        assert.deepEqual(await ledger.balances({ currency }), balancesBefore);
      }),
      { numRuns: 12 },
    );
    await assertBooksBalance();
  });

  async function kindOf(partyId: string): Promise<'DRIVER' | 'BUSINESS' | 'CUSTOMER'> {
    const row = await t.db.selectFrom('users').select('role').where('id', '=', partyId).executeTakeFirstOrThrow();
    return row.role as 'DRIVER' | 'BUSINESS' | 'CUSTOMER';
  }

  test('the same source key with other entries is 409 LEDGER_SOURCE_KEY_CONFLICT and books nothing', async () => {
    const driver = await user('DRIVER');
    const key = sourceKeys.settlement(randomUUID());
    const first = await ledger.post(t.db, {
      sourceKey: key,
      currency: 'KES',
      entries: settlementEntries({ driverId: driver, amount: 100 }),
    });
    const before = await counts();
    await rejects(
      ledger.post(t.db, {
        sourceKey: key,
        currency: 'KES',
        entries: settlementEntries({ driverId: driver, amount: 101 }),
      }),
      409,
      'LEDGER_SOURCE_KEY_CONFLICT',
    );
    await rejects(
      ledger.post(t.db, {
        sourceKey: key,
        currency: 'UGX',
        entries: settlementEntries({ driverId: driver, amount: 100 }),
      }),
      409,
      'LEDGER_SOURCE_KEY_CONFLICT',
    );
    assert.deepEqual(await counts(), before);
    const again = await ledger.post(t.db, {
      sourceKey: key,
      currency: 'KES',
      entries: settlementEntries({ driverId: driver, amount: 100 }),
    });
    assert.deepEqual({ ...again, replayed: false }, first);
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), 100);
  });

  test("a posting is part of the caller's transaction: rolled back with it, committed with it", async () => {
    const driver = await user('DRIVER');
    const key = sourceKeys.settlement(randomUUID());
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await ledger.post(trx, {
          sourceKey: key,
          currency: 'KES',
          entries: settlementEntries({ driverId: driver, amount: 700 }),
        });
        // A second posting in the same transaction finds the account it has just opened: the
        // instance must not remember that account (LedgerService.known), which the rollback removes.
        await ledger.post(trx, {
          sourceKey: `${key}:again`,
          currency: 'KES',
          entries: settlementEntries({ driverId: driver, amount: 1 }),
        });
        assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }, trx), 701);
        throw new Error('the event failed');
      }),
      /the event failed/,
    );
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), 0);
    assert.equal(
      (
        await ledger.post(t.db, {
          sourceKey: key,
          currency: 'KES',
          entries: settlementEntries({ driverId: driver, amount: 700 }),
        })
      ).replayed,
      false,
    );
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), 700);
    // Committed now: remembered, and the next posting (no look-up) books to the same account.
    await ledger.post(t.db, {
      sourceKey: `${key}:later`,
      currency: 'KES',
      entries: settlementEntries({ driverId: driver, amount: 5 }),
    });
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), 705);
    await assertBooksBalance();
  });

  test('a remembered account that no longer exists (a database restored to an earlier point) fails the posting, books nothing, and is forgotten', async () => {
    const driver = await user('DRIVER');
    // The first posting opens the account (not remembered: its own transaction wrote it); the second
    // finds it committed and remembers it.
    for (const amount of [300, 200]) {
      await ledger.post(t.db, {
        sourceKey: sourceKeys.settlement(randomUUID()),
        currency: 'KES',
        entries: settlementEntries({ driverId: driver, amount }),
      });
    }
    // What a restore to an earlier point would do: the account and its transactions gone (the
    // operator's side of them taken back), while this instance still remembers the account's id.
    const account = (await sql<{ id: string }>`select id from ledger_accounts where party_id = ${driver}`.execute(t.db))
      .rows[0]!.id;
    const ids = (
      await sql<{
        id: string;
      }>`select distinct transaction_id as id from ledger_entries where account_id = ${account}`.execute(t.db)
    ).rows.map((r) => r.id);
    await sql`
      insert into ledger_balance_deltas (account_id, amount)
      select account_id, -sum(amount) from ledger_entries where transaction_id = any(${ids}::uuid[]) and account_id <> ${account} group by account_id`.execute(
      t.db,
    );
    await sql`delete from ledger_entries where transaction_id = any(${ids}::uuid[])`.execute(t.db);
    await sql`delete from ledger_transactions where id = any(${ids}::uuid[])`.execute(t.db);
    await sql`delete from ledger_accounts where id = ${account}`.execute(t.db);
    const before = await counts();
    const key = sourceKeys.settlement(randomUUID());
    await assert.rejects(
      ledger.post(t.db, {
        sourceKey: key,
        currency: 'KES',
        entries: settlementEntries({ driverId: driver, amount: 400 }),
      }),
      /does not exist/,
    );
    assert.deepEqual(await counts(), before, 'nothing booked');
    // Forgotten: the retry opens the account again and books.
    await ledger.post(t.db, {
      sourceKey: key,
      currency: 'KES',
      entries: settlementEntries({ driverId: driver, amount: 400 }),
    });
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), 400);
    await assertBooksBalance();
  });

  test('bad input: unknown account or party, wrong kind, mixed currencies, unbalanced or fractional entries', async () => {
    const driver = await user('DRIVER');
    const business = await user('BUSINESS');
    const kes = await ledger.account(t.db, 'KES', { kind: 'DRIVER', partyId: driver });
    const key = () => `test:${randomUUID()}`;
    const before = await counts();
    const cash = { kind: 'OPERATOR_CASH' } as const;
    await rejects(
      ledger.post(t.db, {
        sourceKey: key(),
        currency: 'KES',
        entries: [
          { account: { accountId: randomUUID() }, amount: 5, code: 'SETTLEMENT' },
          { account: cash, amount: -5, code: 'SETTLEMENT' },
        ],
      }),
      404,
      'LEDGER_ACCOUNT_NOT_FOUND',
    );
    await rejects(
      ledger.post(t.db, {
        sourceKey: key(),
        currency: 'KES',
        entries: settlementEntries({ driverId: randomUUID(), amount: 5 }),
      }),
      404,
      'LEDGER_PARTY_NOT_FOUND',
    );
    await rejects(
      ledger.post(t.db, {
        sourceKey: key(),
        currency: 'KES',
        entries: settlementEntries({ driverId: business, amount: 5 }),
      }),
      400,
      'LEDGER_PARTY_KIND_MISMATCH',
    );
    await rejects(
      ledger.post(t.db, {
        sourceKey: key(),
        currency: 'UGX',
        entries: [
          { account: { accountId: kes.id }, amount: 5, code: 'SETTLEMENT' },
          { account: cash, amount: -5, code: 'SETTLEMENT' },
        ],
      }),
      400,
      'LEDGER_CURRENCY_MISMATCH',
    );
    await rejects(
      ledger.post(t.db, {
        sourceKey: key(),
        currency: 'KES',
        entries: [
          { account: { accountId: kes.id }, amount: 5, code: 'SETTLEMENT' },
          { account: cash, amount: -4, code: 'SETTLEMENT' },
        ],
      }),
      400,
      'LEDGER_UNBALANCED',
    );
    await rejects(
      ledger.post(t.db, {
        sourceKey: key(),
        currency: 'KES',
        entries: [
          { account: { accountId: kes.id }, amount: 4.5, code: 'SETTLEMENT' },
          { account: cash, amount: -4.5, code: 'SETTLEMENT' },
        ],
      }),
      400,
      'LEDGER_INVALID_AMOUNT',
    );
    await rejects(
      ledger.post(t.db, {
        sourceKey: key(),
        currency: 'KES',
        entries: [
          { account: { accountId: 'not-a-uuid' }, amount: 5, code: 'SETTLEMENT' },
          { account: cash, amount: -5, code: 'SETTLEMENT' },
        ],
      }),
      400,
      'LEDGER_INVALID_ENTRY',
    );
    const k = key();
    await rejects(
      ledger.postMany(t.db, [
        { sourceKey: k, currency: 'KES', entries: settlementEntries({ driverId: driver, amount: 5 }) },
        { sourceKey: k, currency: 'KES', entries: settlementEntries({ driverId: driver, amount: 5 }) },
      ]),
      400,
      'LEDGER_DUPLICATE_SOURCE_KEY',
    );
    // One bad transaction in a batch books none of it.
    await rejects(
      ledger.postMany(t.db, [
        { sourceKey: key(), currency: 'KES', entries: settlementEntries({ driverId: driver, amount: 5 }) },
        { sourceKey: key(), currency: 'KES', entries: settlementEntries({ driverId: randomUUID(), amount: 5 }) },
      ]),
      404,
      'LEDGER_PARTY_NOT_FOUND',
    );
    assert.deepEqual(await counts(), before);
    assert.equal(await ledger.balance('KES', { kind: 'DRIVER', partyId: driver }), 0);
    await rejects(ledger.balance('KES', { accountId: randomUUID() }), 404, 'LEDGER_ACCOUNT_NOT_FOUND');
  });

  test("a ledger error leaves in the contract's error shape", async () => {
    const app = Fastify();
    registerErrorHandling(app);
    app.post('/post', async () =>
      ledger.post(t.db, {
        sourceKey: 'k',
        currency: 'KES',
        entries: settlementEntries({ driverId: randomUUID(), amount: 5 }),
      }),
    );
    const res = await app.inject({ method: 'POST', url: '/post' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), {
      statusCode: 404,
      error: 'Not Found',
      code: 'LEDGER_PARTY_NOT_FOUND',
      message: res.json().message,
    });
    assert.match(res.json().message, /No user .* to open a DRIVER account for/);
    await app.close();
  });

  test("balances: non-zero ones per currency, the operator's included, unchanged by a roll-up", async () => {
    const driver = await user('DRIVER');
    await ledger.account(t.db, 'XOF', { kind: 'DRIVER', partyId: driver });
    await ledger.post(t.db, {
      sourceKey: `test:${randomUUID()}`,
      currency: 'RWF',
      entries: settlementEntries({ driverId: driver, amount: 300 }),
    });
    const nonZero = await ledger.balances({ currency: 'RWF', nonZero: true });
    assert.deepEqual(
      nonZero.map((a) => [a.kind, a.partyId, a.balance]),
      [
        ['DRIVER', driver, 300],
        ['OPERATOR_CASH', null, -300],
      ],
    );
    assert.deepEqual(
      (await ledger.balances({ currency: 'XOF' })).map((a) => a.balance),
      [0],
    );
    assert.deepEqual(await ledger.balances({ currency: 'XOF', nonZero: true }), []);
    const all = await ledger.balances({ nonZero: true });
    assert.ok((await ledger.rollUp()) >= 1);
    assert.equal(await ledger.rollUp(), 0);
    assert.deepEqual(await ledger.balances({ nonZero: true }), all);
    const pending = await sql<{ n: number }>`select count(*)::int as n from ledger_balance_deltas`.execute(t.db);
    assert.equal(pending.rows[0]!.n, 0);
  });

  test(
    'concurrent postings to the same accounts, with replays of the same keys: each booked once, no deadlock',
    { skip: serverDatabaseUrl ? false : 'needs the PostgreSQL server (TEST_DATABASE_URL)' },
    async () => {
      const drivers = [await user('DRIVER'), await user('DRIVER')];
      const business = await user('BUSINESS');
      const jobs = Array.from({ length: 20 }, (_, i) => ({
        id: randomUUID(),
        driver: drivers[i % 2]!,
        amount: 1_000 + i,
      }));
      // Each job's completion and its cash on delivery, each posted twice at once, the two drivers'
      // entries listed in opposite orders: 80 postings, 40 of them replays, in flight together.
      const inputs = jobs.flatMap((j, i) => {
        const completion: TransactionInput = {
          sourceKey: sourceKeys.jobCompleted('PACKAGE', j.id),
          currency: 'GHS',
          entries: jobCompletedEntries({
            driverId: j.driver,
            payer: { kind: 'BUSINESS', partyId: business },
            paymentMethod: i % 3 ? 'ACCOUNT' : 'CASH',
            amount: j.amount,
            bookingFee: 100,
            commissionRate: 2000,
          }),
        };
        const cod: TransactionInput = {
          sourceKey: sourceKeys.cashOnDelivery(j.id),
          currency: 'GHS',
          entries: cashOnDeliveryEntries({ driverId: j.driver, businessId: business, amount: 500 }),
        };
        const reversed = (x: TransactionInput) => ({ ...x, entries: [...x.entries].reverse() });
        return [completion, reversed(completion), cod, reversed(cod)];
      });
      const results = await Promise.all(inputs.map((input) => ledger.post(t.db, input)));
      assert.equal(results.filter((r) => !r.replayed).length, 40);
      assert.equal(new Set(results.map((r) => r.id)).size, 40);
      const rows = await sql<{
        n: number;
      }>`select count(*)::int as n from ledger_transactions where currency = 'GHS'`.execute(t.db);
      assert.equal(rows.rows[0]!.n, 40);
      const expected = new Map<string, number>();
      for (const input of inputs.filter((_, i) => i % 2 === 0)) {
        for (const e of input.entries)
          if ('partyId' in e.account)
            expected.set(e.account.partyId, (expected.get(e.account.partyId) ?? 0) + e.amount);
      }
      for (const [partyId, balance] of expected)
        assert.equal(
          await ledger.balance('GHS', { kind: partyId === business ? 'BUSINESS' : 'DRIVER', partyId }),
          balance,
        );
      await assertBooksBalance();
    },
  );
});
