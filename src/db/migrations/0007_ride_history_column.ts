// Rides keep their status history in their row as packages do (0006): rides.status_history, the
// items the API shows, appended by a trigger from ride_status_history (the audit log, with the actor).
import { sql, type Kysely } from 'kysely';

const item = (row: string) => sql.raw(`jsonb_strip_nulls(jsonb_build_object(
  'status', ${row}.status,
  'at', to_char(${row}.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'reason', ${row}.reason))`);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table rides add column status_history jsonb not null default '[]'::jsonb`.execute(db);
  await sql`
    create function ride_status_history_append() returns trigger language plpgsql as $$
    begin
      update rides set status_history = status_history || jsonb_build_array(${item('new')}) where id = new.ride_id;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger ride_status_history_append after insert on ride_status_history
    for each row execute function ride_status_history_append()`.execute(db);
  await sql`
    update rides r set status_history = coalesce(
      (select jsonb_agg(${item('h')} order by h.id) from ride_status_history h where h.ride_id = r.id), '[]'::jsonb)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger ride_status_history_append on ride_status_history`.execute(db);
  await sql`drop function ride_status_history_append()`.execute(db);
  await sql`alter table rides drop column status_history`.execute(db);
}
