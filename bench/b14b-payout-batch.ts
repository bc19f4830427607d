// B14b: one payout batch over 100,000 accounts on the PostgreSQL server (contract section 21: ≤ 10 s),
// through PayoutService as POST /admin/payouts runs it (one transaction), then its bank file and
// POST /admin/payouts/:id/paid. A fresh database of its own, dropped at the end.
// Usage: BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/b14b-payout-batch.ts   (BENCH_ACCOUNTS=100000)
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { LedgerRepository } from '../src/modules/ledger/ledger.repository.js';
import { LedgerService } from '../src/modules/ledger/ledger.service.js';
import { ReceiptsRepository } from '../src/modules/ledger/receipts.repository.js';
import { PayoutsRepository } from '../src/modules/payouts/payouts.repository.js';
import { PayoutService } from '../src/modules/payouts/payouts.service.js';
import { systemClock } from '../src/shared/clock.js';
import { createServerDatabase } from '../test/helpers/database.js';
import { machine } from './lib/harness.js';

const N = Number(process.env.BENCH_ACCOUNTS ?? 100_000);
const baseUrl = process.env.BENCH_DATABASE_URL;
if (!baseUrl) throw new Error('set BENCH_DATABASE_URL (a PostgreSQL server: the figure is for the server)');

const created = await createServerDatabase(baseUrl, 'bench_b14b');
const database = await openDatabase({ url: created.url, poolSize: 4 });
try {
  const { db } = database;
  await migrateToLatest(db);
  const clock = systemClock;
  const ledger = new LedgerService({ db, clock, repo: new LedgerRepository() });
  const repo = new PayoutsRepository();
  const payouts = new PayoutService({ db, clock, ledger, repo, receipts: new ReceiptsRepository() });

  // N drivers (and an admin) owed 1..50,000 each by one balanced seed transaction against OPERATOR_CASH.
  let t = performance.now();
  const country = await db.selectFrom('countries').select('id').where('code', '=', 'KE').executeTakeFirstOrThrow();
  const adminId = randomUUID();
  await sql`insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
    values (${adminId}, 'admin@bench.test', '+254700000000', 'x', 'A', 'Admin', 'ADMIN', 'ACTIVE', ${country.id})`.execute(
    db,
  );
  await sql`insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
    select gen_random_uuid(), 'd' || i || '@bench.test', '+2547' || lpad(i::text, 8, '0'), 'x', 'Driver', 'No ' || i, 'DRIVER', 'ACTIVE', ${country.id}
    from generate_series(1, ${N}) i`.execute(db);
  const cash = await ledger.account(db, 'KES', { kind: 'OPERATOR_CASH' });
  const seedTx = randomUUID();
  const now = new Date();
  await db.transaction().execute(async (trx) => {
    await sql`insert into ledger_accounts (id, kind, party_id, currency, balance, created_at, updated_at)
      select gen_random_uuid(), 'DRIVER', id, 'KES', 1 + (hashtext(id::text) & 65535) % 50000, ${now}::timestamptz, ${now}::timestamptz from users where role = 'DRIVER'`.execute(
      trx,
    );
    await sql`insert into ledger_transactions (id, source_key, currency, created_at) values (${seedTx}, 'bench:seed', 'KES', ${now})`.execute(
      trx,
    );
    await sql`insert into ledger_entries (transaction_id, account_id, amount, code, created_at)
      select ${seedTx}::uuid, id, balance, 'EARNINGS', ${now}::timestamptz from ledger_accounts where kind = 'DRIVER'
      union all select ${seedTx}::uuid, ${cash.id}::uuid, -(select sum(balance) from ledger_accounts where kind = 'DRIVER'), 'SETTLEMENT', ${now}::timestamptz`.execute(
      trx,
    );
    await sql`insert into ledger_balance_deltas (account_id, amount) select ${cash.id}::uuid, -sum(balance) from ledger_accounts where kind = 'DRIVER'`.execute(
      trx,
    );
  });
  await sql`vacuum analyze`.execute(db);
  const seedMs = performance.now() - t;

  t = performance.now();
  const batch = await db.transaction().execute((trx) => payouts.createBatch(trx, adminId, { currency: 'KES' }));
  const batchMs = performance.now() - t;

  t = performance.now();
  const file = await payouts.csv(batch.id);
  const csvMs = performance.now() - t;

  t = performance.now();
  const paid = await payouts.markPaid(batch.id);
  const paidMs = performance.now() - t;

  const trial = await ledger.trialBalance();
  const left = await sql<{
    n: number;
  }>`select count(*)::int as n from ledger_accounts where kind = 'DRIVER' and balance <> 0`.execute(db);
  const round = (ms: number) => Math.round(ms);
  console.log(
    JSON.stringify(
      {
        bench: 'b14b-payout-batch',
        accounts: N,
        seedMs: round(seedMs),
        createBatchMs: round(batchMs),
        lines: batch.lineCount,
        totalMajor: batch.totalMajor,
        csvMs: round(csvMs),
        csvBytes: Buffer.byteLength(file.csv),
        markPaidMs: round(paidMs),
        paidLines: paid.lines.PAID.lines,
        driversLeftWithBalance: left.rows[0]!.n,
        trialBalance: trial,
        targetMs: 10_000,
        machine: machine(),
      },
      null,
      2,
    ),
  );
} finally {
  await database.close();
  await created.drop();
}
