// Business and company profiles of the caller, and a company's drivers (a driver's own profile is
// changed through PATCH /drivers/me, with the drivers routes).
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import { DriverResponse } from '../drivers/drivers.schemas.js';
import { BusinessResponse, CompanyResponse, PatchBusinessBody, PatchCompanyBody } from './profiles.schemas.js';

export const profilesModule: FeatureModule = (app, { guard, services }) => {
  const { profiles, drivers } = services;
  const security = [{ bearerAuth: [] }];
  const business = guard.required(['BUSINESS']);
  const company = guard.required(['COMPANY']);

  app.get(
    '/businesses/me',
    {
      onRequest: business,
      schema: {
        tags: ['businesses'],
        summary: 'The calling business',
        security,
        response: { 200: BusinessResponse, ...errors(401, 403, 404) },
      },
    },
    async (request) => profiles.getBusiness(request.auth.userId),
  );
  app.patch(
    '/businesses/me',
    {
      onRequest: business,
      schema: {
        tags: ['businesses'],
        summary: 'Change business name or address',
        security,
        body: PatchBusinessBody,
        response: { 200: BusinessResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => profiles.updateBusiness(request.auth.userId, request.body),
  );

  app.get(
    '/companies/me',
    {
      onRequest: company,
      schema: {
        tags: ['companies'],
        summary: 'The calling company',
        security,
        response: { 200: CompanyResponse, ...errors(401, 403, 404) },
      },
    },
    async (request) => profiles.getCompany(request.auth.userId),
  );
  app.patch(
    '/companies/me',
    {
      onRequest: company,
      schema: {
        tags: ['companies'],
        summary: 'Change company name',
        security,
        body: PatchCompanyBody,
        response: { 200: CompanyResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => profiles.updateCompany(request.auth.userId, request.body.companyName),
  );
  app.get(
    '/companies/me/drivers',
    {
      onRequest: company,
      schema: {
        tags: ['companies'],
        summary: "The company's drivers with availability and location (newest first)",
        security,
        querystring: PaginationQuery,
        response: { 200: pageSchema(DriverResponse), ...errors(400, 401, 403) },
      },
    },
    async (request) => drivers.listCompanyDrivers(request.auth.userId, request.query),
  );
};
