// Recurring jobs (contract section 22): a business's template (an RRULE in a time zone and a package
// body whose windows are offsets from each occurrence) and its occurrences. An occurrence's row is
// keyed by (template, local date-time): it is inserted in the same transaction as its package, so no
// occurrence is created twice, whatever the number of instances or restarts.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table recurring_jobs (
      id uuid primary key,
      business_id uuid not null references users(id) on delete cascade,
      -- DTSTART (local, floating) and RRULE lines, as normalised by the service.
      rule text not null,
      time_zone text not null,
      -- The package body, windows as offsets (docs/scheduling.md#recurring-jobs).
      template jsonb not null,
      -- PAUSED with paused_until null: until resumed; with a time: occurrences before it are not created.
      state text not null default 'ACTIVE' check (state in ('ACTIVE', 'PAUSED')),
      paused_until timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index recurring_jobs_business_idx on recurring_jobs (business_id, created_at desc, id desc);

    create table recurring_occurrences (
      recurring_job_id uuid not null references recurring_jobs(id) on delete cascade,
      -- YYYY-MM-DDTHH:MM:SS in the job's zone: the occurrence's identity.
      occurrence_local text not null,
      occurs_at timestamptz not null,
      -- CREATED (its package exists), SKIPPED (DELETE …/occurrences/:date), PAUSED (cancelled or not
      -- created because of a pause), FAILED (the package could not be created: error says why).
      state text not null check (state in ('CREATED', 'SKIPPED', 'PAUSED', 'FAILED')),
      package_id uuid references packages(id) on delete set null,
      pickup_start timestamptz,
      pickup_end timestamptz,
      dropoff_start timestamptz,
      dropoff_end timestamptz,
      error text,
      created_at timestamptz not null,
      primary key (recurring_job_id, occurrence_local)
    );
    create index recurring_occurrences_due_idx on recurring_occurrences (recurring_job_id, occurs_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table if exists recurring_occurrences;
    drop table if exists recurring_jobs;
  `.execute(db);
}
