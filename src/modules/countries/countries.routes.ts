// Reference data: countries (public, registration needs it) and their administration.
import { Type } from '@sinclair/typebox';
import type { FeatureModule } from '../../http/context.js';
import { CountryResponse, toCountryResponse } from './countries.schemas.js';

export const countriesModule: FeatureModule = (app, { deps }) => {
  const db = deps.database.db;
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
      const rows = await db.selectFrom('countries').selectAll().orderBy('name').execute();
      return { items: rows.map(toCountryResponse) };
    },
  );
};
