// Routes of the rides module (registered under /api by app.ts).
import type { FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { createOnce } from '../../http/idempotency.js';
import { jobSteps } from '../jobs/job-routes.js';
import { ReleaseBody } from '../jobs/jobs.schemas.js';
import { CancelRideBody, CreateRideBody, RideListQuery, RidePage, RideResponse } from './rides.schemas.js';

const security = [{ bearerAuth: [] }];

export const ridesModule: FeatureModule = async (app, { services, guard }) => {
  const { rides: service, idempotency } = services;
  const tags = ['rides'];
  const viewers = guard.required(['CUSTOMER', 'DRIVER', 'COMPANY', 'ADMIN']);

  app.post(
    '/rides',
    {
      onRequest: guard.required(['CUSTOMER']),
      schema: {
        tags,
        summary: 'Request a ride (honours Idempotency-Key)',
        security,
        body: CreateRideBody,
        response: { 201: RideResponse, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      createOnce(idempotency, request, reply, 'POST /rides', (trx) => service.create(trx, request.auth, request.body), {
        announce: (created) => service.announce(created),
      }),
  );

  app.get(
    '/rides',
    {
      onRequest: viewers,
      schema: {
        tags,
        summary: 'List the rides the caller may see, newest first',
        security,
        querystring: RideListQuery,
        response: { 200: RidePage, ...errors(400, 401, 403) },
      },
    },
    async (request) => service.list(request.auth, request.query),
  );

  app.get(
    '/rides/:id',
    {
      onRequest: viewers,
      schema: {
        tags,
        summary: 'Get a ride',
        security,
        params: IdParams,
        response: { 200: RideResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.get(request.params.id, request.auth),
  );

  const step = jobSteps(app, guard, { collection: 'rides', tags, response: RideResponse, idempotency });
  step(
    'accept',
    'Take a REQUESTED ride (eligible driver; first wins, the others get 409)',
    (id, r, record) => service.accept(id, r.auth, record),
    ['DRIVER'],
  );
  step(
    'release',
    'Hand an ACCEPTED ride back before arriving (assigned driver): REQUESTED again, back in dispatch, never offered to that driver again',
    (id, r, record) => service.release(id, r.auth, r.body.reason, record),
    ['DRIVER'],
    ReleaseBody,
  );
  step(
    'arrive',
    'The driver is at the pickup (assigned driver)',
    (id, r, record) => service.arrive(id, r.auth, record),
    ['DRIVER'],
  );
  step(
    'start',
    'The passenger is on board: IN_PROGRESS (assigned driver)',
    (id, r, record) => service.start(id, r.auth, record),
    ['DRIVER'],
  );
  step('complete', 'The ride is over (assigned driver)', (id, r, record) => service.complete(id, r.auth, record), [
    'DRIVER',
  ]);
  step(
    'cancel',
    'Cancel a REQUESTED, ACCEPTED or ARRIVED ride (its customer, its driver or an admin)',
    (id, r, record) => service.cancel(id, r.auth, r.body?.reason, record),
    ['CUSTOMER', 'DRIVER', 'ADMIN'],
    CancelRideBody,
  );
};
