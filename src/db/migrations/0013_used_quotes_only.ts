// Quotes are no longer stored when given: the quote id carries the quote (sealed), and `quotes` keeps
// a row for each quote a job used (written in the job's transaction: what makes a quote single-use).
// The rows of quotes never used, and the index their clean-up used, go.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(`
    delete from quotes where consumed_at is null;
    drop index if exists quotes_unconsumed_expiry_idx;
  `).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`create index quotes_unconsumed_expiry_idx on quotes (expires_at) where consumed_at is null;`).execute(db);
}
