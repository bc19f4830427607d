// Routes of dispatch: the driver's offers and answers, the admin's log and forced release.
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { stepOnce } from '../../http/idempotency.js';
import { optionalBody } from '../jobs/job-routes.js';
import { ReleaseBody } from '../jobs/jobs.schemas.js';
import { PackageResponse } from '../packages/packages.schemas.js';
import { RideResponse } from '../rides/rides.schemas.js';
import { Type } from '@sinclair/typebox';
import { AdminReleaseParams, DispatchLog, JobIdParams, OfferList, OfferParams } from './dispatch.schemas.js';

const security = [{ bearerAuth: [] }];
const tags = ['dispatch'];
const JobResponse = Type.Union([PackageResponse, RideResponse]);

export const dispatchModule: FeatureModule = async (app, { services, guard }) => {
  const { dispatch, packages, rides, idempotency } = services;

  app.get(
    '/drivers/me/offers',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags,
        summary: "The driver's open offers (also pushed on its WebSocket as { type: 'offer', offer })",
        security,
        response: { 200: OfferList, ...errors(401, 403) },
      },
    },
    async (request) => ({ offers: await dispatch.myOffers(request.auth.userId) }),
  );

  app.post(
    '/offers/:id/accept',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags,
        summary:
          "Accept an open offer: the job is the driver's (as a direct accept); 409 names a lapsed, declined or withdrawn offer's state (honours Idempotency-Key)",
        security,
        params: OfferParams,
        response: { 200: JobResponse, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      stepOnce(idempotency, request, reply, `POST /offers/${request.params.id}/accept`, 200, (record) =>
        dispatch.accept(request.params.id, request.auth, record),
      ),
  );

  app.post(
    '/offers/:id/decline',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags,
        summary: 'Decline an open offer: the job goes to the next driver (honours Idempotency-Key)',
        security,
        params: OfferParams,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    // The decline opens no transaction of its own: its answer (none) is stored just after it.
    async (request, reply) =>
      stepOnce(idempotency, request, reply, `POST /offers/${request.params.id}/decline`, 204, async () =>
        dispatch.decline(request.params.id, request.auth).then(() => null),
      ),
  );

  app.get(
    '/admin/dispatch/:jobId',
    {
      onRequest: guard.required(['ADMIN']),
      schema: {
        tags: ['admin', ...tags],
        summary: "A job's offer log: each offer's driver, times, outcome and why that driver",
        security,
        params: JobIdParams,
        response: { 200: DispatchLog, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => dispatch.log(request.params.jobId),
  );

  app.post(
    '/admin/jobs/:jobType/:id/release',
    {
      onRequest: guard.required(['ADMIN']),
      preValidation: optionalBody,
      schema: {
        tags: ['admin', ...tags],
        summary:
          'Take a job back from its driver before pickup (package ASSIGNED, ride ACCEPTED): waiting again, back in dispatch (honours Idempotency-Key)',
        security,
        params: AdminReleaseParams,
        body: ReleaseBody,
        response: { 200: JobResponse, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { jobType, id } = request.params;
      return stepOnce(
        idempotency,
        request,
        reply,
        `POST /admin/jobs/${jobType}/${id}/release`,
        200,
        (record): Promise<unknown> =>
          jobType === 'PACKAGE'
            ? packages.release(id, request.auth, request.body.reason, record)
            : rides.release(id, request.auth, request.body.reason, record),
      );
    },
  );
};
