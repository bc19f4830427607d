// Two admins creating payout batches at the same moment, while jobs keep posting to the same
// accounts, on the PostgreSQL server (PGlite has one connection: nothing runs at once there).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { serverDatabaseUrl } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { assertBooks, balanceOf, caller, cashOnDelivery, collectCash, earn, type Call } from './payouts-helpers.js';

describe('payout batches under concurrency', { skip: serverDatabaseUrl ? false : 'needs the PostgreSQL server: set TEST_DATABASE_URL' }, () => {
  let t: TestApp;
  let admins: TestUser[];
  let calls: Call[];

  before(async () => {
    t = await buildTestApp();
    admins = [await createUser(t, { role: 'ADMIN' }), await createUser(t, { role: 'ADMIN' })];
    calls = admins.map((a) => caller(t, a));
  });
  after(async () => t.close());

  test('two batches at once with postings in flight: every balance is paid at most once and the lines equal what left the balances', async () => {
    const business = await createUser(t, { role: 'BUSINESS' });
    // A shop whose cash on delivery the drivers collect: the operator owes it, and pays it out.
    const shop = await createUser(t, { role: 'BUSINESS', session: false });
    let shopPosted = 0;
    const drivers: TestUser[] = [];
    for (let i = 0; i < 40; i++) drivers.push(await createUser(t, { role: 'DRIVER', session: false }));
    // Half start with money owed to them; the other half start at nothing.
    const posted = new Map<string, number>(drivers.map((d) => [d.id, 0]));
    for (const d of drivers.slice(0, 20)) {
      await earn(t, d.id, business.id, 10_000);
      posted.set(d.id, 10_000);
    }

    for (let round = 0; round < 3; round++) {
      const postings = drivers.flatMap((d, i) => {
        const plan: Promise<void>[] = [];
        if ((i + round) % 2 === 0) {
          plan.push(earn(t, d.id, business.id, 1000 + i).then(() => void posted.set(d.id, posted.get(d.id)! + 1000 + i)));
        } else {
          // 20 % of a 5,000 cash fare: the driver owes 1,000 more.
          plan.push(collectCash(t, d.id, 5000).then(() => void posted.set(d.id, posted.get(d.id)! - 1000)));
        }
        // The driver now holds the shop's cash: the driver owes it, the operator owes the shop.
        if (i % 4 === round) {
          plan.push(cashOnDelivery(t, d.id, shop.id, 700 + i).then(() => {
            shopPosted += 700 + i;
            posted.set(d.id, posted.get(d.id)! - (700 + i));
          }));
        }
        return plan;
      });
      // Roll-ups fold the shop's deltas into its row while the batches read it.
      postings.push(t.services.ledger.rollUp().then(() => undefined), t.services.ledger.rollUp().then(() => undefined));
      const batches = calls.map((call, i) => call('POST', '/admin/payouts', { currency: 'KES' }, { ...admins[i]!.headers, 'idempotency-key': `r${round}-${i}` }));
      const [results] = await Promise.all([Promise.all(batches), Promise.all(postings)]);
      for (const r of results) assert.ok(r.statusCode === 201 || r.json().code === 'PAYOUT_NOTHING_TO_PAY', r.body);
      assert.ok(results.some((r) => r.statusCode === 201), 'at least one batch was created');

      const open = await sql<{ account_id: string; n: number }>`select account_id, count(*)::int as n from payout_lines where status = 'OPEN' group by account_id having count(*) > 1`.execute(t.db);
      assert.deepEqual(open.rows, [], 'no account is in two open batches');
      for (const r of results.filter((x) => x.statusCode === 201)) {
        const sum = await sql<{ total: string; n: number }>`select coalesce(sum(amount), 0)::bigint as total, count(*)::int as n from payout_lines where batch_id = ${r.json().id}`.execute(t.db);
        assert.equal(Number(sum.rows[0]!.total), r.json().total, 'the batch total is the sum of its lines');
        assert.equal(sum.rows[0]!.n, r.json().lineCount);
      }
      // Each driver's balance is what was posted less what the lines took: nothing paid twice, nothing lost.
      const lines = await sql<{ party_id: string; total: string }>`
        select party_id, sum(amount)::bigint as total from payout_lines where status <> 'FAILED' group by party_id`.execute(t.db);
      const paidOut = new Map(lines.rows.map((r) => [r.party_id, Number(r.total)]));
      for (const d of drivers) assert.equal(await balanceOf(t, 'DRIVER', d.id), posted.get(d.id)! - (paidOut.get(d.id) ?? 0), `driver ${d.id}`);
      assert.equal(await balanceOf(t, 'BUSINESS', shop.id), shopPosted - (paidOut.get(shop.id) ?? 0), 'the shop');
      await assertBooks(t);

      // The batches are paid, so the next round may pay the same accounts again.
      for (const r of results.filter((x) => x.statusCode === 201)) assert.equal((await calls[0]!('POST', `/admin/payouts/${r.json().id}/paid`)).statusCode, 200);
    }
    await assertBooks(t);
    const shopLines = await sql<{ n: number }>`select count(*)::int as n from payout_lines where party_id = ${shop.id}`.execute(t.db);
    assert.ok(shopLines.rows[0]!.n > 0, 'the shop was paid out');
  });

  /** Resolves once a backend of this database runs a statement containing `text` and waits for a lock. */
  async function waiting(text: string): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const row = (await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and position(${text} in query) > 0`.execute(t.db)).rows[0]!;
      if (row.n > 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no statement containing ${text} waited for a lock`);
  }

  /** Another transaction holding an account's row locked until `release()` (which resolves once it has ended). */
  async function holdRow(accountId: string): Promise<{ release: () => Promise<void> }> {
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const done = t.db.transaction().execute(async (trx) => {
      await sql`select id from ledger_accounts where id = ${accountId} for update`.execute(trx);
      locked();
      await new Promise<void>((r) => (release = r));
    });
    await Promise.race([isLocked, done]);
    return { release: () => (release(), done) };
  }

  // A business's balance is its row plus deltas that a roll-up folds in (deleting them). A batch
  // that read both while a roll-up committed under it would pay the folded deltas twice.
  for (const first of ['batch', 'roll-up'] as const) {
    test(`a business paid out while a roll-up folds its deltas (${first} first): the line is its balance, counted once`, async () => {
      const shop = await createUser(t, { role: 'BUSINESS', session: false });
      const driver = await createUser(t, { role: 'DRIVER', session: false });
      await cashOnDelivery(t, driver.id, shop.id, 10_000);
      await t.services.ledger.rollUp();
      await cashOnDelivery(t, driver.id, shop.id, 2_500);
      const account = (await sql<{ id: string }>`select id from ledger_accounts where party_id = ${shop.id}`.execute(t.db)).rows[0]!.id;
      const pending = await sql<{ balance: string; deltas: string }>`
        select balance::bigint, (select coalesce(sum(amount), 0) from ledger_balance_deltas where account_id = ${account})::bigint as deltas
        from ledger_accounts where id = ${account}`.execute(t.db);
      assert.deepEqual([Number(pending.rows[0]!.balance), Number(pending.rows[0]!.deltas)], [10_000, 2_500], 'part in the row, part pending');

      // Another transaction holds the shop's row; the batch and the roll-up queue behind it in order.
      const row = await holdRow(account);
      const createBatch = () => calls[0]!('POST', '/admin/payouts', { currency: 'KES' }, { ...admins[0]!.headers, 'idempotency-key': `interleave-${first}` });
      const batchWaits = () => waiting(`kind = 'BUSINESS'`);
      const rollUpWaits = () => waiting('delete from ledger_balance_deltas');
      let batch: ReturnType<typeof createBatch> | undefined;
      let rollUp: Promise<number> | undefined;
      try {
        if (first === 'batch') {
          batch = createBatch();
          await batchWaits();
          rollUp = t.services.ledger.rollUp();
          await rollUpWaits();
        } else {
          rollUp = t.services.ledger.rollUp();
          await rollUpWaits();
          batch = createBatch();
          await batchWaits();
        }
      } finally {
        await row.release();
      }
      const [res] = await Promise.all([batch, rollUp]);
      assert.equal(res.statusCode, 201, res.body);
      const line = await sql<{ amount: string }>`select amount from payout_lines where batch_id = ${res.json().id} and party_id = ${shop.id}`.execute(t.db);
      assert.deepEqual(line.rows.map((r) => Number(r.amount)), [12_500], 'one line, for the whole balance');
      assert.equal(await balanceOf(t, 'BUSINESS', shop.id), 0);
      await assertBooks(t);
      assert.equal((await calls[0]!('POST', `/admin/payouts/${res.json().id}/paid`)).statusCode, 200);
    });
  }
});
