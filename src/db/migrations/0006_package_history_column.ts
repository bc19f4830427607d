// The status history of a package kept in its row as well (packages.status_history, the items the
// API shows), so a poll reads one row instead of aggregating package_status_history each time. The
// history table stays the audit log (with the actor) and the only thing code writes: a trigger
// appends each inserted history row to the column, so the two cannot drift, whatever version of the
// service wrote the row (an instance of the previous version during a rolling deploy included).
import { sql, type Kysely } from 'kysely';

/** A history row as the API shows it: status, `at` as JavaScript's toISOString writes it, reason when there is one. */
const item = (row: string) =>
  sql.raw(`jsonb_strip_nulls(jsonb_build_object(
  'status', ${row}.status,
  'at', to_char(${row}.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'reason', ${row}.reason))`);

/** Rebuilds packages.status_history from package_status_history (the migration's backfill; the B4 bench seeds this way). */
export async function rebuildPackageStatusHistory(db: Kysely<any>): Promise<void> {
  await sql`
    update packages p set status_history = coalesce(
      (select jsonb_agg(${item('h')} order by h.id) from package_status_history h where h.package_id = p.id), '[]'::jsonb)`.execute(
    db,
  );
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table packages add column status_history jsonb not null default '[]'::jsonb`.execute(db);
  await sql`
    create function package_status_history_append() returns trigger language plpgsql as $$
    begin
      update packages set status_history = status_history || jsonb_build_array(${item('new')}) where id = new.package_id;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger package_status_history_append after insert on package_status_history
    for each row execute function package_status_history_append()`.execute(db);
  await rebuildPackageStatusHistory(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger package_status_history_append on package_status_history`.execute(db);
  await sql`drop function package_status_history_append()`.execute(db);
  await sql`alter table packages drop column status_history`.execute(db);
}
