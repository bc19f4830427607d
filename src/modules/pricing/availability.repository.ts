// What a quote's availability (contract section 22) is read from: drivers of the vehicle type active
// in the area in the last 7 days (their last position, or a job they took there), and an hour's
// supply and demand a week before (jobs created in the area that hour, drivers who took them).
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { VehicleType } from '../../db/schema.js';

export interface Box {
  south: number;
  west: number;
  north: number;
  east: number;
}

export class AvailabilityRepository {
  constructor(private readonly db: DB) {}

  /** Whether a driver of `vehicleType` was active in the box since `since`. */
  async activeSince(box: Box, vehicleType: VehicleType, since: Date): Promise<boolean> {
    const { rows } = await sql<{ active: boolean }>`
      select exists (
        select 1 from driver_profiles dp
        where dp.vehicle_type = ${vehicleType} and dp.last_location_at >= ${since}
          and dp.last_lat between ${box.south} and ${box.north} and dp.last_lng between ${box.west} and ${box.east}
      ) or exists (
        select 1 from packages p
        where p.vehicle_type = ${vehicleType} and p.driver_id is not null and p.created_at >= ${since}
          and p.pickup_lat between ${box.south} and ${box.north} and p.pickup_lng between ${box.west} and ${box.east}
      ) or exists (
        select 1 from rides r
        where r.vehicle_type = ${vehicleType} and r.driver_id is not null and r.created_at >= ${since}
          and r.pickup_lat between ${box.south} and ${box.north} and r.pickup_lng between ${box.west} and ${box.east}
      ) as active`.execute(this.db);
    return Boolean(rows[0]?.active);
  }

  /** The jobs created in the box in [from, to) (demand) and the distinct drivers who took them (supply). */
  async hour(box: Box, vehicleType: VehicleType, from: Date, to: Date): Promise<{ demand: number; supply: number }> {
    const { rows } = await sql<{ demand: number; supply: number }>`
      select count(*)::int as demand, count(distinct driver_id)::int as supply from (
        select driver_id from packages
        where vehicle_type = ${vehicleType} and created_at >= ${from} and created_at < ${to}
          and pickup_lat between ${box.south} and ${box.north} and pickup_lng between ${box.west} and ${box.east}
        union all
        select driver_id from rides
        where vehicle_type = ${vehicleType} and created_at >= ${from} and created_at < ${to}
          and pickup_lat between ${box.south} and ${box.north} and pickup_lng between ${box.west} and ${box.east}
      ) j`.execute(this.db);
    return { demand: rows[0]?.demand ?? 0, supply: rows[0]?.supply ?? 0 };
  }
}
