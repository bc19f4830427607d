// Kysely access to driver, business and company profiles.
import type { DB } from '../../db/database.js';
import type { OrderType, VehicleType } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
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
  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
  ) {}

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

  async updateDriver(
    id: string,
    patch: { vehicleType?: VehicleType; vehiclePlate?: string; serviceTypes?: OrderType[] },
  ) {
    await this.db
      .updateTable('driver_profiles')
      .set({
        ...(patch.vehicleType !== undefined && { vehicle_type: patch.vehicleType }),
        ...(patch.vehiclePlate !== undefined && { vehicle_plate: patch.vehiclePlate }),
        ...(patch.serviceTypes !== undefined && { service_types: patch.serviceTypes }),
        updated_at: this.clock.now(),
      })
      .where('user_id', '=', id)
      .execute();
  }

  /** Going OFFLINE only applies while the driver has no active job (checked in the same statement). */
  async setAvailability(id: string, availability: 'ONLINE' | 'OFFLINE'): Promise<boolean> {
    let q = this.db
      .updateTable('driver_profiles')
      .set({ availability, updated_at: this.clock.now() })
      .where('user_id', '=', id);
    if (availability === 'OFFLINE') q = q.where('active_job_id', 'is', null);
    const result = await q.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Signing out: OFFLINE even during an active job (nobody is behind the phone); whether it was ONLINE. */
  async setOfflineOnSignOut(id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('driver_profiles')
      .set({ availability: 'OFFLINE', updated_at: this.clock.now() })
      .where('user_id', '=', id)
      .where('availability', '=', 'ONLINE')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  userStatus(id: string) {
    return this.db.selectFrom('users').select(['status', 'role']).where('id', '=', id).executeTakeFirst();
  }

  getBusiness(id: string) {
    return this.db
      .selectFrom('business_profiles as b')
      .innerJoin('users as u', 'u.id', 'b.user_id')
      .select([
        'u.id',
        'u.email',
        'u.phone',
        'u.first_name',
        'u.last_name',
        'u.country_id',
        'u.status',
        'u.created_at',
        'b.business_name',
        'b.business_address',
        'b.updated_at',
      ])
      .where('b.user_id', '=', id)
      .executeTakeFirst();
  }

  async updateBusiness(id: string, patch: { businessName?: string; businessAddress?: string | null }) {
    await this.db
      .updateTable('business_profiles')
      .set({
        ...(patch.businessName !== undefined && { business_name: patch.businessName }),
        ...(patch.businessAddress !== undefined && { business_address: patch.businessAddress }),
        updated_at: this.clock.now(),
      })
      .where('user_id', '=', id)
      .execute();
  }

  getCompany(id: string) {
    return this.db
      .selectFrom('company_profiles as c')
      .innerJoin('users as u', 'u.id', 'c.user_id')
      .select([
        'u.id',
        'u.email',
        'u.phone',
        'u.first_name',
        'u.last_name',
        'u.country_id',
        'u.status',
        'u.created_at',
        'c.company_name',
        'c.updated_at',
      ])
      .where('c.user_id', '=', id)
      .executeTakeFirst();
  }

  async updateCompany(id: string, companyName: string) {
    await this.db
      .updateTable('company_profiles')
      .set({ company_name: companyName, updated_at: this.clock.now() })
      .where('user_id', '=', id)
      .execute();
  }
}

export type DriverRow = NonNullable<Awaited<ReturnType<DriversRepository['getDriver']>>>;
