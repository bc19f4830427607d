// The demand side of surge: jobs waiting for a driver (PENDING packages, REQUESTED rides), with the
// account that created each. Read once per SURGE_INTERVAL (by one instance when Redis is configured)
// through the partial indexes on their pickup points, rather than counted in memory from events: the
// database is the one truth every instance shares, nothing needs wiring into job creation, and a
// restart loses nothing.
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { VehicleType } from '../../db/schema.js';
import type { OpenJob } from './surge.js';

export class OpenJobsRepository {
  constructor(private readonly db: DB) {}

  /** The open jobs created at or before `createdBefore` (younger ones do not count yet: surge.ts). */
  async waiting(createdBefore: Date): Promise<OpenJob[]> {
    const { rows } = await sql<{ vehicle_type: VehicleType; account_id: string; lat: number; lng: number }>`
      select vehicle_type, created_by as account_id, pickup_lat as lat, pickup_lng as lng from packages
        where status = 'PENDING' and created_at <= ${createdBefore}
      union all
      select vehicle_type, customer_id as account_id, pickup_lat as lat, pickup_lng as lng from rides
        where status = 'REQUESTED' and created_at <= ${createdBefore}
    `.execute(this.db);
    return rows.map((r) => ({ vehicleType: r.vehicle_type, accountId: r.account_id, lat: r.lat, lng: r.lng }));
  }
}
