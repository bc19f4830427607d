// Two admins creating payout batches at the same moment, while jobs keep posting to the same
// accounts, on the PostgreSQL server (PGlite has one connection: nothing runs at once there).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { serverDatabaseUrl } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { LedgerRepository } from '../src/modules/ledger/ledger.repository.js';
import { assertBooks, balanceOf, caller, cashOnDelivery, collectCash, earn, type Call } from './payouts-helpers.js';

describe(
  'payout batches under concurrency',
  { skip: serverDatabaseUrl ? false : 'needs the PostgreSQL server: set TEST_DATABASE_URL' },
  () => {
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
      // Two shops whose cash on delivery the drivers collect: the operator owes them, and pays them out.
      const shops = [
        await createUser(t, { role: 'BUSINESS', session: false }),
        await createUser(t, { role: 'BUSINESS', session: false }),
      ];
      const shopPosted = new Map<string, number>(shops.map((s) => [s.id, 0]));
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
            plan.push(
              earn(t, d.id, business.id, 1000 + i).then(() => void posted.set(d.id, posted.get(d.id)! + 1000 + i)),
            );
          } else {
            // 20 % of a 5,000 cash fare: the driver owes 1,000 more.
            plan.push(collectCash(t, d.id, 5000).then(() => void posted.set(d.id, posted.get(d.id)! - 1000)));
          }
          // The driver now holds the shop's cash: the driver owes it, the operator owes the shop.
          if (i % 4 === round) {
            const shop = shops[i % 2]!;
            plan.push(
              cashOnDelivery(t, d.id, shop.id, 700 + i).then(() => {
                shopPosted.set(shop.id, shopPosted.get(shop.id)! + 700 + i);
                posted.set(d.id, posted.get(d.id)! - (700 + i));
              }),
            );
          }
          return plan;
        });
        // Roll-ups fold the shops' deltas into their rows while the batches read them.
        postings.push(
          t.services.ledger.rollUp().then(() => undefined),
          t.services.ledger.rollUp().then(() => undefined),
        );
        const batches = calls.map((call, i) =>
          call(
            'POST',
            '/admin/payouts',
            { currency: 'KES' },
            { ...admins[i]!.headers, 'idempotency-key': `r${round}-${i}` },
          ),
        );
        const [results] = await Promise.all([Promise.all(batches), Promise.all(postings)]);
        for (const r of results) assert.ok(r.statusCode === 201 || r.json().code === 'PAYOUT_NOTHING_TO_PAY', r.body);
        assert.ok(
          results.some((r) => r.statusCode === 201),
          'at least one batch was created',
        );

        const open = await sql<{
          account_id: string;
          n: number;
        }>`select account_id, count(*)::int as n from payout_lines where status = 'OPEN' group by account_id having count(*) > 1`.execute(
          t.db,
        );
        assert.deepEqual(open.rows, [], 'no account is in two open batches');
        for (const r of results.filter((x) => x.statusCode === 201)) {
          const sum = await sql<{
            total: string;
            n: number;
          }>`select coalesce(sum(amount), 0)::bigint as total, count(*)::int as n from payout_lines where batch_id = ${r.json().id}`.execute(
            t.db,
          );
          assert.equal(Number(sum.rows[0]!.total), r.json().total, 'the batch total is the sum of its lines');
          assert.equal(sum.rows[0]!.n, r.json().lineCount);
        }
        // Each driver's balance is what was posted less what the lines took: nothing paid twice, nothing lost.
        const lines = await sql<{ party_id: string; total: string }>`
        select party_id, sum(amount)::bigint as total from payout_lines where status <> 'FAILED' group by party_id`.execute(
          t.db,
        );
        const paidOut = new Map(lines.rows.map((r) => [r.party_id, Number(r.total)]));
        for (const d of drivers)
          assert.equal(
            await balanceOf(t, 'DRIVER', d.id),
            posted.get(d.id)! - (paidOut.get(d.id) ?? 0),
            `driver ${d.id}`,
          );
        for (const shop of shops) {
          const posted = shopPosted.get(shop.id)!;
          const shopBalance = await balanceOf(t, 'BUSINESS', shop.id);
          assert.equal(shopBalance, posted - (paidOut.get(shop.id) ?? 0), `shop ${shop.id}`);
          // A shop only ever receives: a line that counted a delta twice would leave it owing.
          assert.ok(shopBalance >= 0, `the shop's balance ${shopBalance} is not negative`);
          const shopLines = await sql<{
            amount: string;
          }>`select amount from payout_lines where party_id = ${shop.id}`.execute(t.db);
          for (const line of shopLines.rows)
            assert.ok(Number(line.amount) <= posted, `a line of ${line.amount} is at most the ${posted} posted`);
        }
        await assertBooks(t);

        // The batches are paid, so the next round may pay the same accounts again.
        for (const r of results.filter((x) => x.statusCode === 201))
          assert.equal((await calls[0]!('POST', `/admin/payouts/${r.json().id}/paid`)).statusCode, 200);
      }
      await assertBooks(t);
      const shopLines = await sql<{
        n: number;
      }>`select count(distinct party_id)::int as n from payout_lines where party_id = any(${shops.map((s) => s.id)}::uuid[])`.execute(
        t.db,
      );
      assert.equal(shopLines.rows[0]!.n, 2, 'both shops were paid out');
    });

    /** Resolves once a backend of this database (the one with `pid`, if given) runs a statement containing `text` and waits for a lock. */
    async function waiting(text: string, pid?: number): Promise<void> {
      for (let i = 0; i < 500; i++) {
        const row = (
          await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and position(${text} in query) > 0
          and (${pid ?? null}::int is null or pid = ${pid ?? null}::int)`.execute(t.db)
        ).rows[0]!;
        if (row.n > 0) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no statement containing ${text} waited for a lock`);
    }

    /** The roll-up's statement on a connection of its own, whose backend pid is known (the app's own roll-up loop may run too). */
    function rollUpOnOwnConnection(): { pid: Promise<number>; done: Promise<number> } {
      let pid!: (n: number) => void;
      const known = new Promise<number>((r) => (pid = r));
      const done = t.db.connection().execute(async (conn) => {
        pid((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn)).rows[0]!.pid);
        return new LedgerRepository().rollUpDeltas(conn);
      });
      return { pid: Promise.race([known, done.then(() => -1)]), done };
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
    // Pending: a cash on delivery credited (+2,500), or an ACCOUNT job charged to the shop (−9,000).
    const pendingChanges = [
      {
        name: 'a credit pending',
        amount: 2_500,
        post: (driverId: string, shopId: string) => cashOnDelivery(t, driverId, shopId, 2_500),
      },
      {
        name: 'a charge pending',
        amount: -9_000,
        post: (driverId: string, shopId: string) => earn(t, driverId, shopId, 9_000),
      },
    ];
    for (const first of ['batch', 'roll-up'] as const)
      for (const change of pendingChanges) {
        test(`a business paid out while a roll-up folds its deltas (${first} first, ${change.name}): the line is its balance, counted once`, async () => {
          const shop = await createUser(t, { role: 'BUSINESS', session: false });
          const driver = await createUser(t, { role: 'DRIVER', session: false });
          await cashOnDelivery(t, driver.id, shop.id, 10_000);
          await t.services.ledger.rollUp();
          const account = (
            await sql<{ id: string }>`select id from ledger_accounts where party_id = ${shop.id}`.execute(t.db)
          ).rows[0]!.id;
          // Another transaction holds the shop's row; the batch and the roll-up queue behind it, in the
          // order they come. (Were the app's own roll-up loop to fire now, it would queue too: the
          // order could change, what is asserted could not.) A posting appends its delta meanwhile.
          const row = await holdRow(account);
          const createBatch = () =>
            calls[0]!(
              'POST',
              '/admin/payouts',
              { currency: 'KES' },
              { ...admins[0]!.headers, 'idempotency-key': `interleave-${first}-${change.amount}` },
            );
          const batchWaits = () => waiting(`kind = 'BUSINESS'`);
          let batch: ReturnType<typeof createBatch> | undefined;
          let rollUp: ReturnType<typeof rollUpOnOwnConnection> | undefined;
          const startRollUp = async () => {
            rollUp = rollUpOnOwnConnection();
            await waiting('delete from ledger_balance_deltas', await rollUp.pid);
          };
          try {
            await change.post(driver.id, shop.id);
            const pending = await sql<{ balance: string; deltas: string }>`
          select balance::bigint, (select coalesce(sum(amount), 0) from ledger_balance_deltas where account_id = ${account})::bigint as deltas
          from ledger_accounts where id = ${account}`.execute(t.db);
            assert.deepEqual(
              [Number(pending.rows[0]!.balance), Number(pending.rows[0]!.deltas)],
              [10_000, change.amount],
              'part in the row, part pending',
            );
            if (first === 'batch') {
              batch = createBatch();
              await batchWaits();
              await startRollUp();
            } else {
              await startRollUp();
              batch = createBatch();
              await batchWaits();
            }
          } finally {
            await row.release();
          }
          const [res] = await Promise.all([batch, rollUp!.done]);
          assert.equal(res.statusCode, 201, res.body);
          const line = await sql<{
            amount: string;
          }>`select amount from payout_lines where batch_id = ${res.json().id} and party_id = ${shop.id}`.execute(t.db);
          assert.deepEqual(
            line.rows.map((r) => Number(r.amount)),
            [10_000 + change.amount],
            'one line, for the whole balance',
          );
          assert.equal(await balanceOf(t, 'BUSINESS', shop.id), 0);
          await assertBooks(t);
          assert.equal((await calls[0]!('POST', `/admin/payouts/${res.json().id}/paid`)).statusCode, 200);
        });
      }
  },
);
