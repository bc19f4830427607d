// Opens the database: PGlite in DATA_DIR (or in memory) by default, a PostgreSQL server with a URL.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Kysely, PostgresDialect, sql, type LogConfig } from 'kysely';
import pg from 'pg';
import { DatabaseAvailability, isDatabaseUnavailable } from './availability.js';
import { lockDataDir } from './data-dir-lock.js';
import { openEmbedded } from './embedded.js';
import { PGliteDialect } from './pglite-dialect.js';
import { honourPreparedMarks } from './prepared.js';
import type { Database } from './schema.js';

export type DB = Kysely<Database>;

export interface DatabaseHandle {
  db: DB;
  kind: 'pglite' | 'postgres';
  /** The pg pool behind `db` (PostgreSQL server only), for hot reads that use named prepared statements. */
  pgPool?: pg.Pool;
  /** Lost / recovered, as the pool sees the server (never lost for the embedded database). */
  availability: DatabaseAvailability;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// int8 (counts, sums) as JS numbers in both drivers, so the two behave the same.
const parseInt8 = (value: string) => Number(value);

/** How long a statement waits for a connection (a free one from the pool, or a new one) by default. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

export async function openDatabase(options: {
  url?: string;
  dataDir?: string;
  poolSize?: number;
  connectTimeoutMs?: number;
  /** Kysely's log hook: called for every statement run (tests count a request's statements with it). */
  log?: LogConfig;
}): Promise<DatabaseHandle> {
  const availability = new DatabaseAvailability();
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      // While the server is away a statement fails after this instead of waiting for it.
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // A client losing its connection (the server restarted, or terminated it) emits 'error', idle or
    // checked out; without a listener that ends the process. The pool drops such a client, and the
    // statement running on it fails on its own.
    pool.on('error', (err) => availability.lost(err));
    pool.on('connect', (client) => {
      honourPreparedMarks(client as unknown as Parameters<typeof honourPreparedMarks>[0]);
      client.on('error', (err) => availability.lost(err));
      availability.recovered();
    });
    const connect = async () => {
      try {
        return await pool.connect();
      } catch (err) {
        availability.lost(err);
        throw err;
      }
    };
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: { connect, end: () => pool.end() } }),
      log: options.log,
    });
    return {
      db,
      kind: 'postgres',
      pgPool: pool,
      availability,
      ping: async () => {
        try {
          await sql`select 1`.execute(db);
        } catch (err) {
          // A pooled connection the server had already closed says nothing about the server now.
          if (!isDatabaseUnavailable(err)) throw err;
          await sql`select 1`.execute(db);
        }
        availability.recovered();
      },
      close: () => db.destroy(),
    };
  }

  // The files live in DATA_DIR/pgdata; the lock sits next to them (DATA_DIR/pgdata.lock).
  let unlock: () => Promise<void> = async () => undefined;
  if (options.dataDir) {
    await mkdir(options.dataDir, { recursive: true });
    unlock = await lockDataDir(path.dirname(options.dataDir), `${options.dataDir}.lock`);
  }
  try {
    const client = await openEmbedded(options.dataDir, parseInt8);
    const db = new Kysely<Database>({ dialect: new PGliteDialect(client), log: options.log });
    return {
      db,
      kind: 'pglite',
      availability,
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: async () => {
        try {
          await db.destroy();
        } finally {
          await unlock();
        }
      },
    };
  } catch (err) {
    await unlock();
    throw err;
  }
}
