// Profiles: a driver's profile fields (vehicle, plate, services), the business's and the company's own.
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { notFound } from '../../shared/errors.js';
import type { DriversService } from '../drivers/drivers.service.js';
import type { PatchDriverBody } from '../drivers/drivers.schemas.js';
import type { LiveDrivers } from '../matching/live-drivers.js';
import type { ProfilesRepository } from './profiles.repository.js';

const iso = (d: Date | string) => new Date(d).toISOString();

type BusinessRow = NonNullable<Awaited<ReturnType<ProfilesRepository['getBusiness']>>>;
type CompanyRow = NonNullable<Awaited<ReturnType<ProfilesRepository['getCompany']>>>;

const toBusiness = (r: BusinessRow) => ({
  id: r.id,
  businessName: r.business_name,
  businessAddress: r.business_address,
  email: r.email,
  phone: r.phone,
  firstName: r.first_name,
  lastName: r.last_name,
  countryId: r.country_id,
  status: r.status,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const toCompany = (r: CompanyRow) => ({
  id: r.id,
  companyName: r.company_name,
  email: r.email,
  phone: r.phone,
  firstName: r.first_name,
  lastName: r.last_name,
  countryId: r.country_id,
  status: r.status,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

export class ProfilesService {
  constructor(
    private readonly deps: {
      repo: ProfilesRepository;
      /** The driver as answered (availability, position and rating beside the profile). */
      drivers: Pick<DriversService, 'getDriver'>;
      live: Pick<LiveDrivers, 'reload'>;
      bus: Bus;
      clock: Clock;
    },
  ) {}

  async updateDriver(id: string, patch: PatchDriverBody) {
    await this.deps.drivers.getDriver(id);
    await this.deps.repo.updateDriver(id, patch, this.deps.clock.now());
    // Reloaded here before answering; the other instances reload it when the event reaches them.
    await this.deps.live.reload(id);
    this.deps.bus.publishToOthers('driver.changed', { driverId: id });
    return this.deps.drivers.getDriver(id);
  }

  async getBusiness(id: string) {
    const row = await this.deps.repo.getBusiness(id);
    if (!row) throw notFound('Business profile not found', 'BUSINESS_NOT_FOUND');
    return toBusiness(row);
  }

  /** No profile: the update changes nothing and the read answers 404. */
  async updateBusiness(id: string, patch: { businessName?: string; businessAddress?: string | null }) {
    await this.deps.repo.updateBusiness(id, patch, this.deps.clock.now());
    return this.getBusiness(id);
  }

  async getCompany(id: string) {
    const row = await this.deps.repo.getCompany(id);
    if (!row) throw notFound('Company profile not found', 'COMPANY_NOT_FOUND');
    return toCompany(row);
  }

  /** No profile: the update changes nothing and the read answers 404. */
  async updateCompany(id: string, companyName: string) {
    await this.deps.repo.updateCompany(id, companyName, this.deps.clock.now());
    return this.getCompany(id);
  }
}
