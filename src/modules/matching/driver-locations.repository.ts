// Kysely queries of the live driver index (live-drivers.ts): its load, one driver's reload, and the
// write-behind of positions. Hot paths (a load of 100k drivers, a batch per second): measure a change.
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { VehicleType } from '../../db/schema.js';
import { SERVICE_BITS, type Position } from './driver-index.js';

/**
 * A driver as the index reads it. Computed in SQL into numbers and booleans: parsing the text[] of
 * service types and the timestamp of every row was most of what a load of 100k drivers allocated
 * (bench/RESULTS.md, 11-26 night), and that garbage kept the loaded process ~70 MB larger for seconds.
 */
export interface LiveRow {
  user_id: string;
  first_name: string;
  active: boolean;
  country_id: string | null;
  vehicle_type: VehicleType;
  vehicle_plate: string;
  service_mask: number;
  online: boolean;
  rating: number | null;
  last_lat: number | null;
  last_lng: number | null;
  last_heading: number | null;
  last_speed: number | null;
  /** Milliseconds since the epoch, whole (as a Date of the timestamp would give: truncated, then rounded, exact on any PostgreSQL). */
  last_location_ms: number | null;
  busy: boolean;
  active_jobs: number;
  max_active_jobs: number;
  active_job_type: 'PACKAGE' | 'RIDE' | null;
}

/** The driver's service types as the index's mask (SERVICE_BITS), computed by PostgreSQL. */
const SERVICE_MASK = sql.join(
  Object.entries(SERVICE_BITS).map(
    ([type, bit]) => sql`(case when ${type} = any(dp.service_types) then ${sql.lit(bit)} else 0 end)`,
  ),
  sql` + `,
);

export class DriverLocationsRepository {
  constructor(private readonly db: DB) {}

  /** A page of drivers in user_id order, after `after` (from the first without it). */
  async listPage(limit: number, after: string | undefined): Promise<LiveRow[]> {
    let query = this.live().orderBy('dp.user_id').limit(limit);
    if (after !== undefined) query = query.where('dp.user_id', '>', after);
    return (await query.execute()) as LiveRow[];
  }

  async getById(driverId: string): Promise<LiveRow | undefined> {
    return (await this.live().where('dp.user_id', '=', driverId).executeTakeFirst()) as LiveRow | undefined;
  }

  /**
   * One statement for the batch: each driver's position where it is not older than the stored one (a
   * second position in the same whole second, as OsmAnd stamps them, is the newer one), and a point
   * of the trip of its ride in progress (its final fare is priced from it).
   */
  async writePositions(batch: [string, Position][]): Promise<void> {
    // Six array parameters in PostgreSQL's text form instead of six parameters per row: building
    // and sending thousands of parameters cost more CPU than the ingestion itself (profiled).
    const ids: string[] = [];
    const lats: number[] = [];
    const lngs: number[] = [];
    const headings: (number | string)[] = [];
    const speeds: (number | string)[] = [];
    const ats: number[] = [];
    for (const [id, p] of batch) {
      ids.push(id);
      lats.push(p.lat);
      lngs.push(p.lng);
      headings.push(p.heading ?? 'NULL');
      speeds.push(p.speed ?? 'NULL');
      ats.push(p.at);
    }
    const array = (values: unknown[]) => `{${values.join(',')}}`;
    await sql`
          with v as (
            select id, lat, lng, heading, speed, to_timestamp(at_ms / 1000) as at
            from unnest(${array(ids)}::uuid[], ${array(lats)}::float8[], ${array(lngs)}::float8[], ${array(headings)}::float8[],
                        ${array(speeds)}::float8[], ${array(ats)}::float8[]) as u(id, lat, lng, heading, speed, at_ms)
          ), moved as (
            update driver_profiles as d
            set last_lat = v.lat, last_lng = v.lng, last_heading = v.heading, last_speed = v.speed, last_location_at = v.at
            from v
            where d.user_id = v.id and (d.last_location_at is null or d.last_location_at <= v.at)
          )
          insert into ride_positions (ride_id, lat, lng, at)
          select r.id, v.lat, v.lng, v.at from v join rides r on r.driver_id = v.id and r.status = 'IN_PROGRESS'
        `.execute(this.db);
  }

  private live() {
    return this.db
      .selectFrom('driver_profiles as dp')
      .innerJoin('users as u', 'u.id', 'dp.user_id')
      .select([
        'dp.user_id',
        'u.first_name',
        sql<boolean>`u.status = 'ACTIVE'`.as('active'),
        'u.country_id',
        'dp.vehicle_type',
        'dp.vehicle_plate',
        sql<number>`${SERVICE_MASK}`.as('service_mask'),
        sql<boolean>`dp.availability = 'ONLINE'`.as('online'),
        'dp.rating',
        'dp.last_lat',
        'dp.last_lng',
        'dp.last_heading',
        'dp.last_speed',
        sql<
          number | null
        >`round(extract(epoch from date_trunc('milliseconds', dp.last_location_at)) * 1000)::float8`.as(
          'last_location_ms',
        ),
        // Full (section 24): on a ride, or holding max_active_jobs jobs (a job claimed before the count existed counts as one).
        sql<boolean>`dp.active_job_type = 'RIDE' or greatest(dp.active_jobs, (dp.active_job_id is not null)::int) >= dp.max_active_jobs`.as(
          'busy',
        ),
        sql<number>`greatest(dp.active_jobs, (dp.active_job_id is not null)::int)`.as('active_jobs'),
        'dp.max_active_jobs',
        'dp.active_job_type',
      ]);
  }
}
