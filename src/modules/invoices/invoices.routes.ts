// Business invoices (contract section 21): a business reads its own; an admin reads any and runs a month.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import {
  AdminInvoicesQuery,
  InvoicePage,
  InvoiceQuery,
  InvoiceResponse,
  MyInvoicesQuery,
  RunInvoicesBody,
  RunInvoicesResponse,
} from './invoices.schemas.js';

const security = [{ bearerAuth: [] }];

const invoiceResponses = {
  200: {
    description: 'The invoice',
    content: {
      'application/json': { schema: InvoiceResponse },
      'application/pdf': { schema: { type: 'string', format: 'binary', description: 'The invoice as an A4 PDF' } },
    },
  },
  ...errors(400, 401, 403, 404),
};

export const invoicesModule: FeatureModule = async (app, { services, guard }) => {
  const { invoices } = services;
  const onlyAdmin = guard.required(['ADMIN']);
  const onlyBusiness = guard.required(['BUSINESS']);

  /** JSON, or the PDF with Accept: application/pdf (or format=pdf). */
  const send = async (
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    format: 'json' | 'pdf' | undefined,
    businessId?: string,
  ) => {
    const pdf =
      format === 'pdf' || (format === undefined && /\bapplication\/pdf\b/i.test(request.headers.accept ?? ''));
    if (!pdf) return invoices.get(id, businessId);
    const file = await invoices.pdf(id, businessId);
    return reply
      .type('application/pdf')
      .header('content-disposition', `attachment; filename="${file.filename}"`)
      .send(file.pdf);
  };

  app.post(
    '/admin/invoices/run',
    {
      onRequest: onlyAdmin,
      schema: {
        tags: ['admin'],
        security,
        summary:
          "Issue a past month's invoices (UTC): one per business with activity in it. Idempotent: a month run again creates nothing new",
        body: RunInvoicesBody,
        response: { 200: RunInvoicesResponse, ...errors(400, 401, 403) },
      },
    },
    async (request) => invoices.runMonth(request.body.month),
  );

  app.get(
    '/admin/invoices',
    {
      onRequest: onlyAdmin,
      schema: {
        tags: ['admin'],
        security,
        summary: 'Invoices, newest first (filter by business and month)',
        querystring: AdminInvoicesQuery,
        response: { 200: InvoicePage, ...errors(400, 401, 403) },
      },
    },
    async (request) => invoices.list(request.query),
  );

  app.get(
    '/admin/invoices/:id',
    {
      onRequest: onlyAdmin,
      schema: {
        tags: ['admin'],
        security,
        summary: 'Any invoice: JSON, or PDF with Accept: application/pdf',
        params: IdParams,
        querystring: InvoiceQuery,
        response: invoiceResponses,
      },
    },
    async (request, reply) => send(request, reply, request.params.id, request.query.format),
  );

  app.get(
    '/businesses/me/invoices',
    {
      onRequest: onlyBusiness,
      schema: {
        tags: ['businesses'],
        security,
        summary: "The business's invoices, newest first",
        querystring: MyInvoicesQuery,
        response: { 200: InvoicePage, ...errors(400, 401, 403) },
      },
    },
    async (request) => invoices.list({ ...request.query, businessId: request.auth.userId }),
  );

  app.get(
    '/businesses/me/invoices/:id',
    {
      onRequest: onlyBusiness,
      schema: {
        tags: ['businesses'],
        security,
        summary: "One of the business's invoices: JSON, or PDF with Accept: application/pdf (another business's: 404)",
        params: IdParams,
        querystring: InvoiceQuery,
        response: invoiceResponses,
      },
    },
    async (request, reply) => send(request, reply, request.params.id, request.query.format, request.auth.userId),
  );
};
