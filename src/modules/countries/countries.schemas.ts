import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { CountriesTable } from '../../db/schema.js';

export const CountryResponse = Type.Object({
  id: Type.String({ format: 'uuid' }),
  code: Type.String(),
  name: Type.String(),
  currency: Type.String(),
  dialCode: Type.String(),
});

export function toCountryResponse(row: Selectable<CountriesTable>) {
  return { id: row.id, code: row.code, name: row.name, currency: row.currency, dialCode: row.dial_code };
}
