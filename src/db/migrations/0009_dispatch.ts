// Dispatch (contract section 13): a row per job in dispatch (its state, attempts and next try),
// the offers (at most one OPEN per job and per driver, held by partial unique indexes so that it
// holds across instances and a Redis failover) and the drivers who handed a job back.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    create table dispatch_jobs (
      job_id uuid primary key,
      job_type text not null check (job_type in ('PACKAGE', 'RIDE')),
      state text not null check (state in ('SEARCHING', 'OFFERED', 'NO_DRIVERS', 'DONE')),
      attempts integer not null default 0,
      vehicle_type text not null,
      pickup_lat double precision not null,
      pickup_lng double precision not null,
      next_attempt_at timestamptz not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index dispatch_jobs_due on dispatch_jobs (next_attempt_at) where state in ('SEARCHING', 'NO_DRIVERS');
    create index dispatch_jobs_waiting_near on dispatch_jobs (vehicle_type, pickup_lat, pickup_lng) where state = 'NO_DRIVERS';

    create table dispatch_offers (
      id uuid primary key,
      seq bigint generated always as identity,
      job_type text not null check (job_type in ('PACKAGE', 'RIDE')),
      job_id uuid not null,
      driver_id uuid not null references users (id),
      state text not null check (state in ('OPEN', 'ACCEPTED', 'DECLINED', 'LAPSED', 'WITHDRAWN')),
      offer jsonb not null,
      choice jsonb not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      answered_at timestamptz
    );
    create unique index dispatch_offers_open_job on dispatch_offers (job_id) where state = 'OPEN';
    create unique index dispatch_offers_open_driver on dispatch_offers (driver_id) where state = 'OPEN';
    create index dispatch_offers_by_job on dispatch_offers (job_id, seq);
    create index dispatch_offers_open_expiry on dispatch_offers (expires_at) where state = 'OPEN';

    create table dispatch_releases (
      job_id uuid not null,
      driver_id uuid not null references users (id),
      reason text,
      actor_id uuid,
      at timestamptz not null,
      primary key (job_id, driver_id)
    );
  `,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table dispatch_releases; drop table dispatch_offers; drop table dispatch_jobs;').execute(db);
}
