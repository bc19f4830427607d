// The driver's view of its work, over both kinds of job: GET /drivers/me/jobs and /drivers/me/jobs/nearby.
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { DriverJobsResponse, NearbyQuery, NearbyResponse } from './jobs.schemas.js';

export const driverJobsModule: FeatureModule = async (app, { services, guard }) => {
  const jobs = services.driverJobs;
  const security = [{ bearerAuth: [] }];

  app.get(
    '/drivers/me/jobs',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags: ['drivers'],
        summary: "The driver's active job and its recent jobs",
        security,
        response: { 200: DriverJobsResponse, ...errors(401, 403, 404) },
      },
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
