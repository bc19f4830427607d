// Prices on jobs (contract section 18): the price each package and ride was created with (and what it
// came from, to recompute it), the cancellation fee, a ride's final fare and the positions its driver
// reported while it was IN_PROGRESS, and when a package reached its final status (statements).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    alter table packages
      add column price_amount integer check (price_amount >= 0),
      add column price_currency text,
      add column quote_id uuid,
      add column tariff_version integer,
      add column surge double precision,
      add column price_breakdown jsonb,
      add column price_inputs jsonb,
      add column cancellation_fee integer check (cancellation_fee >= 0),
      add column finished_at timestamptz;
    update packages p set finished_at = (select max(h.at) from package_status_history h where h.package_id = p.id and h.status = p.status)
      where p.status in ('DELIVERED', 'FAILED', 'CANCELLED');
    create index packages_business_finished_idx on packages (business_id, finished_at) where finished_at is not null;

    alter table rides
      add column price_amount integer check (price_amount >= 0),
      add column price_currency text,
      add column quote_id uuid,
      add column tariff_version integer,
      add column surge double precision,
      add column price_breakdown jsonb,
      add column price_inputs jsonb,
      add column cancellation_fee integer check (cancellation_fee >= 0),
      add column fare_amount integer check (fare_amount >= 0),
      add column fare_detail jsonb;
    create index rides_in_progress_driver_idx on rides (driver_id) where status = 'IN_PROGRESS';

    -- A quote locks one job: two jobs can never carry the same quote.
    create unique index packages_quote_idx on packages (quote_id) where quote_id is not null;
    create unique index rides_quote_idx on rides (quote_id) where quote_id is not null;

    -- Deleting an account cascades to its quotes: without this index each deleted row scanned them all
    -- (seen in the B10 bench's clean-up: 100k accounts against 67k quotes ran for minutes).
    create index quotes_account_idx on quotes (account_id);

    create table ride_positions (
      ride_id uuid not null references rides(id) on delete cascade,
      lat double precision not null,
      lng double precision not null,
      at timestamptz not null
    );
    create index ride_positions_ride_idx on ride_positions (ride_id, at);
  `,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    drop table ride_positions;
    drop index quotes_account_idx;
    drop index packages_quote_idx;
    drop index rides_quote_idx;
    drop index packages_business_finished_idx;
    drop index rides_in_progress_driver_idx;
    alter table packages drop column price_amount, drop column price_currency, drop column quote_id, drop column tariff_version,
      drop column surge, drop column price_breakdown, drop column price_inputs, drop column cancellation_fee, drop column finished_at;
    alter table rides drop column price_amount, drop column price_currency, drop column quote_id, drop column tariff_version,
      drop column surge, drop column price_breakdown, drop column price_inputs, drop column cancellation_fee, drop column fare_amount,
      drop column fare_detail;
  `,
    )
    .execute(db);
}
