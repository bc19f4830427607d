// Failed deliveries (contract section 23): the reason code beside the free-text reason, and the
// packages a failed one leads to: a re-attempt (previous_attempt_id) or a return to the pickup
// (return_of), each created at most once per failed package (follow_up_id on the failed one, set
// conditionally in the follow-up's transaction). preferred_driver_id: the driver a new package is
// offered to first (the one who failed the original while holding the parcel). Tariffs gain
// return_rate (basis points of the trip part of a return's price; 10000 = 100 %).
import { sql, type Kysely } from 'kysely';

/** A history row as the API shows it, now with its reason code (as 0006's, plus reasonCode). */
const item = (row: string) =>
  sql.raw(`jsonb_strip_nulls(jsonb_build_object(
  'status', ${row}.status,
  'at', to_char(${row}.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'reason', ${row}.reason,
  'reasonCode', ${row}.reason_code))`);

/**
 * Rebuilds packages.status_history from package_status_history with the reason codes (0006's rebuild
 * predates them; the B4 bench seeds this way). `failedOnly`: only the packages that have a FAILED row.
 */
export async function rebuildPackageStatusHistory(db: Kysely<any>, failedOnly = false): Promise<void> {
  await sql`
    update packages p set status_history = coalesce(
      (select jsonb_agg(${item('h')} order by h.id) from package_status_history h where h.package_id = p.id), '[]'::jsonb)
    ${failedOnly ? sql`where p.status = 'FAILED'` : sql``}`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table packages
      add column fail_reason_code text check (fail_reason_code in
        ('NO_ANSWER', 'ADDRESS_NOT_FOUND', 'REFUSED', 'CLOSED', 'DAMAGED', 'UNSAFE', 'OTHER')),
      add column previous_attempt_id uuid references packages(id),
      add column return_of uuid references packages(id),
      add column follow_up_id uuid,
      add column preferred_driver_id uuid references users(id) on delete set null;
    create unique index packages_previous_attempt_idx on packages (previous_attempt_id) where previous_attempt_id is not null;
    create unique index packages_return_of_idx on packages (return_of) where return_of is not null;
    alter table package_status_history add column reason_code text;
    alter table tariffs add column return_rate integer not null default 10000 check (return_rate between 0 and 20000);
  `.execute(db);
  await sql`
    create or replace function package_status_history_append() returns trigger language plpgsql as $$
    begin
      update packages set status_history = status_history || jsonb_build_array(${item('new')}) where id = new.package_id;
      return null;
    end $$`.execute(db);
  // Packages failed before reason codes: their text alone means OTHER (contract section 23).
  await sql`
    update packages set fail_reason_code = 'OTHER' where status = 'FAILED';
    update package_status_history set reason_code = 'OTHER' where status = 'FAILED';
  `.execute(db);
  await rebuildPackageStatusHistory(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function package_status_history_append() returns trigger language plpgsql as $$
    begin
      update packages set status_history = status_history || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
        'status', new.status,
        'at', to_char(new.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'reason', new.reason))) where id = new.package_id;
      return null;
    end $$`.execute(db);
  await sql`
    alter table tariffs drop column return_rate;
    alter table package_status_history drop column reason_code;
    alter table packages drop column preferred_driver_id, drop column follow_up_id, drop column return_of,
      drop column previous_attempt_id, drop column fail_reason_code;
  `.execute(db);
}
