// Rides keep their status history in their row as packages do (0006): rides.status_history, the
// items the API shows, appended by a trigger from ride_status_history (the audit log, with the actor).
import { sql, type Kysely } from 'kysely';

/** A history row as the API shows it (the same item 0006 builds for packages). */
const ITEM = `jsonb_strip_nulls(jsonb_build_object('status', h.status,
  'at', to_char(h.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'reason', h.reason))`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    alter table rides add column status_history jsonb not null default '[]'::jsonb;
    create function ride_status_history_append() returns trigger language plpgsql as $$
    declare h ride_status_history := new;
    begin
      update rides set status_history = status_history || jsonb_build_array(${ITEM}) where id = new.ride_id;
      return null;
    end $$;
    create trigger ride_status_history_append after insert on ride_status_history
      for each row execute function ride_status_history_append();
    update rides r set status_history = coalesce(
      (select jsonb_agg(${ITEM} order by h.id) from ride_status_history h where h.ride_id = r.id), '[]'::jsonb);
  `,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    drop trigger ride_status_history_append on ride_status_history;
    drop function ride_status_history_append();
    alter table rides drop column status_history;
  `,
    )
    .execute(db);
}
