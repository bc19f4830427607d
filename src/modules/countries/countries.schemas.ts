import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { CountriesTable } from '../../db/schema.js';
import { decimalsOf } from '../../shared/money.js';

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
  };
}
