// Routes of the packages module (registered under /api by app.ts).
import { sendJsonText, type FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { createOnce } from '../../http/idempotency.js';
import { jobSteps, optionalBody } from '../jobs/job-routes.js';
import { ReleaseBody } from '../jobs/jobs.schemas.js';
import {
  AssignBody,
  CancelBody,
  CreatedPackageResponse,
  CreatePackageBody,
  DeliverBody,
  FailBody,
  PackageListQuery,
  PackagePage,
  PackageResponse,
  ReattemptBody,
} from './packages.schemas.js';
import { statementCsv } from './statement.js';
import { StatementQuery, StatementResponse } from './statement.schemas.js';
import { sendCsv, wantsCsv } from '../../http/csv-download.js';

const security = [{ bearerAuth: [] }];

export const packagesModule: FeatureModule = async (app, { services, guard }) => {
  const { packages: service, idempotency } = services;
  const tags = ['packages'];

  app.post(
    '/packages',
    {
      onRequest: guard.required(['BUSINESS', 'CUSTOMER']),
      schema: {
        tags,
        summary: 'Create a package delivery (honours Idempotency-Key)',
        security,
        body: CreatePackageBody,
        response: { 201: CreatedPackageResponse, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      createOnce(
        idempotency,
        request,
        reply,
        'POST /packages',
        (trx) => service.create(trx, request.auth, request.body),
        { announce: (created) => service.announce(created) },
      ),
  );

  // What follows a failed delivery (contract section 23): new packages, created like POST /packages.
  for (const [path, summary, create] of [
    [
      'reattempt',
      "Re-attempt a FAILED package (its creator or an admin): a new PENDING package with previousAttemptId, the original's pickup unless one is given, offered first to the driver who failed it after pickup (honours Idempotency-Key)",
      service.reattempt.bind(service),
    ],
    [
      'return',
      "Return a FAILED package to its pickup (its creator or an admin): a new package from the drop-off back to the pickup with returnOf, priced by the tariff's returnRate, paid like the original (honours Idempotency-Key)",
      service.returnToSender.bind(service),
    ],
  ] as const) {
    app.post(
      `/packages/:id/${path}`,
      {
        onRequest: guard.required(['BUSINESS', 'CUSTOMER', 'ADMIN']),
        preValidation: optionalBody,
        schema: {
          tags,
          summary,
          security,
          params: IdParams,
          body: ReattemptBody,
          response: { 201: CreatedPackageResponse, ...errors(400, 401, 403, 404, 409, 422) },
        },
      },
      async (request, reply) =>
        createOnce(
          idempotency,
          request,
          reply,
          `POST /packages/${request.params.id}/${path}`,
          (trx) => create(trx, request.auth, request.params.id, request.body),
          { announce: (created) => service.announce(created) },
        ),
    );
  }

  app.get(
    '/packages',
    {
      onRequest: guard.required(),
      schema: {
        tags,
        summary: 'List the packages the caller may see, newest first',
        security,
        querystring: PackageListQuery,
        response: { 200: PackagePage, ...errors(400, 401, 403) },
      },
    },
    async (request) => service.list(request.auth, request.query),
  );

  app.get(
    '/businesses/me/statement',
    {
      onRequest: guard.required(['BUSINESS']),
      schema: {
        tags: ['businesses', ...tags],
        summary:
          "The business's packages that reached a final status in [from, to), with prices, fees and totals per currency (CSV with Accept: text/csv or format=csv)",
        security,
        querystring: StatementQuery,
        response: {
          200: {
            description: 'The statement',
            content: {
              'application/json': { schema: StatementResponse },
              'text/csv': {
                schema: {
                  type: 'string',
                  description:
                    'RFC 4180 with a header row: a PACKAGE row per item, then a TOTAL row per currency; amounts in minor units',
                },
              },
            },
          },
          ...errors(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const statement = await service.statement(request.auth, request.query);
      if (!wantsCsv(request)) return statement;
      const name = `statement-${statement.from.slice(0, 10)}-${statement.to.slice(0, 10)}.csv`;
      return sendCsv(reply, name, statementCsv(statement));
    },
  );

  app.get(
    '/packages/:id',
    {
      onRequest: guard.required(),
      schema: {
        tags,
        summary: 'Get a package (the polling endpoint)',
        security,
        params: IdParams,
        response: { 200: PackageResponse, ...errors(400, 401, 403, 404) },
      },
    },
    // The package's JSON comes ready from PostgreSQL (or the read cache): sent as it is.
    async (request, reply) => {
      return sendJsonText(reply, await service.getJson(request.params.id, request.auth));
    },
  );

  const step = jobSteps(app, guard, { collection: 'packages', tags, response: PackageResponse, idempotency });
  // A driver's pickup, start, fail and deliver claim their Idempotency-Key in their one statement.
  const replayRow = (row: string, r: { auth: Parameters<typeof service.presentStored>[1] }) =>
    service.presentStored(row, r.auth);
  step(
    'accept',
    'Take a PENDING package (eligible driver; first wins, the others get 409)',
    (id, r, record) => service.accept(id, r.auth, record),
    ['DRIVER'],
  );
  step(
    'pickup',
    'Mark the package picked up (assigned driver)',
    (id, r, record) => service.pickup(id, r.auth, record),
    ['DRIVER'],
    undefined,
    replayRow,
  );
  step(
    'start',
    'Start the delivery: IN_TRANSIT (assigned driver)',
    (id, r, record) => service.start(id, r.auth, record),
    ['DRIVER'],
    undefined,
    replayRow,
  );
  step(
    'deliver',
    'Mark the package delivered, with its delivery code when one was set (assigned driver)',
    (id, r, record) => service.deliver(id, r.auth, r.body ?? {}, record),
    ['DRIVER'],
    DeliverBody,
    replayRow,
  );
  step(
    'release',
    'Hand an ASSIGNED package back before pickup (assigned driver or admin): PENDING again, back in dispatch, never offered to that driver again',
    (id, r, record) => service.release(id, r.auth, r.body.reason, record),
    ['DRIVER'],
    ReleaseBody,
  );
  step(
    'fail',
    'Mark the delivery failed, with a reasonCode and/or a free-text reason (text alone: reasonCode OTHER) (assigned driver or admin)',
    (id, r, record) => service.fail(id, r.auth, r.body, record),
    ['DRIVER', 'ADMIN'],
    FailBody,
    replayRow,
  );

  app.post(
    '/packages/:id/assign',
    {
      onRequest: guard.required(['ADMIN', 'COMPANY']),
      schema: {
        tags,
        summary: 'Assign a PENDING package to a driver (admin; a company for its own drivers)',
        security,
        params: IdParams,
        body: AssignBody,
        response: { 200: PackageResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => service.assign(request.params.id, request.auth, request.body.driverId),
  );

  step(
    'cancel',
    'Cancel a PENDING or ASSIGNED package (creator or admin)',
    (id, r, record) => service.cancel(id, r.auth, r.body?.reason, record),
    ['BUSINESS', 'CUSTOMER', 'ADMIN'],
    CancelBody,
  );
};
