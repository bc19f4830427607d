// Admin ledger routes (contract section 21): balances, settlements, business payments.
import type { FeatureModule } from '../../http/context.js';
import type { FastifyReply } from 'fastify';
import { createOnce } from '../../http/idempotency.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import {
  BalancePage,
  BalancesQuery,
  BusinessPaymentBody,
  BusinessPaymentListQuery,
  BusinessPaymentPage,
  BusinessPaymentResponse,
  SettlementBody,
  SettlementListQuery,
  SettlementPage,
  SettlementResponse,
} from './ledger.schemas.js';
import { receiptsCsv, type ListedReceipt } from './receipts-csv.js';
import { sendCsv, wantsCsv } from '../../http/csv-download.js';

const tags = ['admin'];
const security = [{ bearerAuth: [] }];

/** A list's 200: its JSON page, or the same page as CSV with the next page's cursor in X-Next-Cursor. */
const listResponse = (page: unknown, what: string) => ({
  description: `A page of ${what}`,
  content: {
    'application/json': { schema: page },
    'text/csv': {
      schema: {
        type: 'string',
        description:
          "RFC 4180, CRLF, a header row, the same page as the JSON (limit, cursor); amounts in minor units; the next page's cursor in the X-Next-Cursor header",
      },
    },
  },
});

function sendReceiptsCsv(
  reply: FastifyReply,
  filename: string,
  page: { items: ListedReceipt[]; nextCursor: string | null },
  party: 'driver' | 'business',
) {
  if (page.nextCursor) reply.header('x-next-cursor', page.nextCursor);
  return sendCsv(reply, filename, receiptsCsv(party, page.items));
}

export const ledgerModule: FeatureModule = async (app, { services, guard }) => {
  const { settlements, idempotency } = services;
  const onlyAdmin = guard.required(['ADMIN']);

  app.get(
    '/admin/balances',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: "Every account with a non-zero balance (the operator's own included), newest account first",
        querystring: BalancesQuery,
        response: { 200: BalancePage, ...errors(400, 401, 403) },
      },
    },
    async (request) => settlements.balances(request.query),
  );

  app.post(
    '/admin/settlements',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: 'Record cash a driver handed in (at most what the driver owes; honours Idempotency-Key)',
        body: SettlementBody,
        response: { 201: SettlementResponse, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      createOnce(idempotency, request, reply, 'POST /admin/settlements', async (trx) => {
        const { partyId, ...receipt } = await settlements.recordSettlement(trx, request.auth.userId, request.body);
        return { driverId: partyId, ...receipt };
      }),
  );

  app.get(
    '/admin/settlements',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary:
          'Settlements recorded (cash drivers handed in), newest first (filter by driver and currency); CSV with Accept: text/csv or format=csv',
        querystring: SettlementListQuery,
        response: { 200: listResponse(SettlementPage, 'settlements'), ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { driverId, format: _format, ...query } = request.query;
      const page = await settlements.listReceipts('settlements', { ...query, partyId: driverId });
      if (wantsCsv(request)) return sendReceiptsCsv(reply, 'settlements.csv', page, 'driver');
      return {
        ...page,
        items: page.items.map(({ partyId, partyName, ...r }) => ({ driverId: partyId, driverName: partyName, ...r })),
      };
    },
  );

  app.post(
    '/admin/business-payments',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: 'Record a business paying its invoice (honours Idempotency-Key)',
        body: BusinessPaymentBody,
        response: { 201: BusinessPaymentResponse, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      createOnce(idempotency, request, reply, 'POST /admin/business-payments', async (trx) => {
        const { partyId, ...receipt } = await settlements.recordBusinessPayment(trx, request.auth.userId, request.body);
        return { businessId: partyId, ...receipt };
      }),
  );

  app.get(
    '/admin/business-payments',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary:
          'Business payments recorded, newest first (filter by business and currency); CSV with Accept: text/csv or format=csv',
        querystring: BusinessPaymentListQuery,
        response: { 200: listResponse(BusinessPaymentPage, 'business payments'), ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { businessId, format: _format, ...query } = request.query;
      const page = await settlements.listReceipts('business_payments', { ...query, partyId: businessId });
      if (wantsCsv(request)) return sendReceiptsCsv(reply, 'business-payments.csv', page, 'business');
      return {
        ...page,
        items: page.items.map(({ partyId, partyName, ...r }) => ({
          businessId: partyId,
          businessName: partyName,
          ...r,
        })),
      };
    },
  );
};
