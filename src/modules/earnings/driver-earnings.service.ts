// One driver's earnings report for someone else (contract section 21): an admin for any driver, a
// company for its own drivers only. The report is the driver's own (EarningsService.driver).
import type { Role } from '../../db/schema.js';
import { notFound } from '../../shared/errors.js';
import type { DriversRepository } from '../drivers/drivers.repository.js';
import type { EarningsQuery, DriverEarningsResponse } from './earnings.schemas.js';
import type { EarningsService } from './earnings.service.js';

export class DriverEarningsReports {
  constructor(
    private readonly deps: { drivers: Pick<DriversRepository, 'getDriver'>; earnings: Pick<EarningsService, 'driver'> },
  ) {}

  /**
   * Another company's driver is the same 404 as an unknown id or an account that is no driver
   * (object-level authorization: a company learns nothing of drivers that are not its own).
   */
  async forViewer(
    viewer: { userId: string; role: Role },
    driverId: string,
    query: EarningsQuery,
  ): Promise<DriverEarningsResponse> {
    const driver = await this.deps.drivers.getDriver(driverId);
    if (!driver || (viewer.role !== 'ADMIN' && driver.company_id !== viewer.userId))
      throw notFound('Driver not found', 'DRIVER_NOT_FOUND');
    return this.deps.earnings.driver(driverId, query);
  }
}
