// The status history of a package kept in its row as well (packages.status_history, the items the
// API shows), so a poll reads one row instead of aggregating package_status_history each time. The
// history table stays: it is the audit log (with the actor) and the source the column is built from.
import { sql, type Kysely } from 'kysely';

/** Rebuilds packages.status_history from package_status_history (the migration's backfill; the B4 bench seeds this way). */
export async function rebuildPackageStatusHistory(db: Kysely<any>): Promise<void> {
  await sql`
    update packages p set status_history = coalesce((
      select jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
               'status', h.status,
               'at', to_char(h.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'reason', h.reason)) order by h.id)
      from package_status_history h where h.package_id = p.id), '[]'::jsonb)`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table packages add column status_history jsonb not null default '[]'::jsonb`.execute(db);
  await rebuildPackageStatusHistory(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table packages drop column status_history`.execute(db);
}
