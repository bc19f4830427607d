// Kysely access to the profiles: a driver's profile fields (vehicle, plate, services), businesses' and
// companies' profiles.
import type { Insertable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type {
  BusinessProfilesTable,
  CompanyProfilesTable,
  DriverProfilesTable,
  OrderType,
  VehicleType,
} from '../../db/schema.js';

export class ProfilesRepository {
  constructor(private readonly db: DB) {}

  // The profile a registration creates with its account, in the registration's transaction.

  async insertBusiness(db: Executor, row: Insertable<BusinessProfilesTable>): Promise<void> {
    await db.insertInto('business_profiles').values(row).execute();
  }

  async insertCompany(db: Executor, row: Insertable<CompanyProfilesTable>): Promise<void> {
    await db.insertInto('company_profiles').values(row).execute();
  }

  async insertDriver(db: Executor, row: Insertable<DriverProfilesTable>): Promise<void> {
    await db.insertInto('driver_profiles').values(row).execute();
  }

  async updateDriver(
    id: string,
    patch: { vehicleType?: VehicleType; vehiclePlate?: string; serviceTypes?: OrderType[] },
    now: Date,
  ) {
    await this.db
      .updateTable('driver_profiles')
      .set({
        ...(patch.vehicleType !== undefined && { vehicle_type: patch.vehicleType }),
        ...(patch.vehiclePlate !== undefined && { vehicle_plate: patch.vehiclePlate }),
        ...(patch.serviceTypes !== undefined && { service_types: patch.serviceTypes }),
        updated_at: now,
      })
      .where('user_id', '=', id)
      .execute();
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

  async updateBusiness(id: string, patch: { businessName?: string; businessAddress?: string | null }, now: Date) {
    await this.db
      .updateTable('business_profiles')
      .set({
        ...(patch.businessName !== undefined && { business_name: patch.businessName }),
        ...(patch.businessAddress !== undefined && { business_address: patch.businessAddress }),
        updated_at: now,
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

  async updateCompany(id: string, companyName: string, now: Date) {
    await this.db
      .updateTable('company_profiles')
      .set({ company_name: companyName, updated_at: now })
      .where('user_id', '=', id)
      .execute();
  }
}
