// Admin payout routes (contract section 21): payout batches, their lines and bank files.
import type { FeatureModule } from '../../http/context.js';
import { createOnce, stepOnce } from '../../http/idempotency.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import {
  BatchLineParams,
  CreatePayoutBody,
  FailLineBody,
  PayoutBatchPage,
  PayoutBatchResponse,
  PayoutLinePage,
  PayoutLineResponse,
  PayoutLinesQuery,
  PayoutListQuery,
  PayoutQuery,
} from './payouts.schemas.js';
import { sendCsv, wantsCsv } from '../../http/csv-download.js';

const tags = ['admin'];
const security = [{ bearerAuth: [] }];

export const payoutsModule: FeatureModule = async (app, { services, guard }) => {
  const { payouts, idempotency } = services;
  const onlyAdmin = guard.required(['ADMIN']);

  app.post(
    '/admin/payouts',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary:
          'Create a payout batch: every driver and business owed at least `minimum`, outside an open batch (requires Idempotency-Key: 400 IDEMPOTENCY_KEY_REQUIRED without one)',
        body: CreatePayoutBody,
        response: { 201: PayoutBatchResponse, ...errors(400, 401, 403, 409, 422) },
      },
    },
    // The key is required here (contract section 1): a repeated batch would pay twice.
    async (request, reply) =>
      createOnce(
        idempotency,
        request,
        reply,
        'POST /admin/payouts',
        (trx) => payouts.createBatch(trx, request.auth.userId, request.body),
        { keyRequired: true },
      ),
  );

  app.get(
    '/admin/payouts',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: 'Payout batches, newest first',
        querystring: PayoutListQuery,
        response: { 200: PayoutBatchPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => payouts.listBatches(request.query),
  );

  app.get(
    '/admin/payouts/:id',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary:
          "A payout batch; with Accept: text/csv (or format=csv), its OPEN lines as a bank's or mobile-money provider's bulk-upload file",
        params: IdParams,
        querystring: PayoutQuery,
        response: {
          200: {
            description: 'The batch',
            content: {
              'application/json': { schema: PayoutBatchResponse },
              'text/csv': {
                schema: {
                  type: 'string',
                  description:
                    "RFC 4180, CRLF, a header row: name, phone (E.164), amount (major units, the currency's decimals), currency, reference",
                },
              },
            },
          },
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      if (!wantsCsv(request)) return payouts.getBatch(request.params.id);
      const file = await payouts.csv(request.params.id);
      return sendCsv(reply, file.filename, file.csv);
    },
  );

  app.get(
    '/admin/payouts/:id/lines',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: "A payout batch's lines, in line order (filter by status)",
        params: IdParams,
        querystring: PayoutLinesQuery,
        response: { 200: PayoutLinePage, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => payouts.lines(request.params.id, request.query),
  );

  app.post(
    '/admin/payouts/:id/paid',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary:
          "Mark the batch's OPEN lines paid (the money left the bank); the batch closes. Again: no change (honours Idempotency-Key)",
        params: IdParams,
        response: { 200: PayoutBatchResponse, ...errors(400, 401, 403, 404, 422) },
      },
    },
    // Idempotent by itself; with a key a replay is also the stored answer (stored just after it).
    async (request, reply) =>
      stepOnce(idempotency, request, reply, `POST /admin/payouts/${request.params.id}/paid`, 200, () =>
        payouts.markPaid(request.params.id),
      ),
  );

  app.post(
    '/admin/payouts/:id/lines/:lineId/failed',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary:
          "Mark one OPEN line failed: its amount returns to the party's balance. A FAILED line again: no change; a PAID line: 409 (honours Idempotency-Key)",
        params: BatchLineParams,
        body: FailLineBody,
        response: { 200: PayoutLineResponse, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { id, lineId } = request.params;
      return stepOnce(idempotency, request, reply, `POST /admin/payouts/${id}/lines/${lineId}/failed`, 200, () =>
        payouts.markLineFailed(id, lineId, request.body?.reason),
      );
    },
  );
};
