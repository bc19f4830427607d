// Business and company profiles of the caller, and a company's drivers.
import type { App, ModuleContext } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { notFound } from '../../shared/errors.js';
import { decodeCursor, pageSchema, PaginationQuery, toPage } from '../../shared/pagination.js';
import type { DriversRepository } from './drivers.repository.js';
import {
  BusinessResponse,
  CompanyResponse,
  DriverResponse,
  PatchBusinessBody,
  PatchCompanyBody,
} from './drivers.schemas.js';
import type { DriversService } from './drivers.service.js';

const iso = (d: Date | string) => new Date(d).toISOString();

type BusinessRow = NonNullable<Awaited<ReturnType<DriversRepository['getBusiness']>>>;
type CompanyRow = NonNullable<Awaited<ReturnType<DriversRepository['getCompany']>>>;

const toBusiness = (r: BusinessRow) => ({
  id: r.id,
  businessName: r.business_name,
  businessAddress: r.business_address,
  email: r.email,
  phone: r.phone,
  firstName: r.first_name,
  lastName: r.last_name,
  countryId: r.country_id,
  status: r.status,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const toCompany = (r: CompanyRow) => ({
  id: r.id,
  companyName: r.company_name,
  email: r.email,
  phone: r.phone,
  firstName: r.first_name,
  lastName: r.last_name,
  countryId: r.country_id,
  status: r.status,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

export function registerProfileRoutes(
  app: App,
  { guard }: ModuleContext,
  { repo, service }: { repo: DriversRepository; service: DriversService },
) {
  const security = [{ bearerAuth: [] }];
  const business = guard.required(['BUSINESS']);
  const company = guard.required(['COMPANY']);

  const loadBusiness = async (id: string) => {
    const row = await repo.getBusiness(id);
    if (!row) throw notFound('Business profile not found', 'BUSINESS_NOT_FOUND');
    return toBusiness(row);
  };
  const loadCompany = async (id: string) => {
    const row = await repo.getCompany(id);
    if (!row) throw notFound('Company profile not found', 'COMPANY_NOT_FOUND');
    return toCompany(row);
  };

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
    async (request) => loadBusiness(request.auth.userId),
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
    async (request) => {
      // No profile: the update changes nothing and the read answers 404.
      await repo.updateBusiness(request.auth.userId, request.body);
      return loadBusiness(request.auth.userId);
    },
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
    async (request) => loadCompany(request.auth.userId),
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
    async (request) => {
      // No profile: the update changes nothing and the read answers 404.
      await repo.updateCompany(request.auth.userId, request.body.companyName);
      return loadCompany(request.auth.userId);
    },
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
    async (request) => {
      const limit = request.query.limit ?? 20;
      const rows = await repo.listCompanyDrivers(request.auth.userId, limit, decodeCursor(request.query.cursor));
      return toPage(
        rows.map((r) => ({ ...r, createdAt: new Date(r.created_at) })),
        limit,
        (r) => service.toResponse(r),
      );
    },
  );
}
