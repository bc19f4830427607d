// Reference data: countries (public, registration needs it) and their administration.
import { Type } from '@sinclair/typebox';
import type { FeatureModule } from '../../http/context.js';
import { CountryResponse, toCountryResponse } from './countries.schemas.js';

export const countriesModule: FeatureModule = (app, { services }) => {
  app.get(
    '/countries',
    {
      schema: {
        tags: ['reference'],
        summary: 'List countries (no token needed)',
        response: { 200: Type.Object({ items: Type.Array(CountryResponse) }) },
      },
    },
    async () => {
      return { items: (await services.countries.listByName()).map(toCountryResponse) };
    },
  );
};
