// Time (contract section 22): countries' time zones, packages' windows, rides booked ahead, and the
// durable wake-up of scheduled jobs in dispatch_jobs (state SCHEDULED until next_attempt_at = start − lead).
import { sql, type Kysely } from 'kysely';

const ZONES: [string, string][] = [
  ['KE', 'Africa/Nairobi'],
  ['NG', 'Africa/Lagos'],
  ['GH', 'Africa/Accra'],
  ['UG', 'Africa/Kampala'],
  ['TZ', 'Africa/Dar_es_Salaam'],
  ['RW', 'Africa/Kigali'],
  ['ZA', 'Africa/Johannesburg'],
  ['EG', 'Africa/Cairo'],
  ['ET', 'Africa/Addis_Ababa'],
  ['MA', 'Africa/Casablanca'],
  ['SN', 'Africa/Dakar'],
  ['CI', 'Africa/Abidjan'],
  ['GB', 'Europe/London'],
  ['US', 'America/New_York'],
  ['FR', 'Europe/Paris'],
  ['DE', 'Europe/Berlin'],
  ['IN', 'Asia/Kolkata'],
  ['AE', 'Asia/Dubai'],
];

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    alter table countries add column time_zone text not null default 'UTC';

    alter table packages
      add column pickup_window_start timestamptz,
      add column pickup_window_end timestamptz,
      add column dropoff_window_start timestamptz,
      add column dropoff_window_end timestamptz,
      add column time_zone text;
    alter table rides
      add column scheduled_at timestamptz,
      add column time_zone text;

    alter table dispatch_jobs drop constraint dispatch_jobs_state_check;
    alter table dispatch_jobs add constraint dispatch_jobs_state_check
      check (state in ('SCHEDULED', 'SEARCHING', 'OFFERED', 'NO_DRIVERS', 'DONE'));
    alter table dispatch_jobs
      -- The start the job is promised for (the pickup window's start, or the ride's scheduledAt).
      add column scheduled_start timestamptz,
      add column lead_seconds integer,
      add column lead_samples integer,
      add column entered_at timestamptz,
      -- When the customer is told that nobody has accepted yet (scheduledAt − 10m); moved forward by a lease while one instance tells.
      add column notify_at timestamptz,
      add column notified_at timestamptz;
    create index dispatch_jobs_scheduled_due on dispatch_jobs (next_attempt_at) where state = 'SCHEDULED';
    create index dispatch_jobs_notify_due on dispatch_jobs (notify_at) where notified_at is null and notify_at is not null;
  `,
    )
    .execute(db);
  for (const [code, zone] of ZONES) {
    await sql`update countries set time_zone = ${zone} where code = ${code}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    drop index dispatch_jobs_notify_due;
    drop index dispatch_jobs_scheduled_due;
    delete from dispatch_jobs where state = 'SCHEDULED';
    alter table dispatch_jobs drop column scheduled_start, drop column lead_seconds, drop column lead_samples,
      drop column entered_at, drop column notify_at, drop column notified_at;
    alter table dispatch_jobs drop constraint dispatch_jobs_state_check;
    alter table dispatch_jobs add constraint dispatch_jobs_state_check
      check (state in ('SEARCHING', 'OFFERED', 'NO_DRIVERS', 'DONE'));
    alter table rides drop column scheduled_at, drop column time_zone;
    alter table packages drop column pickup_window_start, drop column pickup_window_end,
      drop column dropoff_window_start, drop column dropoff_window_end, drop column time_zone;
    alter table countries drop column time_zone;
  `,
    )
    .execute(db);
}
