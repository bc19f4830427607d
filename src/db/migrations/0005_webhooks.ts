// Webhook endpoints and the delivery table, which is both the transactional outbox and the delivery log.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      id uuid primary key,
      business_id uuid not null references users(id) on delete cascade,
      url text not null,
      events text[] not null,
      enabled boolean not null default true,
      disabled_reason text,
      description text,
      secret text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index webhook_endpoints_business_idx on webhook_endpoints (business_id, created_at desc, id desc);

    create table webhook_deliveries (
      id uuid primary key,
      seq bigint generated always as identity,
      endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
      event text not null,
      delivery_id text not null,
      payload text not null,
      status text not null default 'PENDING' check (status in ('PENDING', 'SUCCEEDED', 'FAILED')),
      attempts integer not null default 0,
      attempt_base integer not null default 0,
      next_attempt_at timestamptz,
      locked_until timestamptz,
      locked_by text,
      last_attempt_at timestamptz,
      last_response_status integer,
      last_error text,
      completed_at timestamptz,
      created_at timestamptz not null
    ) with (
      -- A queue table: every row is updated twice (claim, outcome). Room on the page keeps the claim a
      -- HOT update, and eager autovacuum keeps finished rows out of the due index's way.
      fillfactor = 80,
      autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_threshold = 500,
      autovacuum_vacuum_cost_delay = 0
    );
    create index webhook_deliveries_log_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
    create index webhook_deliveries_due_idx on webhook_deliveries (endpoint_id, next_attempt_at, seq) where status = 'PENDING';
    -- "Is an earlier event of this package still pending?": led by the package id, so it can never be
    -- mistaken for a scan of the endpoint's whole queue.
    create index webhook_deliveries_order_idx on webhook_deliveries (delivery_id, endpoint_id, seq) where status = 'PENDING';
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists webhook_deliveries; drop table if exists webhook_endpoints;`.execute(db);
}
