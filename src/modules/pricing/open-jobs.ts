// The demand side of surge: jobs waiting for a driver (PENDING packages, REQUESTED rides). Read once
// per SURGE_INTERVAL (by one instance when Redis is configured) through the partial indexes on their
// pickup points, rather than counted in memory from events: the database is the one truth every
// instance shares, nothing needs wiring into job creation, and a restart loses nothing.
import { sql, type Kysely } from 'kysely';
import type { Database, VehicleType } from '../../db/schema.js';
import type { OpenJob } from './surge.js';

export async function openJobsFromDatabase(db: Kysely<Database>): Promise<OpenJob[]> {
  const { rows } = await sql<{ vehicle_type: VehicleType; lat: number; lng: number }>`
    select vehicle_type, pickup_lat as lat, pickup_lng as lng from packages where status = 'PENDING'
    union all
    select vehicle_type, pickup_lat as lat, pickup_lng as lng from rides where status = 'REQUESTED'
  `.execute(db);
  return rows.map((r) => ({ vehicleType: r.vehicle_type, lat: r.lat, lng: r.lng }));
}
