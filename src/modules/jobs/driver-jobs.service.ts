// The driver's view of work: its active and recent jobs, and open jobs near its last position.
import type { VehicleType } from '../../db/schema.js';
import { conflict, notFound } from '../../shared/errors.js';
import { distanceMeters, newerPosition, type DriverIndex } from '../matching/driver-index.js';
import { json } from '../../db/json.js';
import { boundingBox, roundArea } from './driver-claims.js';
import type { ParcelJson, StopJson } from '../../db/tables/jobs.js';
import type { DriverJobsRepository } from './driver-jobs.repository.js';

const RECENT_JOBS = 20;

interface Job {
  jobType: 'PACKAGE' | 'RIDE';
  id: string;
  status: string;
  orderType: 'PACKAGE_DELIVERY' | 'RIDE';
  vehicleType: VehicleType;
  pickupLocation: { lat: number; lng: number };
  destinationLocation: { lat: number; lng: number };
  createdAt: string;
  updatedAt: string;
}

export class DriverJobsService {
  constructor(private readonly deps: { repo: DriverJobsRepository; driverIndex: DriverIndex }) {}

  async myJobs(driverId: string) {
    const { repo } = this.deps;
    const profile = await repo.activeJob(driverId);
    if (!profile) throw notFound('Driver profile not found', 'DRIVER_NOT_FOUND');
    const [packages, rides] = await Promise.all([
      repo.recentPackages(driverId, RECENT_JOBS),
      repo.recentRides(driverId, RECENT_JOBS),
    ]);
    const jobs: Job[] = [
      ...packages.map((p) => {
        const pickup = json<StopJson>(p.pickup);
        const dropoff = json<StopJson>(p.dropoff);
        return {
          jobType: 'PACKAGE' as const,
          id: p.id,
          status: p.status,
          orderType: 'PACKAGE_DELIVERY' as const,
          vehicleType: p.vehicle_type,
          pickupLocation: pickup.location,
          destinationLocation: dropoff.location,
          createdAt: p.created_at.toISOString(),
          updatedAt: p.updated_at.toISOString(),
        };
      }),
      ...rides.map((r) => ({
        jobType: 'RIDE' as const,
        id: r.id,
        status: r.status,
        orderType: 'RIDE' as const,
        vehicleType: r.vehicle_type,
        pickupLocation: { lat: r.pickup_lat, lng: r.pickup_lng },
        destinationLocation: { lat: r.destination_lat, lng: r.destination_lng },
        createdAt: r.created_at.toISOString(),
        updatedAt: r.updated_at.toISOString(),
      })),
    ].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
    const active = jobs.find((j) => j.id === profile.active_job_id) ?? null;
    return { active, recent: jobs.filter((j) => j !== active).slice(0, RECENT_JOBS) };
  }

  /** PENDING packages and REQUESTED rides within the radius that fit the driver's vehicle and services. */
  async nearby(driverId: string, radiusMeters: number, limit: number) {
    const { repo } = this.deps;
    const driver = await repo.matchProfile(driverId);
    if (!driver) throw notFound('Driver profile not found', 'DRIVER_NOT_FOUND');
    // The stored copy is written behind (about a second late): a position just reported is in the index.
    const position = newerPosition(this.deps.driverIndex.get(driverId)?.position, driver);
    if (!position) throw conflict('Driver location is unknown: send a location first', 'LOCATION_UNKNOWN');
    const { lat, lng } = position;
    const box = boundingBox(lat, lng, radiusMeters);
    // The bounding box narrows on the partial indexes; the exact distance is checked below.
    const candidates = Math.min(limit * 5, 500);
    const search = { driverId, vehicleType: driver.vehicle_type, lat, lng, box, limit: candidates };
    const [packages, rides] = await Promise.all([
      driver.service_types.includes('PACKAGE_DELIVERY') ? repo.openPackagesNear(search) : [],
      driver.service_types.includes('RIDE') ? repo.openRidesNear(search) : [],
    ]);
    const offered = (
      jobType: 'PACKAGE' | 'RIDE',
      row: (typeof rides)[number],
      parcelSize: NonNullable<ParcelJson['size']> | null,
    ) => ({
      jobType,
      id: row.id,
      orderType: jobType === 'PACKAGE' ? ('PACKAGE_DELIVERY' as const) : ('RIDE' as const),
      vehicleType: row.vehicle_type,
      pickupArea: { lat: roundArea(row.pickup_lat), lng: roundArea(row.pickup_lng) },
      parcelSize,
      distanceMeters: Math.round(distanceMeters(lat, lng, row.pickup_lat, row.pickup_lng)),
      createdAt: row.created_at.toISOString(),
    });
    const items = [
      ...packages.map((p) => offered('PACKAGE', p, json<ParcelJson>(p.parcel).size ?? null)),
      ...rides.map((r) => offered('RIDE', r, null)),
    ]
      .filter((j) => j.distanceMeters <= radiusMeters)
      .sort((a, b) => a.distanceMeters - b.distanceMeters)
      .slice(0, limit);
    return { items, radiusMeters };
  }
}
