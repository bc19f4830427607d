// A driver's active jobs (driver_profiles.active_job_*, active_jobs: section 24): claimed with a conditional update in the
// same transaction as the job's status change, released when the job ends. Shared by packages and rides.
import type { DriverIndex } from '../matching/driver-index.js';
import type { OrderType, VehicleType } from '../../db/schema.js';
import type { Bus } from '../../shared/bus.js';
import { AppError, conflict } from '../../shared/errors.js';
import type { Executor } from '../../db/executor.js';
import { claimDriverRow, loadAndCapacity, loadClaimState } from './driver-claims.repository.js';

export { releaseDriver } from './driver-claims.repository.js';

export type JobType = 'PACKAGE' | 'RIDE';

export interface ClaimRequest {
  driverId: string;
  jobType: JobType;
  jobId: string;
  vehicleType: VehicleType;
  orderType: OrderType;
}

/**
 * Claims the driver for the job (in the job's transaction, after the job's row changed): false when
 * the driver may not take it (explainClaimFailure says why). A driver taking a second package or more
 * (section 24) must stay within its vehicle's capacity: 409 OVER_CAPACITY otherwise (the caller's
 * transaction rolls back). Read after the claim holds the driver's row lock, so claims of the same
 * driver see each other. With one job at a time (the default), no capacity applies (section 9 unchanged).
 */
export async function claimDriver(trx: Executor, claim: ClaimRequest, now: Date): Promise<boolean> {
  const counts = await claimDriverRow(trx, claim, now);
  if (!counts) return false;
  if (counts.active_jobs > 1) {
    const load = await loadAndCapacity(trx, claim.driverId);
    if (load && ((load.parcels ?? 0) > load.capacity_parcels || (load.kg ?? 0) > load.capacity_kg + 1e-9))
      throw conflict(
        `This package would put the vehicle over its capacity (${load.capacity_parcels} parcels, ${load.capacity_kg} kg)`,
        'OVER_CAPACITY',
      );
  }
  return true;
}

/** Why claimDriver refused: a 409 (or 404 for a missing driver) the caller can act on. */
export async function explainClaimFailure(db: Executor, claim: ClaimRequest): Promise<AppError> {
  const row = await loadClaimState(db, claim.driverId);
  if (!row) return new AppError(404, 'DRIVER_NOT_FOUND', 'Driver not found');
  if (row.status !== 'ACTIVE') return conflict('Driver account is not active', 'DRIVER_NOT_ACTIVE');
  if (row.active_job_id !== null) {
    if (claim.jobType !== 'PACKAGE' || row.active_job_type !== 'PACKAGE' || row.max_active_jobs <= 1)
      return conflict('Driver already has an active job', 'DRIVER_BUSY');
    if (row.active_jobs >= row.max_active_jobs)
      return conflict(`Driver already holds ${row.active_jobs} jobs, its maximum`, 'DRIVER_BUSY');
  }
  if (row.availability !== 'ONLINE') return conflict('Driver is offline', 'DRIVER_OFFLINE');
  if (row.vehicle_type !== claim.vehicleType)
    return conflict(`This job needs a ${claim.vehicleType}`, 'VEHICLE_TYPE_MISMATCH');
  if (!row.service_types.includes(claim.orderType))
    return conflict(`Driver does not serve ${claim.orderType}`, 'SERVICE_TYPE_MISMATCH');
  return conflict('Driver cannot take this job now', 'DRIVER_NOT_ELIGIBLE');
}

export interface DriverSummaryRow {
  driver_id: string | null;
  driver_first_name: string | null;
  driver_phone: string | null;
  driver_vehicle_type: VehicleType | null;
  driver_vehicle_plate: string | null;
  driver_lat: number | null;
  driver_lng: number | null;
  driver_heading: number | null;
  driver_speed: number | null;
  driver_location_at: Date | null;
  driver_company_id: string | null;
  driver_rating: number | null;
  driver_rating_count: number | null;
}

/** The columns of DriverSummaryRow, for a query with `du` (users) and `dp` (driver_profiles) joined on the driver. */
export const DRIVER_SUMMARY_COLUMNS = [
  'du.first_name as driver_first_name',
  'du.phone as driver_phone',
  'dp.vehicle_type as driver_vehicle_type',
  'dp.vehicle_plate as driver_vehicle_plate',
  'dp.last_lat as driver_lat',
  'dp.last_lng as driver_lng',
  'dp.last_heading as driver_heading',
  'dp.last_speed as driver_speed',
  'dp.last_location_at as driver_location_at',
  'dp.company_id as driver_company_id',
  'dp.rating as driver_rating',
  'dp.rating_count as driver_rating_count',
] as const;

export function toDriverSummary(row: DriverSummaryRow) {
  if (!row.driver_id || !row.driver_vehicle_type) return null;
  return {
    id: row.driver_id,
    firstName: row.driver_first_name ?? '',
    phone: row.driver_phone ?? '',
    vehicleType: row.driver_vehicle_type,
    vehiclePlate: row.driver_vehicle_plate ?? '',
    rating: row.driver_rating,
    ratingCount: row.driver_rating_count ?? 0,
    location:
      row.driver_lat !== null && row.driver_lng !== null && row.driver_location_at
        ? {
            lat: row.driver_lat,
            lng: row.driver_lng,
            heading: row.driver_heading,
            speed: row.driver_speed,
            updatedAt: row.driver_location_at.toISOString(),
          }
        : null,
  };
}

const METERS_PER_DEGREE = 111_320;

export function boundingBox(lat: number, lng: number, radiusMeters: number) {
  const dLat = radiusMeters / METERS_PER_DEGREE;
  const cos = Math.max(Math.cos((lat * Math.PI) / 180), 0.01);
  const dLng = Math.min(radiusMeters / (METERS_PER_DEGREE * cos), 180);
  return { minLat: lat - dLat, maxLat: lat + dLat, minLng: lng - dLng, maxLng: lng + dLng };
}

/** Pickup area shown before a job is taken: coordinates rounded to 3 decimals (about 100 m). */
export const roundArea = (value: number) => Math.round(value * 1000) / 1000;

export const NEARBY_RADIUS_METERS = 5000;
const MAX_PUSHES_PER_JOB = 200;

/** Pushes a new job to the eligible drivers nearest its pickup, from the live index (no query). */
export function pushNearbyJob(
  deps: { index: DriverIndex; bus: Bus; now: Date; locationTtlMs: number },
  job: {
    jobType: JobType;
    jobId: string;
    vehicleType: VehicleType;
    orderType: OrderType;
    lat: number;
    lng: number;
    parcelSize: string | null;
  },
): number {
  const drivers = deps.index.nearest({
    lat: job.lat,
    lng: job.lng,
    radiusMeters: NEARBY_RADIUS_METERS,
    limit: MAX_PUSHES_PER_JOB,
    vehicleType: job.vehicleType,
    orderType: job.orderType,
    staleBefore: deps.now.getTime() - deps.locationTtlMs,
  });
  for (const { driver, distanceMeters } of drivers) {
    deps.bus.publish('driver.push', {
      driverId: driver.id,
      message: {
        type: 'job.nearby',
        jobType: job.jobType,
        jobId: job.jobId,
        orderType: job.orderType,
        vehicleType: job.vehicleType,
        pickupArea: { lat: roundArea(job.lat), lng: roundArea(job.lng) },
        parcelSize: job.parcelSize,
        distanceMeters: Math.round(distanceMeters),
      },
    });
  }
  return drivers.length;
}
