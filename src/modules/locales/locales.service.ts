// The language of whoever the server writes to (contract section 27), by the one rule of
// src/shared/locales.ts: a user's own, else their country's default; a package's recipient's
// `dropoff.contactLocale`, else the creator's own, else the package country's default.
import { chooseLocale, type Locale } from '../../shared/locales.js';
import type { LocalesRepository } from './locales.repository.js';

export class LocalesService {
  constructor(private readonly deps: { repo: LocalesRepository }) {}

  /** A user's language and the time zone of their country (UTC without one). */
  async forUser(userId: string | null | undefined): Promise<{ locale: Locale; timeZone: string }> {
    const row = userId ? await this.deps.repo.ofUser(userId) : undefined;
    return { locale: chooseLocale(row?.locale, row?.countryLocale), timeZone: row?.timeZone ?? 'UTC' };
  }

  async forRecipient(pkg: { contactLocale?: string | null; creatorId: string; countryId: string }): Promise<Locale> {
    if (pkg.contactLocale) return chooseLocale(pkg.contactLocale);
    const [creator, country] = await Promise.all([
      this.deps.repo.ofUser(pkg.creatorId),
      this.deps.repo.ofCountry(pkg.countryId),
    ]);
    return chooseLocale(pkg.contactLocale, creator?.locale, country);
  }
}
