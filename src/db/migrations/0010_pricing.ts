// Tariffs per country and vehicle type (money in the currency's minor unit) and quotes (contract
// section 18). Tariffs are seeded for every seeded country; a country added later gets its tariffs
// through PUT /admin/tariffs.
import { sql, type Kysely } from 'kysely';

/**
 * A car's tariff per country code in the minor unit of its currency (UGX, RWF and XOF have none):
 * base, per km, per minute, minimum, booking fee, cancellation fee.
 */
const CAR: Record<string, [number, number, number, number, number, number]> = {
  KE: [10_000, 4_000, 400, 25_000, 2_000, 10_000],
  NG: [50_000, 15_000, 2_000, 120_000, 10_000, 50_000],
  GH: [800, 300, 40, 2_000, 150, 800],
  UG: [3_000, 1_000, 100, 7_000, 500, 3_000],
  TZ: [200_000, 70_000, 7_000, 500_000, 30_000, 200_000],
  RW: [1_000, 400, 40, 2_500, 200, 1_000],
  ZA: [1_500, 800, 100, 4_000, 300, 2_000],
  EG: [1_500, 600, 100, 3_500, 300, 1_500],
  ET: [6_000, 2_500, 250, 15_000, 1_000, 6_000],
  MA: [800, 350, 40, 2_000, 200, 1_000],
  SN: [500, 250, 25, 1_500, 100, 500],
  CI: [500, 250, 25, 1_500, 100, 500],
  GB: [250, 125, 20, 600, 50, 500],
  US: [250, 150, 30, 800, 100, 500],
  FR: [250, 120, 30, 700, 50, 500],
  DE: [350, 150, 30, 800, 50, 500],
  IN: [4_000, 1_400, 150, 8_000, 1_000, 5_000],
  AE: [1_200, 200, 50, 1_500, 300, 1_000],
};

/** Each vehicle type's tariff as a percentage of the car's (booking fee excepted: the same for all). */
const VEHICLE_PERCENT: Record<string, number> = { BIKE: 60, CAR: 100, VAN: 150, TRUCK: 250 };

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table tariffs (
      country_id uuid not null references countries(id) on delete cascade,
      vehicle_type text not null check (vehicle_type in ('BIKE', 'CAR', 'VAN', 'TRUCK')),
      base integer not null check (base >= 0),
      per_km integer not null check (per_km >= 0),
      per_minute integer not null check (per_minute >= 0),
      minimum integer not null check (minimum >= 0),
      booking_fee integer not null check (booking_fee >= 0),
      cancellation_fee integer not null check (cancellation_fee >= 0),
      version integer not null default 1,
      updated_by uuid references users(id) on delete set null,
      updated_at timestamptz not null default now(),
      primary key (country_id, vehicle_type)
    );

    create table quotes (
      id uuid primary key,
      account_id uuid not null references users(id) on delete cascade,
      kind text not null check (kind in ('PACKAGE', 'RIDE')),
      pickup_lat double precision not null,
      pickup_lng double precision not null,
      dropoff_lat double precision not null,
      dropoff_lng double precision not null,
      vehicle_type text not null,
      country_id uuid not null references countries(id) on delete cascade,
      amount integer not null,
      currency char(3) not null,
      breakdown jsonb not null,
      tariff_version integer not null,
      surge double precision not null,
      inputs jsonb not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      consumed_at timestamptz
    );
    create index quotes_unconsumed_expiry_idx on quotes (expires_at) where consumed_at is null;
  `.execute(db);

  const countries = await sql<{ id: string; code: string }>`select id, code from countries`.execute(db);
  for (const { id, code } of countries.rows) {
    const car = CAR[code.trim()];
    if (!car) continue;
    for (const [vehicleType, percent] of Object.entries(VEHICLE_PERCENT)) {
      const [base, perKm, perMinute, minimum, bookingFee, cancellationFee] = car.map((v, i) =>
        i === 4 ? v : Math.round((v * percent) / 100),
      );
      await sql`insert into tariffs (country_id, vehicle_type, base, per_km, per_minute, minimum, booking_fee, cancellation_fee)
        values (${id}, ${vehicleType}, ${base}, ${perKm}, ${perMinute}, ${minimum}, ${bookingFee}, ${cancellationFee})`.execute(
        db,
      );
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table quotes, tariffs`.execute(db);
}
