// The calling driver (/drivers/me: the profile, whose changes are profiles', availability, positions over
// HTTP and WebSocket). The live index it feeds is shared with the matching module.
import { Type } from '@sinclair/typebox';
import { errorResponses as errors } from '../../shared/schemas.js';
import { noContent, type App, type FeatureModule } from '../../http/context.js';
import { registerDriverStream } from './driver-stream.js';
import { AvailabilityBody, DriverResponse, LocationBody, PatchDriverBody } from './drivers.schemas.js';

export const driversModule: FeatureModule = async (app, ctx) => {
  const { guard } = ctx;
  const { live, drivers: service, profiles } = ctx.services;
  const driverOnly = guard.required(['DRIVER']);
  const security = [{ bearerAuth: [] }];

  app.get(
    '/drivers/me',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: 'The calling driver',
        security,
        response: { 200: DriverResponse, ...errors(401, 403, 404) },
      },
    },
    async (request) => service.getDriver(request.auth.userId),
  );

  app.patch(
    '/drivers/me',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: 'Change vehicle type, plate or service types',
        security,
        body: PatchDriverBody,
        response: { 200: DriverResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => profiles.updateDriver(request.auth.userId, request.body),
  );

  app.post(
    '/drivers/me/availability',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: 'Go ONLINE or OFFLINE',
        description:
          'ONLINE needs an ACTIVE account and, for a company driver, an ACTIVE company (else 409). OFFLINE is refused with 409 during an active job.',
        security,
        body: AvailabilityBody,
        response: { 200: DriverResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => service.setAvailability(request.auth.userId, request.body.status),
  );

  app.post(
    '/drivers/me/location',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: 'Report the current position',
        description:
          'An update older than the one held is ignored (still 204). A recordedAt in the future counts as now.',
        security,
        body: LocationBody,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await service.reportLocation(request.auth.userId, request.body);
      return noContent(reply);
    },
  );

  // In a scope of its own: @fastify/websocket adds an onRequest and an onResponse hook to every
  // route of the scope it is registered in, and the other driver routes need neither.
  await app.register(async (scope) => registerDriverStream(scope as App, ctx, { live }));
};
