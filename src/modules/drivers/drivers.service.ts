// A driver as the driver and the company see it, availability and position rules (the profile's
// changes are profiles/').
import type { DB } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toPage } from '../../shared/pagination.js';
import { setAvailability, setOfflineOnSignOut } from '../jobs/driver-claims.repository.js';
import { newerPosition } from '../matching/driver-index.js';
import type { LiveDrivers } from '../matching/live-drivers.js';
import type { PositionIntake } from './position-intake.js';
import type { DriverRow, DriversRepository } from './drivers.repository.js';
import type { LocationBody } from './drivers.schemas.js';

export class DriversService {
  constructor(
    private readonly deps: {
      /** For the availability's statements (jobs/driver-claims.repository: the claim's columns). */
      db: DB;
      clock: Clock;
      repo: DriversRepository;
      live: LiveDrivers;
      positions: PositionIntake;
    },
  ) {}

  async getDriver(id: string) {
    const row = await this.deps.repo.getDriver(id);
    if (!row) throw notFound('Driver profile not found', 'DRIVER_NOT_FOUND');
    return this.toResponse(row);
  }

  /**
   * ONLINE needs an ACTIVE account (the guard) and, for a company driver, an ACTIVE company.
   * OFFLINE is refused while the driver has an active job: the job must end (or be failed) first.
   */
  async setAvailability(id: string, status: 'ONLINE' | 'OFFLINE') {
    const row = await this.deps.repo.getDriver(id);
    if (!row) throw notFound('Driver profile not found', 'DRIVER_NOT_FOUND');
    if (status === 'ONLINE' && row.company_id) {
      const company = await this.deps.repo.userStatus(row.company_id);
      if (company?.status !== 'ACTIVE') throw conflict('Your company account is not active', 'COMPANY_NOT_ACTIVE');
    }
    if (status === 'OFFLINE' && row.active_job_id) {
      throw conflict('Cannot go offline during an active job', 'DRIVER_HAS_ACTIVE_JOB');
    }
    if (row.availability !== status && !(await setAvailability(this.deps.db, id, status, this.deps.clock.now()))) {
      // An accept committed between the read above and this write.
      throw conflict('Cannot go offline during an active job', 'DRIVER_HAS_ACTIVE_JOB');
    }
    await this.deps.live.ensure(id);
    this.deps.live.setOnline(id, status === 'ONLINE');
    return this.toResponse({ ...row, availability: status });
  }

  /** The driver signed out (POST /auth/logout): OFFLINE, here at once and on the other instances. */
  async signedOut(id: string): Promise<void> {
    if (!(await setOfflineOnSignOut(this.deps.db, id, this.deps.clock.now()))) return;
    await this.deps.live.ensure(id);
    this.deps.live.setOnline(id, false);
  }

  /** A company's drivers, newest first. */
  async listCompanyDrivers(companyId: string, query: { limit?: number; cursor?: string }) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.listCompanyDrivers(companyId, limit, decodeCursor(query.cursor));
    return toPage(
      rows.map((r) => ({ ...r, createdAt: new Date(r.created_at) })),
      limit,
      (r) => this.toResponse(r),
    );
  }

  async reportLocation(id: string, body: LocationBody): Promise<void> {
    const rec = await this.deps.live.ensure(id);
    if (!rec) throw notFound('Driver profile not found', 'DRIVER_NOT_FOUND');
    this.deps.positions.report(id, body, 'http');
  }

  toResponse(row: DriverRow) {
    const p = newerPosition(this.deps.live.index.get(row.id)?.position, row);
    const location = p && {
      lat: p.lat,
      lng: p.lng,
      heading: p.heading,
      speed: p.speed,
      updatedAt: new Date(p.at).toISOString(),
    };
    return {
      id: row.id,
      firstName: row.first_name,
      lastName: row.last_name,
      phone: row.phone,
      vehicleType: row.vehicle_type,
      vehiclePlate: row.vehicle_plate,
      serviceTypes: row.service_types,
      companyId: row.company_id,
      availability: row.availability,
      location,
      rating: row.rating,
      createdAt: new Date(row.created_at).toISOString(),
    };
  }
}
