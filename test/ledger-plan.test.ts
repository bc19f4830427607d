// The posting statement's plan with a few thousand accounts (a small operator's books): every
// account it reads or locks is found through the primary key. PostgreSQL keeps one generic plan for
// a prepared statement; with `a.id in (select … from <CTE>)` that plan hash-joined a sequential scan
// of ledger_accounts three times per posting once the table held a few thousand rows (1.4 ms at
// 2,000 accounts, 4.8 ms at 10,000, until the index won again near 100,000).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql, type CompiledQuery, type LogEvent } from 'kysely';
import { LedgerRepository } from '../src/modules/ledger/ledger.repository.js';
import { LedgerService } from '../src/modules/ledger/ledger.service.js';
import { jobCompletedEntries } from '../src/modules/ledger/postings.js';
import { ManualClock } from '../src/shared/clock.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

let t: TestDatabase;
const captured: CompiledQuery[] = [];

before(async () => {
  t = await createTestDatabase({ log: (event: LogEvent) => void captured.push(event.query) });
});
after(async () => {
  await t?.close();
});

async function user(role: 'DRIVER' | 'BUSINESS'): Promise<string> {
  const id = randomUUID();
  await t.db
    .insertInto('users')
    .values({
      id,
      email: `${id}@example.com`,
      phone: `+2547${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`,
      password_hash: 'x',
      first_name: 'P',
      last_name: role,
      role,
      status: 'ACTIVE',
      status_reason: null,
      country_id: null,
    })
    .execute();
  return id;
}

/**
 * How a plan (EXPLAIN's JSON) reads ledger_accounts: one entry per node that scans it, with the index
 * it goes through ("Seq Scan" when none; a bitmap heap scan names its bitmap index scans' indexes).
 */
function accountReads(plan: unknown): string[] {
  const found: string[] = [];
  const indexesUnder = (node: Record<string, unknown>): string[] => [
    ...(node['Index Name'] ? [String(node['Index Name'])] : []),
    ...((node.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(indexesUnder),
  ];
  const walk = (node: Record<string, unknown>) => {
    if (node['Relation Name'] === 'ledger_accounts' && node['Node Type'] !== 'ModifyTable') {
      if (node['Node Type'] === 'Seq Scan') found.push('Seq Scan');
      else if (node['Node Type'] === 'Bitmap Heap Scan') found.push(...indexesUnder(node));
      else found.push(String(node['Index Name']));
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk((plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return found;
}

const literal = (value: unknown) =>
  `'${(value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : JSON.stringify(value)).replaceAll("'", "''")}'`;

test("a posting's generic plan reads ledger_accounts only through its primary key, with 3,000 accounts", async () => {
  // 3,000 operator accounts: 600 currencies × 5 purposes (no party rows needed), opened over time
  // (one creation time for all would make the (created_at, id) index look as good as the key).
  await sql`
    insert into ledger_accounts (id, kind, party_id, currency, created_at, updated_at)
    select gen_random_uuid(), k.kind, null, chr(65 + i / 676) || chr(65 + (i / 26) % 26) || chr(65 + i % 26),
      now() - interval '2 hours' + i * interval '1 second', now()
    from generate_series(1000, 1599) i
    cross join (values ('OPERATOR_COMMISSION'), ('OPERATOR_BOOKING_FEES'), ('OPERATOR_CASH'), ('OPERATOR_BANK'), ('PAYOUTS_CLEARING')) k(kind)`.execute(
    t.db,
  );
  const ledger = new LedgerService({
    db: t.db,
    clock: new ManualClock(new Date('2026-01-05T10:00:00Z')),
    repo: new LedgerRepository(),
  });
  const [driver, business] = [await user('DRIVER'), await user('BUSINESS')];
  const completion = (paymentMethod: 'CASH' | 'ACCOUNT') =>
    jobCompletedEntries({
      driverId: driver,
      payer: { kind: 'BUSINESS', partyId: business },
      paymentMethod,
      amount: 17430,
      bookingFee: 1000,
      commissionRate: 2000,
    });
  await ledger.post(t.db, {
    sourceKey: `job:PACKAGE:${randomUUID()}:completed`,
    currency: 'KES',
    entries: completion('CASH'),
  });
  await sql`analyze ledger_accounts`.execute(t.db);

  captured.length = 0;
  await t.db.transaction().execute((trx) =>
    ledger.post(trx, {
      sourceKey: `job:PACKAGE:${randomUUID()}:completed`,
      currency: 'KES',
      entries: completion('ACCOUNT'),
    }),
  );
  const posting = captured.find((q) => q.sql.includes('insert into ledger_transactions'));
  assert.ok(posting, 'the posting statement was run');

  await t.db.connection().execute(async (conn) => {
    const text = posting.sql.replace(/^\/\*prepared\*\/ /, '');
    await sql.raw(`prepare posting as ${text}`).execute(conn);
    await sql`set plan_cache_mode = force_generic_plan`.execute(conn);
    try {
      const explained = await sql
        .raw<{ 'QUERY PLAN': unknown }>(
          `explain (format json) execute posting(${posting.parameters.map(literal).join(', ')})`,
        )
        .execute(conn);
      const plan = explained.rows[0]!['QUERY PLAN'];
      const json = typeof plan === 'string' ? JSON.parse(plan) : plan;
      const reads = accountReads(json);
      // The lock, the balance update's rows and the existence check: at least three reads, each by key.
      assert.ok(reads.length >= 3, `ledger_accounts read ${reads.length} times: ${reads.join(', ')}`);
      assert.deepEqual(
        reads.filter((index) => index !== 'ledger_accounts_pkey'),
        [],
        `every read of ledger_accounts goes through its primary key (${reads.join(', ')})`,
      );
    } finally {
      await sql`reset plan_cache_mode`.execute(conn);
      await sql`deallocate posting`.execute(conn);
    }
  });
});
