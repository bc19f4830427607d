// Device keys (contract section 19): a driver's key for Traccar Client's OsmAnd protocol. Only the
// SHA-256 hash of a key is stored; the key itself is shown once, when it is made.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table device_keys (
      id uuid primary key,
      driver_id uuid not null references users(id) on delete cascade,
      name text not null,
      -- hex SHA-256 of the key: the lookup of every position, hence unique and indexed.
      key_hash char(64) not null unique,
      created_at timestamptz not null,
      last_used_at timestamptz
    );
    create index device_keys_driver_idx on device_keys (driver_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists device_keys`.execute(db);
}
