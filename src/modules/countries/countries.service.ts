// Countries: the public list and their administration (an admin adds and changes them).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import { minorUnitsOf } from '../../shared/money.js';
import { checkTimeZone } from '../scheduling/windows.js';
import type { CountriesRepository } from './countries.repository.js';
import { toCountryResponse } from './countries.schemas.js';

export interface CountryInput {
  code: string;
  name: string;
  currency: string;
  dialCode: string;
  /** Cash on delivery maximum, minor units (section 21); the column's default when absent. */
  codMax?: number;
  /** IANA time zone (section 22); UTC when absent. */
  timeZone?: string;
  /** en, sw or fr (section 27); en when absent. */
  defaultLocale?: string;
}

export class CountriesService {
  constructor(private readonly deps: { repo: CountriesRepository; clock: Clock }) {}

  async list() {
    return (await this.deps.repo.listByName()).map(toCountryResponse);
  }

  async createCountry(input: CountryInput) {
    assertIsoCurrency(input.currency);
    checkTimeZone(input.timeZone, 'body.timeZone');
    if (await this.deps.repo.getIdByCode(input.code))
      throw conflict(`Country ${input.code} already exists`, 'COUNTRY_EXISTS');
    const now = this.deps.clock.now();
    const row = await this.deps.repo.insert({
      id: randomUUID(),
      code: input.code,
      name: input.name,
      currency: input.currency,
      dial_code: input.dialCode,
      ...(input.codMax !== undefined ? { cod_max: input.codMax } : {}),
      ...(input.timeZone !== undefined ? { time_zone: input.timeZone } : {}),
      ...(input.defaultLocale !== undefined ? { default_locale: input.defaultLocale } : {}),
      created_at: now,
      updated_at: now,
    });
    return toCountryResponse(row);
  }

  async updateCountry(id: string, changes: Partial<CountryInput>) {
    const { code, name, currency, dialCode, codMax, timeZone, defaultLocale } = changes;
    if (currency) assertIsoCurrency(currency);
    checkTimeZone(timeZone, 'body.timeZone');
    if (code && (await this.deps.repo.getIdByCode(code, id)))
      throw conflict(`Country ${code} already exists`, 'COUNTRY_EXISTS');
    const row = await this.deps.repo.update(id, {
      ...(code ? { code } : {}),
      ...(name ? { name } : {}),
      ...(currency ? { currency } : {}),
      ...(dialCode ? { dial_code: dialCode } : {}),
      ...(codMax !== undefined ? { cod_max: codMax } : {}),
      ...(timeZone !== undefined ? { time_zone: timeZone } : {}),
      ...(defaultLocale !== undefined ? { default_locale: defaultLocale } : {}),
      updated_at: this.deps.clock.now(),
    });
    if (!row) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    return toCountryResponse(row);
  }
}

/** A country's money is counted in its currency's minor unit, which ISO 4217 gives (contract section 6). */
function assertIsoCurrency(currency: string): void {
  if (minorUnitsOf(currency) === undefined)
    throw badRequest(`${currency} is not an ISO 4217 currency`, 'UNKNOWN_CURRENCY');
}
