// Two admins creating payout batches at the same moment, while jobs keep posting to the same
// accounts, on the PostgreSQL server (PGlite has one connection: nothing runs at once there).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { serverDatabaseUrl } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { assertBooks, balanceOf, caller, collectCash, earn, type Call } from './payouts-helpers.js';

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
        return plan;
      });
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
      await assertBooks(t);

      // The batches are paid, so the next round may pay the same accounts again.
      for (const r of results.filter((x) => x.statusCode === 201)) assert.equal((await calls[0]!('POST', `/admin/payouts/${r.json().id}/paid`)).statusCode, 200);
    }
    await assertBooks(t);
  });
});
