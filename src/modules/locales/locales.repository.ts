// What the choice of a language reads (contract section 27): a user's own locale with their
// country's default, and a country's default alone.
import type { Executor } from '../../db/executor.js';

export interface UserLocales {
  locale: string | null;
  countryLocale: string | null;
  timeZone: string | null;
}

export class LocalesRepository {
  constructor(private readonly db: Executor) {}

  async ofUser(userId: string): Promise<UserLocales | undefined> {
    const row = await this.db
      .selectFrom('users')
      .leftJoin('countries', 'countries.id', 'users.country_id')
      .select(['users.locale', 'countries.default_locale', 'countries.time_zone'])
      .where('users.id', '=', userId)
      .executeTakeFirst();
    return row && { locale: row.locale, countryLocale: row.default_locale, timeZone: row.time_zone };
  }

  async ofCountry(countryId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('countries')
      .select('default_locale')
      .where('id', '=', countryId)
      .executeTakeFirst();
    return row?.default_locale;
  }
}
