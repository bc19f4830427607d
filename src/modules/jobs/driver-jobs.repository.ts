// The driver's view of work in SQL: its profile's job and position, its recent jobs, open jobs near it.
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { VehicleType } from '../../db/schema.js';

export interface NearSearch {
  driverId: string;
  vehicleType: VehicleType;
  lat: number;
  lng: number;
  box: { minLat: number; maxLat: number; minLng: number; maxLng: number };
  limit: number;
}

const NEAR_COLUMNS = ['id', 'vehicle_type', 'pickup_lat', 'pickup_lng', 'created_at'] as const;

// The bounding box narrows on the partial indexes; the caller checks the exact distance.
const inBox = ({ box }: NearSearch) =>
  sql<boolean>`pickup_lat between ${box.minLat} and ${box.maxLat} and pickup_lng between ${box.minLng} and ${box.maxLng}`;
const byDistance = ({ lat, lng }: NearSearch) =>
  sql`(pickup_lat - ${lat}) * (pickup_lat - ${lat}) + (pickup_lng - ${lng}) * (pickup_lng - ${lng})`;
// A job this driver released can never be its again (section 13): not shown.
const notReleased = (table: 'packages' | 'rides', driverId: string) =>
  sql<boolean>`not exists (select 1 from dispatch_releases r where r.job_id = ${sql.ref(`${table}.id`)} and r.driver_id = ${driverId})`;

/** Booked for later (section 22): not open to drivers until it enters dispatch at start − lead. */
const notScheduled = (table: 'packages' | 'rides') =>
  sql<boolean>`not exists (select 1 from dispatch_jobs d where d.job_id = ${sql.ref(`${table}.id`)} and d.state = 'SCHEDULED')`;

export class DriverJobsRepository {
  constructor(private readonly db: DB) {}

  activeJob(driverId: string) {
    return this.db
      .selectFrom('driver_profiles')
      .select(['active_job_id'])
      .where('user_id', '=', driverId)
      .executeTakeFirst();
  }

  recentPackages(driverId: string, limit: number) {
    return this.db
      .selectFrom('packages')
      .select(['id', 'status', 'vehicle_type', 'pickup', 'dropoff', 'created_at', 'updated_at'])
      .where('driver_id', '=', driverId)
      .orderBy('updated_at', 'desc')
      .limit(limit)
      .execute();
  }

  recentRides(driverId: string, limit: number) {
    return this.db
      .selectFrom('rides')
      .select([
        'id',
        'status',
        'vehicle_type',
        'pickup_lat',
        'pickup_lng',
        'destination_lat',
        'destination_lng',
        'created_at',
        'updated_at',
      ])
      .where('driver_id', '=', driverId)
      .orderBy('updated_at', 'desc')
      .limit(limit)
      .execute();
  }

  /** What matching a driver to open jobs needs: vehicle, services and the stored position. */
  matchProfile(driverId: string) {
    return this.db
      .selectFrom('driver_profiles')
      .select([
        'vehicle_type',
        'service_types',
        'last_lat',
        'last_lng',
        'last_heading',
        'last_speed',
        'last_location_at',
      ])
      .where('user_id', '=', driverId)
      .executeTakeFirst();
  }

  /** Open packages near the driver; one paid by M-Pesa only once PAID (section 26). */
  openPackagesNear(q: NearSearch) {
    return this.db
      .selectFrom('packages')
      .select([...NEAR_COLUMNS, 'parcel'])
      .where('status', '=', 'PENDING')
      .where('vehicle_type', '=', q.vehicleType)
      .where(inBox(q))
      .where(notReleased('packages', q.driverId))
      .where(notScheduled('packages'))
      .where((eb) => eb.or([eb('payment_method', '<>', 'MPESA'), eb('payment_state', '=', 'PAID')]))
      .orderBy(byDistance(q))
      .limit(q.limit)
      .execute();
  }

  openRidesNear(q: NearSearch) {
    return this.db
      .selectFrom('rides')
      .select(NEAR_COLUMNS)
      .where('status', '=', 'REQUESTED')
      .where('vehicle_type', '=', q.vehicleType)
      .where(inBox(q))
      .where(notReleased('rides', q.driverId))
      .where(notScheduled('rides'))
      .orderBy(byDistance(q))
      .limit(q.limit)
      .execute();
  }
}
