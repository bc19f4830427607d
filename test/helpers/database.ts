// A fresh migrated database per test file: a new database on the PostgreSQL server when
// TEST_DATABASE_URL is set, otherwise an in-memory PGlite.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const serverDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const testRedisUrl = process.env.TEST_REDIS_URL || undefined;

export interface TestDatabase extends DatabaseHandle {
  /** The connection string of this database (server mode only). */
  url: string | undefined;
}

export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  let handle: DatabaseHandle;
  let url: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  if (serverDatabaseUrl) {
    const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverDatabaseUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const parsed = new URL(serverDatabaseUrl);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
    handle = await openDatabase({ url, poolSize: 10 });
    drop = async () => {
      const client = new pg.Client({ connectionString: serverDatabaseUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    };
  } else {
    handle = await openDatabase({});
  }
  if (options.migrate !== false) await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    close: async () => {
      await handle.close();
      await drop?.();
    },
  };
}
