// Packages, rides, their status history and idempotency keys (packages/rides modules).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table packages (
      id uuid primary key,
      status text not null check (status in ('PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT', 'DELIVERED', 'FAILED', 'CANCELLED')),
      vehicle_type text not null check (vehicle_type in ('BIKE', 'CAR', 'VAN', 'TRUCK')),
      country_id uuid not null references countries(id),
      created_by uuid not null references users(id),
      business_id uuid references users(id),
      customer_id uuid references users(id),
      driver_id uuid references users(id),
      reference text,
      pickup jsonb not null,
      dropoff jsonb not null,
      parcel jsonb not null,
      -- Copied out of pickup for the nearby-jobs bounding box.
      pickup_lat double precision not null,
      pickup_lng double precision not null,
      delivery_code_hash text,
      delivery_code_attempts integer not null default 0,
      recipient_name text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index packages_created_by_idx on packages (created_by, created_at desc, id desc);
    create index packages_customer_idx on packages (customer_id, created_at desc, id desc) where customer_id is not null;
    create index packages_driver_idx on packages (driver_id, created_at desc, id desc) where driver_id is not null;
    create index packages_created_idx on packages (created_at desc, id desc);
    create index packages_pending_pickup_idx on packages (pickup_lat, pickup_lng) where status = 'PENDING';

    create table package_status_history (
      id bigint generated always as identity primary key,
      package_id uuid not null references packages(id) on delete cascade,
      status text not null,
      reason text,
      actor_id uuid,
      at timestamptz not null
    );
    create index package_status_history_package_idx on package_status_history (package_id, id);

    create table rides (
      id uuid primary key,
      status text not null check (status in ('REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED', 'EXPIRED')),
      customer_id uuid not null references users(id),
      driver_id uuid references users(id),
      vehicle_type text not null check (vehicle_type in ('BIKE', 'CAR', 'VAN', 'TRUCK')),
      country_id uuid not null references countries(id),
      pickup_lat double precision not null,
      pickup_lng double precision not null,
      destination_lat double precision not null,
      destination_lng double precision not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index rides_customer_idx on rides (customer_id, created_at desc, id desc);
    create index rides_driver_idx on rides (driver_id, created_at desc, id desc) where driver_id is not null;
    create index rides_created_idx on rides (created_at desc, id desc);
    create index rides_requested_idx on rides (created_at) where status = 'REQUESTED';
    create index rides_requested_pickup_idx on rides (pickup_lat, pickup_lng) where status = 'REQUESTED';

    create table ride_status_history (
      id bigint generated always as identity primary key,
      ride_id uuid not null references rides(id) on delete cascade,
      status text not null,
      reason text,
      actor_id uuid,
      at timestamptz not null
    );
    create index ride_status_history_ride_idx on ride_status_history (ride_id, id);

    -- Idempotency-Key records: one per (account, key). The response is kept encrypted (it may hold
    -- a delivery code) and only for 24 hours.
    create table idempotency_keys (
      account_id uuid not null references users(id) on delete cascade,
      key text not null,
      request_hash text not null,
      state text not null check (state in ('IN_FLIGHT', 'DONE')),
      response_status integer,
      response_body text,
      created_at timestamptz not null,
      primary key (account_id, key)
    );
    create index idempotency_keys_created_idx on idempotency_keys (created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table idempotency_keys, ride_status_history, rides, package_status_history, packages`.execute(db);
}
