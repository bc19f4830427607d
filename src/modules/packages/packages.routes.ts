// Routes of the packages module (registered under /api by app.ts): deliveries and the driver's jobs.
import { sendJsonText, type FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { liveDrivers } from '../matching/live-drivers.js';
import { createOnce, IdempotencyStore } from '../../http/idempotency.js';
import { JobsService } from '../jobs/driver-jobs.service.js';
import {
  AssignBody,
  CancelBody,
  CreatedPackageResponse,
  CreatePackageBody,
  DeliverBody,
  DriverJobsResponse,
  FailBody,
  NearbyQuery,
  NearbyResponse,
  PackageListQuery,
  PackagePage,
  PackageResponse,
} from './packages.schemas.js';
import { PackageService } from './packages.service.js';

const security = [{ bearerAuth: [] }];
/** Routes whose body is optional: no body at all means `{}` (then validated like any other). */
export const optionalBody = async (request: { body: unknown }) => {
  if (request.body === undefined || request.body === null) request.body = {};
};

export const packagesModule: FeatureModule = async (app, { deps, guard }) => {
  const { db } = deps.database;
  const service = new PackageService({
    db,
    bus: deps.bus,
    clock: deps.clock,
    secret: deps.config.jwtSecret,
    driverLocationTtlMs: deps.config.driverLocationTtlMs,
    driverIndex: liveDrivers(deps).index,
    pgPool: deps.database.pgPool,
  });
  const idempotency = new IdempotencyStore({ db, clock: deps.clock, secret: deps.config.jwtSecret });
  const jobs = new JobsService({ db, driverIndex: liveDrivers(deps).index });
  app.addHook('onClose', async () => service.close());
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
      createOnce(idempotency, request, reply, {
        scope: 'POST /packages',
        create: (trx) => service.create(trx, request.auth, request.body),
        announce: (created) => service.announce(created),
      }),
  );

  app.get(
    '/packages',
    {
      onRequest: guard.required(),
      schema: { tags, summary: 'List the packages the caller may see, newest first', security, querystring: PackageListQuery, response: { 200: PackagePage, ...errors(400, 401, 403) } },
    },
    async (request) => service.list(request.auth, request.query),
  );

  app.get(
    '/packages/:id',
    {
      onRequest: guard.required(),
      schema: { tags, summary: 'Get a package (the polling endpoint)', security, params: IdParams, response: { 200: PackageResponse, ...errors(400, 401, 403, 404) } },
    },
    // The package's JSON comes ready from PostgreSQL (or the read cache): sent as it is.
    async (request, reply) => {
      return sendJsonText(reply, await service.getJson(request.params.id, request.auth));
    },
  );

  const driverAction = (path: string, summary: string, run: (id: string, request: any) => Promise<unknown>, body?: object, roles: ('DRIVER' | 'ADMIN')[] = ['DRIVER']) =>
    app.route({
      method: 'POST',
      url: `/packages/:id/${path}`,
      onRequest: guard.required(roles),
      preValidation: optionalBody,
      schema: { tags, summary, security, params: IdParams, ...(body ? { body } : {}), response: { 200: PackageResponse, ...errors(400, 401, 403, 404, 409) } } as any,
      handler: async (request: any) => run(request.params.id, request),
    });

  driverAction('accept', 'Take a PENDING package (eligible driver; first wins, the others get 409)', (id, r) => service.accept(id, r.auth));
  driverAction('pickup', 'Mark the package picked up (assigned driver)', (id, r) => service.pickup(id, r.auth));
  driverAction('start', 'Start the delivery: IN_TRANSIT (assigned driver)', (id, r) => service.start(id, r.auth));
  driverAction('deliver', 'Mark the package delivered, with its delivery code when one was set (assigned driver)', (id, r) => service.deliver(id, r.auth, r.body ?? {}), DeliverBody);
  driverAction('fail', 'Mark the delivery failed, with a reason (assigned driver or admin)', (id, r) => service.fail(id, r.auth, r.body.reason), FailBody, ['DRIVER', 'ADMIN']);

  app.post(
    '/packages/:id/assign',
    {
      onRequest: guard.required(['ADMIN', 'COMPANY']),
      schema: { tags, summary: 'Assign a PENDING package to a driver (admin; a company for its own drivers)', security, params: IdParams, body: AssignBody, response: { 200: PackageResponse, ...errors(400, 401, 403, 404, 409) } },
    },
    async (request) => service.assign(request.params.id, request.auth, request.body.driverId),
  );

  app.post(
    '/packages/:id/cancel',
    {
      onRequest: guard.required(['BUSINESS', 'CUSTOMER', 'ADMIN']),
      preValidation: optionalBody,
      schema: { tags, summary: 'Cancel a PENDING or ASSIGNED package (creator or admin)', security, params: IdParams, body: CancelBody, response: { 200: PackageResponse, ...errors(400, 401, 403, 404, 409) } },
    },
    async (request) => service.cancel(request.params.id, request.auth, request.body?.reason),
  );

  app.get(
    '/drivers/me/jobs',
    {
      onRequest: guard.required(['DRIVER']),
      schema: { tags: ['drivers'], summary: "The driver's active job and its recent jobs", security, response: { 200: DriverJobsResponse, ...errors(401, 403, 404) } },
    },
    async (request) => jobs.myJobs(request.auth.userId),
  );

  app.get(
    '/drivers/me/jobs/nearby',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags: ['drivers'],
        summary: 'Open jobs near the driver that fit its vehicle and services (pickup area and parcel size only)',
        security,
        querystring: NearbyQuery,
        response: { 200: NearbyResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => jobs.nearby(request.auth.userId, request.query.radiusMeters ?? 5000, request.query.limit ?? 20),
  );
};
