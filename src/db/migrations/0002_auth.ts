// Login sessions, one-time codes and per-account protection (auth module).
import type { Kysely } from 'kysely';

export async function up(_db: Kysely<any>): Promise<void> {
  // Filled by the module that owns these tables.
}

export async function down(_db: Kysely<any>): Promise<void> {}
