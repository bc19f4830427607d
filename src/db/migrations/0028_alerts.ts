// Lateness alerts (contract section 23): the alerts (at most one per job and kind: the unique key is
// what makes raising them safe on several instances), their audit trail (acknowledge, resolve), what
// the monitor remembers of each active job between its turns, and partial indexes over active jobs.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table alerts (
      id uuid primary key,
      kind text not null check (kind in ('job.at_risk', 'job.late', 'offer.unanswered', 'driver.not_at_pickup', 'driver.stalled')),
      job_type text not null check (job_type in ('PACKAGE', 'RIDE')),
      job_id uuid not null,
      driver_id uuid,
      -- The package's business (null for rides and packages of customers): who sees the alert.
      business_id uuid,
      raised_at timestamptz not null,
      details jsonb not null,
      state text not null default 'OPEN' check (state in ('OPEN', 'ACKNOWLEDGED', 'RESOLVED')),
      state_by uuid,
      state_at timestamptz
    );
    create unique index alerts_job_kind_key on alerts (job_type, job_id, kind);
    create index alerts_raised_idx on alerts (raised_at desc, id desc);
    create index alerts_business_idx on alerts (business_id, raised_at desc, id desc) where business_id is not null;
    create index alerts_driver_idx on alerts (driver_id, raised_at desc, id desc) where driver_id is not null;

    create table alert_audit (
      id uuid primary key,
      alert_id uuid not null references alerts(id),
      action text not null check (action in ('ACKNOWLEDGE', 'RESOLVE')),
      from_state text not null,
      to_state text not null,
      actor_id uuid not null,
      actor_role text not null,
      at timestamptz not null
    );
    create index alert_audit_alert_idx on alert_audit (alert_id, at);

    -- The monitor's memory of a job with a driver: where the driver was when it last moved 200 m
    -- (driver.stalled) and when it was first seen within 100 m of the pickup (driver.not_at_pickup).
    create table alert_watch (
      job_type text not null,
      job_id uuid not null,
      driver_id uuid not null,
      anchor_lat float8,
      anchor_lng float8,
      anchor_at timestamptz not null,
      arrived_at timestamptz,
      primary key (job_type, job_id)
    );

    create index packages_active_idx on packages (created_at) where status in ('PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT');
    create index rides_active_idx on rides (created_at) where status in ('REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS');
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index if exists rides_active_idx;
    drop index if exists packages_active_idx;
    drop table if exists alert_watch;
    drop table if exists alert_audit;
    drop table if exists alerts;
  `.execute(db);
}
