// A fresh migrated database per test file: a new database on the PostgreSQL server when
// TEST_DATABASE_URL is set, otherwise an in-memory PGlite.
import { randomBytes } from 'node:crypto';
import type { LogConfig } from 'kysely';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const serverDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const testRedisUrl = process.env.TEST_REDIS_URL || undefined;

export interface TestDatabase extends DatabaseHandle {
  /** The connection string of this database (server mode only). */
  url: string | undefined;
}

/**
 * A new, empty database on the server of `baseUrl` (named `<prefix>_<time>_<random>`), and how to
 * drop it. Tests and benchmarks each get their own, so runs never see each other's rows.
 */
export async function createServerDatabase(
  baseUrl: string,
  prefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const onServer = async (statement: string) => {
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    try {
      await admin.query(statement);
    } finally {
      await admin.end();
    }
  };
  await onServer(`create database ${name}`);
  const parsed = new URL(baseUrl);
  parsed.pathname = `/${name}`;
  return { url: parsed.toString(), drop: () => onServer(`drop database if exists ${name} with (force)`) };
}

export async function createTestDatabase(options: { migrate?: boolean; log?: LogConfig } = {}): Promise<TestDatabase> {
  let handle: DatabaseHandle;
  let url: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  if (serverDatabaseUrl) {
    const created = await createServerDatabase(serverDatabaseUrl, 'test');
    url = created.url;
    handle = await openDatabase({ url, poolSize: 10, log: options.log });
    drop = created.drop;
  } else {
    handle = await openDatabase({ log: options.log });
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
