// Reference data: countries (public, registration needs it) and their administration.
import { Type } from '@sinclair/typebox';
import type { FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { CountryResponse, CreateCountryBody, UpdateCountryBody } from './countries.schemas.js';

export const countriesModule: FeatureModule = (app, { services }) => {
  const { countries } = services;
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
      return { items: await countries.list() };
    },
  );
};

/** The administration of countries, registered after the admin module's routes (the OpenAPI document's order). */
export const countryAdminModule: FeatureModule = (app, { guard, services }) => {
  const { countries } = services;
  const onlyAdmin = guard.required(['ADMIN']);
  const security = [{ bearerAuth: [] }];

  app.post(
    '/admin/countries',
    {
      onRequest: onlyAdmin,
      schema: {
        tags: ['admin'],
        security,
        summary: 'Add a country',
        body: CreateCountryBody,
        response: { 201: CountryResponse, ...errors(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      const country = await countries.createCountry(request.body);
      reply.code(201);
      return country;
    },
  );

  app.patch(
    '/admin/countries/:id',
    {
      onRequest: onlyAdmin,
      schema: {
        tags: ['admin'],
        security,
        summary: 'Change a country',
        params: IdParams,
        body: UpdateCountryBody,
        response: { 200: CountryResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => countries.updateCountry(request.params.id, request.body),
  );
};
