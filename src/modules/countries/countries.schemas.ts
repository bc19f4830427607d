import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { CountriesTable } from '../../db/schema.js';
import { decimalsOf } from '../../shared/money.js';
import { LocaleSchema } from '../../i18n/schemas.js';
import { Body } from '../../shared/schemas.js';

export const CountryResponse = Type.Object({
  id: Type.String({ format: 'uuid' }),
  code: Type.String(),
  name: Type.String(),
  currency: Type.String(),
  dialCode: Type.String(),
  minorUnits: Type.Integer({
    minimum: 0,
    description:
      "the decimals of the currency's major unit, from ISO 4217 (KES 2, UGX 0, IQD 3): money amounts are integers in its minor unit",
  }),
  codMax: Type.Integer({
    description: "the most a package's cash on delivery may be, in the currency's minor unit (section 21)",
  }),
  timeZone: Type.String({
    description:
      "IANA time zone of the country's days, slots and recurring rules (section 22), unless a job names its own",
  }),
  defaultLocale: Type.Union(LocaleSchema.anyOf, {
    description: "The language of the country's people when their own choice is not known (section 27)",
  }),
});

export function toCountryResponse(row: Selectable<CountriesTable>) {
  return {
    id: row.id,
    code: row.code,
    name: row.name,
    currency: row.currency,
    dialCode: row.dial_code,
    minorUnits: decimalsOf(row.currency),
    codMax: row.cod_max,
    timeZone: row.time_zone,
    defaultLocale: row.default_locale as 'en' | 'sw' | 'fr',
  };
}

const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' });
const Currency = Type.String({
  pattern: '^[A-Z]{3}$',
  description: 'ISO 4217 (a code not in its table of minor units: 400 UNKNOWN_CURRENCY)',
});
const DialCode = Type.String({ pattern: '^\\+[1-9][0-9]{0,3}$' });
const CountryName = Type.String({ minLength: 1, maxLength: 100 });
// The most a cash on delivery may be: up to 2,000,000,000 minor units (the column is a 32-bit integer).
const CodMax = Type.Integer({
  minimum: 0,
  maximum: 2_000_000_000,
  description:
    "the most a package's cash on delivery may be, in the minor unit of the country's currency (0: none allowed)",
});
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'an IANA time zone such as Africa/Nairobi (another: 400 VALIDATION_FAILED)',
});
export const CreateCountryBody = Body({
  code: CountryCode,
  name: CountryName,
  currency: Currency,
  dialCode: DialCode,
  codMax: Type.Optional(CodMax),
  timeZone: Type.Optional(TimeZone),
  defaultLocale: Type.Optional(LocaleSchema),
});
export const UpdateCountryBody = Body(
  {
    code: Type.Optional(CountryCode),
    name: Type.Optional(CountryName),
    currency: Type.Optional(Currency),
    dialCode: Type.Optional(DialCode),
    codMax: Type.Optional(CodMax),
    timeZone: Type.Optional(TimeZone),
    defaultLocale: Type.Optional(LocaleSchema),
  },
  { minProperties: 1 },
);
