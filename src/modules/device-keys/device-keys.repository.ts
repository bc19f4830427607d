// Kysely queries of the drivers' device keys (Traccar Client's OsmAnd protocol).
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';

export interface DeviceKeyRow {
  id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

export interface DeviceKeyOwner {
  id: string;
  driver_id: string;
  /** The owner's account status (only an ACTIVE driver's positions count). */
  status: string;
}

export class DeviceKeysRepository {
  constructor(private readonly db: DB) {}

  listByDriver(driverId: string): Promise<DeviceKeyRow[]> {
    return this.db
      .selectFrom('device_keys')
      .select(['id', 'name', 'created_at', 'last_used_at'])
      .where('driver_id', '=', driverId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  /** Holds the driver's user row until the transaction ends: makes count-then-insert safe. */
  async lockDriver(db: Executor, driverId: string): Promise<boolean> {
    const row = await db.selectFrom('users').select(['id']).where('id', '=', driverId).forUpdate().executeTakeFirst();
    return row !== undefined;
  }

  async countByDriver(db: Executor, driverId: string): Promise<number> {
    const row = await db
      .selectFrom('device_keys')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('driver_id', '=', driverId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(
    db: Executor,
    row: { id: string; driver_id: string; name: string; key_hash: string; created_at: Date },
  ): Promise<void> {
    await db.insertInto('device_keys').values(row).execute();
  }

  /** Deletes the driver's own key; its hash, undefined when there was none. */
  async deleteOwn(driverId: string, id: string): Promise<string | undefined> {
    const row = await this.db
      .deleteFrom('device_keys')
      .where('id', '=', id)
      .where('driver_id', '=', driverId)
      .returning(['key_hash'])
      .executeTakeFirst();
    return row?.key_hash;
  }

  /** Every key's hash (at most 3 per driver), in pages of `limit` after `after`. */
  async listHashes(limit: number, after: string | undefined): Promise<string[]> {
    let query = this.db.selectFrom('device_keys').select(['key_hash']).orderBy('key_hash').limit(limit);
    if (after !== undefined) query = query.where('key_hash', '>', after);
    return (await query.execute()).map((r) => r.key_hash);
  }

  getOwnerByHash(keyHash: string): Promise<DeviceKeyOwner | undefined> {
    return this.db
      .selectFrom('device_keys as k')
      .innerJoin('users as u', 'u.id', 'k.driver_id')
      .select(['k.id', 'k.driver_id', 'u.status'])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
  }

  /** Records use, at most once a minute per key (the row is not rewritten for every position). */
  async touch(id: string, at: Date): Promise<void> {
    await this.db
      .updateTable('device_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) =>
        eb.or([
          eb('last_used_at', 'is', null),
          eb('last_used_at', '<', sql<Date>`${at}::timestamptz - interval '1 minute'`),
        ]),
      )
      .execute();
  }
}
