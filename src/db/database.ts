// Opens the database: PGlite in DATA_DIR (or in memory) by default, a PostgreSQL server with a URL.
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openEmbedded } from './embedded.js';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database } from './schema.js';

export type DB = Kysely<Database>;

export interface DatabaseHandle {
  db: DB;
  kind: 'pglite' | 'postgres';
  /** The pg pool behind `db` (PostgreSQL server only), for hot reads that use named prepared statements. */
  pgPool?: pg.Pool;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// int8 (counts, sums) as JS numbers in both drivers, so the two behave the same.
const parseInt8 = (value: string) => Number(value);

export async function openDatabase(options: { url?: string; dataDir?: string; poolSize?: number }): Promise<DatabaseHandle> {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => undefined);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: 'postgres',
      pgPool: pool,
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: () => db.destroy(),
    };
  }

  const client = await openEmbedded(options.dataDir, parseInt8);
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
  return {
    db,
    kind: 'pglite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
