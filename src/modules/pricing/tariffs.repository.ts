// Tariffs and the country fields prices need, in SQL (the service caches them and checks the rules).
import type { Insertable, Updateable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { VehicleType } from '../../db/schema.js';
import type { TariffsTable } from '../../db/tables/pricing.js';

type TariffColumns = Omit<Insertable<TariffsTable>, 'country_id' | 'vehicle_type'> & Updateable<TariffsTable>;

export class TariffsRepository {
  constructor(private readonly db: DB) {}

  country(db: Executor, id: string) {
    return db.selectFrom('countries').select(['id', 'code', 'currency']).where('id', '=', id).executeTakeFirst();
  }

  get(db: Executor, countryId: string, vehicleType: VehicleType) {
    return db
      .selectFrom('tariffs')
      .selectAll()
      .where('country_id', '=', countryId)
      .where('vehicle_type', '=', vehicleType)
      .executeTakeFirst();
  }

  /** Creates or replaces the tariff, its version one up. */
  upsert(countryId: string, vehicleType: VehicleType, columns: TariffColumns) {
    return this.db
      .insertInto('tariffs')
      .values({ country_id: countryId, vehicle_type: vehicleType, ...columns })
      .onConflict((oc) =>
        oc
          .columns(['country_id', 'vehicle_type'])
          .doUpdateSet((eb) => ({ ...columns, version: eb('tariffs.version', '+', 1) })),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  list(filter: { countryId?: string; vehicleType?: VehicleType }) {
    let query = this.db
      .selectFrom('tariffs as t')
      .innerJoin('countries as c', 'c.id', 't.country_id')
      .selectAll('t')
      .select(['c.code', 'c.currency'])
      .orderBy('c.code')
      .orderBy('t.vehicle_type');
    if (filter.countryId) query = query.where('t.country_id', '=', filter.countryId);
    if (filter.vehicleType) query = query.where('t.vehicle_type', '=', filter.vehicleType);
    return query.execute();
  }
}
