// Migration 0007: rides keep their status history in their row. The API shows what the per-read
// aggregation of ride_status_history showed before, for rides written before and after it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql, type Kysely } from 'kysely';
import { migrations } from '../src/db/migrations/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

/** The statusHistory the API built on every read before 0007 (json_agg, then mapped in JavaScript). */
async function historyAsBefore(db: Kysely<any>, rideId: string) {
  const { rows } = await sql<{ history: { status: string; at: number; reason: string | null }[] | string }>`
    select (select coalesce(json_agg(json_build_object('status', h.status, 'at', (extract(epoch from h.at) * 1000)::bigint, 'reason', h.reason) order by h.id), '[]'::json)
      from ride_status_history h where h.ride_id = ${rideId}::uuid) as history`.execute(db);
  const raw = rows[0]!.history;
  const list = typeof raw === 'string' ? (JSON.parse(raw) as Exclude<typeof raw, string>) : raw;
  return list.map((h) => ({
    status: h.status,
    at: new Date(Number(h.at)).toISOString(),
    ...(h.reason !== null ? { reason: h.reason } : {}),
  }));
}

async function historyColumn(db: Kysely<any>, rideId: string) {
  const { rows } = await sql<{
    status_history: unknown;
  }>`select status_history from rides where id = ${rideId}::uuid`.execute(db);
  const value = rows[0]!.status_history;
  return typeof value === 'string' ? JSON.parse(value) : value;
}

describe('ride history migration (0007)', () => {
  let database: TestDatabase;
  const migrator = (db: Kysely<any>) => new Migrator({ db, provider: { getMigrations: async () => migrations } });

  before(async () => {
    database = await createTestDatabase({ migrate: false });
  });
  after(async () => database.close());

  test('the backfill and the trigger give the history the API showed before', async () => {
    const db = database.db as Kysely<any>;
    const upTo0006 = await migrator(db).migrateTo('0006_package_history_column');
    assert.equal(upTo0006.error, undefined);
    const { rows: countries } = await sql<{ id: string }>`select id from countries limit 1`.execute(db);
    const customer = randomUUID();
    await sql`insert into users (id, email, phone, password_hash, first_name, last_name, role, status)
      values (${customer}::uuid, ${`c-${customer}@example.com`}, '+254700000001', 'x', 'C', 'U', 'CUSTOMER', 'ACTIVE')`.execute(
      db,
    );
    const ride = randomUUID();
    const t0 = Date.parse('2026-11-20T10:00:00.123Z');
    await sql`insert into rides (id, status, customer_id, vehicle_type, country_id, pickup_lat, pickup_lng, destination_lat, destination_lng, created_at, updated_at)
      values (${ride}::uuid, 'CANCELLED', ${customer}::uuid, 'CAR', ${countries[0]!.id}::uuid, 1, 2, 3, 4, ${new Date(t0)}, ${new Date(t0 + 2000)})`.execute(
      db,
    );
    for (const [i, status, reason] of [
      [0, 'REQUESTED', null],
      [1, 'ACCEPTED', null],
      [2, 'CANCELLED', 'Plans "changed"'],
    ] as const) {
      await sql`insert into ride_status_history (ride_id, status, reason, actor_id, at) values (${ride}::uuid, ${status}, ${reason}, null, ${new Date(t0 + i * 1000 + i)})`.execute(
        db,
      );
    }
    const before = await historyAsBefore(db, ride);
    assert.equal(before.length, 3);

    const latest = await migrator(db).migrateToLatest();
    assert.equal(latest.error, undefined);
    assert.deepEqual(await historyColumn(db, ride), before);

    // A row written afterwards (by any code) reaches the column through the trigger.
    await sql`insert into ride_status_history (ride_id, status, reason, actor_id, at) values (${ride}::uuid, 'EXPIRED', null, null, ${new Date(t0 + 9999)})`.execute(
      db,
    );
    assert.deepEqual(await historyColumn(db, ride), await historyAsBefore(db, ride));
    assert.equal((await historyColumn(db, ride)).length, 4);
  });
});
