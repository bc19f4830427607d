// Kysely queries of the countries table (reference data).
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { CountriesTable } from '../../db/schema.js';

export type CountryRow = Selectable<CountriesTable>;

const COUNTRY_COLUMNS = [
  'id',
  'code',
  'name',
  'currency',
  'dial_code',
  'cod_max',
  'time_zone',
  'default_locale',
  'created_at',
  'updated_at',
] as const;

export class CountriesRepository {
  constructor(private readonly db: DB) {}

  listByName(): Promise<CountryRow[]> {
    return this.db.selectFrom('countries').select(COUNTRY_COLUMNS).orderBy('name').execute();
  }

  async exists(db: Executor, id: string): Promise<boolean> {
    return Boolean(await db.selectFrom('countries').select('id').where('id', '=', id).executeTakeFirst());
  }

  /** The ISO code of the country with `id` (undefined: no such country). */
  async codeOf(id: string): Promise<string | undefined> {
    return (await this.db.selectFrom('countries').select('code').where('id', '=', id).executeTakeFirst())?.code;
  }

  /** The id of the country with `code`, leaving out `exceptId` (the one being changed). */
  async getIdByCode(code: string, exceptId?: string): Promise<string | undefined> {
    let query = this.db.selectFrom('countries').select('id').where('code', '=', code);
    if (exceptId) query = query.where('id', '!=', exceptId);
    return (await query.executeTakeFirst())?.id;
  }

  insert(row: Insertable<CountriesTable>): Promise<CountryRow> {
    return this.db.insertInto('countries').values(row).returning(COUNTRY_COLUMNS).executeTakeFirstOrThrow();
  }

  update(id: string, changes: Updateable<CountriesTable>): Promise<CountryRow | undefined> {
    return this.db
      .updateTable('countries')
      .set(changes)
      .where('id', '=', id)
      .returning(COUNTRY_COLUMNS)
      .executeTakeFirst();
  }
}
