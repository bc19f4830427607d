// Routes (contract section 24): a driver holds up to max_active_jobs packages at once. The claim counts
// them on the driver's row (active_jobs, changed only under that row's lock, so concurrent claims and
// releases never lose a count); vehicle capacities are admin-set; a driver's route keeps the order of
// its pending stops and a version that every change of the route bumps: the reorder itself, and (by
// the trigger below, in the same statement as the job's change) a job assigned, a stop done, a job
// ended or handed back.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table driver_profiles
      add column max_active_jobs integer not null default 1 check (max_active_jobs between 1 and 20),
      add column active_jobs integer not null default 0 check (active_jobs >= 0);
    update driver_profiles set active_jobs = 1 where active_job_id is not null;

    create table vehicle_capacities (
      vehicle_type text primary key check (vehicle_type in ('BIKE', 'CAR', 'VAN', 'TRUCK')),
      parcels integer not null check (parcels between 1 and 10000),
      kg double precision not null check (kg > 0 and kg <= 100000),
      updated_at timestamptz not null default now()
    );
    insert into vehicle_capacities (vehicle_type, parcels, kg) values
      ('BIKE', 6, 20), ('CAR', 20, 200), ('VAN', 60, 800), ('TRUCK', 200, 5000);

    create table driver_routes (
      driver_id uuid primary key references users(id) on delete cascade,
      version integer not null default 1,
      -- The driver's chosen order of its pending stops (stop ids); stops not in it follow in the default order.
      stop_order jsonb not null default '[]',
      updated_at timestamptz not null default now()
    );

    create function driver_route_bump() returns trigger language plpgsql as $$
    begin
      if new.driver_id is not null then
        insert into driver_routes (driver_id, version) values (new.driver_id, 1)
          on conflict (driver_id) do update set version = driver_routes.version + 1;
      end if;
      if old.driver_id is not null and old.driver_id is distinct from new.driver_id then
        insert into driver_routes (driver_id, version) values (old.driver_id, 1)
          on conflict (driver_id) do update set version = driver_routes.version + 1;
      end if;
      return new;
    end $$;
    -- BEFORE: the route's row is locked before the driver's profile in every statement that changes a job
    -- (the job, then the route, then the driver: one order, no deadlock).
    create trigger packages_route_bump before update of status, driver_id on packages
      for each row when (old.status is distinct from new.status or old.driver_id is distinct from new.driver_id)
      execute function driver_route_bump();
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop trigger packages_route_bump on packages;
    drop function driver_route_bump();
    drop table driver_routes, vehicle_capacities;
    alter table driver_profiles drop column max_active_jobs, drop column active_jobs;
  `.execute(db);
}
