// Named prepared statements (src/db/prepared.ts): a marked statement runs as a named, generically
// planned statement on each pooled connection of the PostgreSQL server and gives the same rows as
// unmarked SQL; unmarked statements stay unnamed; on the embedded database the mark is a comment.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { PREPARED_MARK, prepared, preparedName, runPrepared } from '../src/db/prepared.js';
import { createTestDatabase, serverDatabaseUrl, type TestDatabase } from './helpers/database.js';

describe('prepared statements', () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase({ migrate: false });
  });
  after(async () => t.close());

  test('marking is idempotent and names depend on the text only', () => {
    const query = sql`select ${1}::int as n`.compile(t.db);
    const once = prepared(query);
    assert.ok(once.sql.startsWith(PREPARED_MARK));
    assert.equal(prepared(once).sql, once.sql);
    assert.equal(preparedName(once.sql), preparedName(prepared(sql`select ${2}::int as n`.compile(t.db)).sql));
    assert.notEqual(preparedName(once.sql), preparedName(prepared(sql`select ${1}::bigint as n`.compile(t.db)).sql));
  });

  test('a marked statement gives the same rows as the same SQL unmarked, with every parameter', async () => {
    for (const n of [1, 7, 42]) {
      const query = sql<{ n: number; doubled: number }>`select ${n}::int as n, ${n}::int * 2 as doubled`.compile(t.db);
      assert.deepEqual(await runPrepared(t.db, query), (await t.db.executeQuery(query)).rows);
    }
  });

  test(
    'on the server: named once per connection, generically planned after five runs; unmarked statements stay unnamed',
    { skip: serverDatabaseUrl ? false : 'needs the PostgreSQL server (TEST_DATABASE_URL)' },
    async () => {
      const marker = `prep_${Date.now()}`;
      const query = sql<Record<string, string>>`select ${'x'}::text as ${sql.ref(marker)}`.compile(t.db);
      // One connection, so that pg_prepared_statements (per session) shows what it has prepared.
      await t.db.connection().execute(async (db) => {
        for (let i = 0; i < 8; i++) assert.deepEqual(await runPrepared(db, query), [{ [marker]: 'x' }]);
        await db.executeQuery(sql`select ${'y'}::text as ${sql.ref(marker)}, 1 as unmarked`.compile(db));
        const statements = await sql<{ name: string; statement: string; generic_plans: number; custom_plans: number }>`
        select name, statement, generic_plans, custom_plans from pg_prepared_statements`.execute(db);
        const ours = statements.rows.filter((s) => s.statement.includes(marker));
        assert.equal(ours.length, 1, 'only the marked statement is a named prepared statement');
        assert.equal(ours[0]!.name, preparedName(prepared(query).sql));
        assert.equal(Number(ours[0]!.custom_plans), 5, 'five runs planned for their values first');
        assert.equal(Number(ours[0]!.generic_plans), 3, 'then the generic plan, kept');
        // The session's own setting is untouched: every other statement is planned for its values
        // (a generic plan could not use a partial index such as packages_pending_pickup_idx).
        const mode = await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(db);
        assert.equal(mode.rows[0]!.plan_cache_mode, 'auto');
      });
    },
  );
});
