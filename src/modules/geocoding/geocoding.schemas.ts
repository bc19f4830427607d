// Schemas of GET /geocode.
import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from '../../shared/schemas.js';

export const GeocodeQuery = Type.Object(
  {
    q: Type.String({ minLength: 2, maxLength: 200, description: 'What to look for: an address, a place' }),
    countryId: Uuid,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 5 })),
  },
  { additionalProperties: false },
);
export type GeocodeQuery = Static<typeof GeocodeQuery>;

export const GeocodeResponse = Type.Array(
  Type.Object({ name: Type.String(), lat: Type.Number(), lng: Type.Number() }),
  {
    description: "Places in the country, the geocoder's best first",
  },
);
