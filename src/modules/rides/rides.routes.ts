// Routes of the rides module (registered under /api by app.ts), and the ride expiry sweep.
import type { FeatureModule } from '../../http/context.js';
import { runPeriodically } from '../../http/periodic.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { liveDrivers } from '../matching/live-drivers.js';
import { createOnce, IdempotencyStore } from '../../http/idempotency.js';
import { optionalBody } from '../packages/packages.routes.js';
import { CancelRideBody, CreateRideBody, RideListQuery, RidePage, RideResponse } from './rides.schemas.js';
import { RideService } from './rides.service.js';

const security = [{ bearerAuth: [] }];
/** How often each instance runs the expiry sweep (and purges old idempotency records). */
export const SWEEP_INTERVAL_MS = 10_000;

export const ridesModule: FeatureModule = async (app, { deps, guard }) => {
  const { db } = deps.database;
  const service = new RideService({
    db,
    bus: deps.bus,
    clock: deps.clock,
    driverLocationTtlMs: deps.config.driverLocationTtlMs,
    driverIndex: liveDrivers(deps).index,
  });
  const idempotency = new IdempotencyStore({ db, clock: deps.clock, secret: deps.config.jwtSecret });
  const tags = ['rides'];
  const viewers = guard.required(['CUSTOMER', 'DRIVER', 'COMPANY', 'ADMIN']);

  runPeriodically(app, {
    name: 'ride expiry sweep',
    everyMs: SWEEP_INTERVAL_MS,
    run: () => Promise.all([service.expireStale(), idempotency.purgeExpired()]),
  });

  app.post(
    '/rides',
    {
      onRequest: guard.required(['CUSTOMER']),
      schema: { tags, summary: 'Request a ride (honours Idempotency-Key)', security, body: CreateRideBody, response: { 201: RideResponse, ...errors(400, 401, 403, 404, 409, 422) } },
    },
    async (request, reply) =>
      createOnce(idempotency, request, reply, {
        scope: 'POST /rides',
        create: (trx) => service.create(trx, request.auth, request.body),
        announce: (created) => service.announce(created),
      }),
  );

  app.get(
    '/rides',
    { onRequest: viewers, schema: { tags, summary: 'List the rides the caller may see, newest first', security, querystring: RideListQuery, response: { 200: RidePage, ...errors(400, 401, 403) } } },
    async (request) => service.list(request.auth, request.query),
  );

  app.get(
    '/rides/:id',
    { onRequest: viewers, schema: { tags, summary: 'Get a ride', security, params: IdParams, response: { 200: RideResponse, ...errors(400, 401, 403, 404) } } },
    async (request) => service.get(request.params.id, request.auth),
  );

  const step = (path: string, summary: string, run: (id: string, request: any) => Promise<unknown>, roles: ('CUSTOMER' | 'DRIVER' | 'ADMIN')[] = ['DRIVER'], body?: object) =>
    app.route({
      method: 'POST',
      url: `/rides/:id/${path}`,
      onRequest: guard.required(roles),
      preValidation: optionalBody,
      schema: { tags, summary, security, params: IdParams, ...(body ? { body } : {}), response: { 200: RideResponse, ...errors(400, 401, 403, 404, 409) } } as any,
      handler: async (request: any) => run(request.params.id, request),
    });

  step('accept', 'Take a REQUESTED ride (eligible driver; first wins, the others get 409)', (id, r) => service.accept(id, r.auth));
  step('arrive', 'The driver is at the pickup (assigned driver)', (id, r) => service.arrive(id, r.auth));
  step('start', 'The passenger is on board: IN_PROGRESS (assigned driver)', (id, r) => service.start(id, r.auth));
  step('complete', 'The ride is over (assigned driver)', (id, r) => service.complete(id, r.auth));
  step('cancel', 'Cancel a REQUESTED, ACCEPTED or ARRIVED ride (its customer, its driver or an admin)', (id, r) => service.cancel(id, r.auth, r.body?.reason), ['CUSTOMER', 'DRIVER', 'ADMIN'], CancelRideBody);
};
