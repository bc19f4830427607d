// Kysely reads of drivers (their profile, availability, position and rating together). Each column group
// has its writer: profile fields profiles/, availability and active job jobs/driver-claims, position
// matching/, rating ratings/.
import type { DB } from '../../db/database.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';

const DRIVER_COLUMNS = [
  'u.id',
  'u.first_name',
  'u.last_name',
  'u.phone',
  'u.created_at',
  'dp.vehicle_type',
  'dp.vehicle_plate',
  'dp.service_types',
  'dp.company_id',
  'dp.availability',
  'dp.rating',
  'dp.last_lat',
  'dp.last_lng',
  'dp.last_heading',
  'dp.last_speed',
  'dp.last_location_at',
  'dp.active_job_id',
] as const;

export class DriversRepository {
  constructor(private readonly db: DB) {}

  private drivers() {
    return this.db
      .selectFrom('driver_profiles as dp')
      .innerJoin('users as u', 'u.id', 'dp.user_id')
      .select(DRIVER_COLUMNS);
  }

  /** The ids of every driver of a company (the live map's filter). */
  async driverIdsOfCompany(companyId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('driver_profiles')
      .select('user_id')
      .where('company_id', '=', companyId)
      .execute();
    return rows.map((r) => r.user_id);
  }

  getDriver(id: string) {
    return this.drivers().where('dp.user_id', '=', id).executeTakeFirst();
  }

  listCompanyDrivers(companyId: string, limit: number, cursor: Cursor | undefined) {
    let query = this.drivers().where('dp.company_id', '=', companyId);
    if (cursor) query = query.where(beforeCursor(cursor, 'u.created_at', 'u.id'));
    return query
      .orderBy('u.created_at', 'desc')
      .orderBy('u.id', 'desc')
      .limit(limit + 1)
      .execute();
  }

  userStatus(id: string) {
    return this.db.selectFrom('users').select(['status', 'role']).where('id', '=', id).executeTakeFirst();
  }
}

export type DriverRow = NonNullable<Awaited<ReturnType<DriversRepository['getDriver']>>>;
