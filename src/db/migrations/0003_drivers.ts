// Drivers and matching: the live position columns and active-job columns live in driver_profiles
// (0001); this migration adds the index behind GET /companies/me/drivers.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists driver_profiles_company_idx`.execute(db);
  await sql`create index driver_profiles_company_idx on driver_profiles (company_id, user_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists driver_profiles_company_idx`.execute(db);
  await sql`create index driver_profiles_company_idx on driver_profiles (company_id)`.execute(db);
}
