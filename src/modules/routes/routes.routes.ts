// Routes (contract section 24): maxActiveJobs (admin, the driver's company), vehicle capacities
// (admin), a driver's route and its reorder.
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors, IdParams } from '../../shared/schemas.js';
import {
  CapacityBody,
  CapacityList,
  CapacityParams,
  CapacityResponse,
  DriverWithMaxResponse,
  MaxActiveJobsBody,
  ReorderBody,
  RouteResponse,
} from './routes.schemas.js';

export const routesModule: FeatureModule = (app, { guard, services }) => {
  const { routes } = services;
  const security = [{ bearerAuth: [] }];
  const tags = ['routes'];

  app.patch(
    '/admin/drivers/:id',
    {
      onRequest: guard.required(['ADMIN']),
      schema: {
        tags,
        security,
        summary: "Set a driver's maxActiveJobs (1–20)",
        params: IdParams,
        body: MaxActiveJobsBody,
        response: { 200: DriverWithMaxResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => routes.setMaxActiveJobs(request.params.id, request.body.maxActiveJobs, null),
  );
  app.patch(
    '/companies/me/drivers/:id',
    {
      onRequest: guard.required(['COMPANY']),
      schema: {
        tags,
        security,
        summary: "Set one of the company's drivers' maxActiveJobs (1–20); another company's driver is 404",
        params: IdParams,
        body: MaxActiveJobsBody,
        response: { 200: DriverWithMaxResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => routes.setMaxActiveJobs(request.params.id, request.body.maxActiveJobs, request.auth.userId),
  );

  app.get(
    '/admin/vehicle-capacities',
    {
      onRequest: guard.required(['ADMIN']),
      schema: {
        tags,
        security,
        summary: 'Vehicle capacities (parcels and kg per vehicle type)',
        response: { 200: CapacityList, ...errors(401, 403) },
      },
    },
    async () => routes.listCapacities(),
  );
  app.put(
    '/admin/vehicle-capacities/:vehicleType',
    {
      onRequest: guard.required(['ADMIN']),
      schema: {
        tags,
        security,
        summary: "Set a vehicle type's capacity",
        params: CapacityParams,
        body: CapacityBody,
        response: { 200: CapacityResponse, ...errors(400, 401, 403) },
      },
    },
    async (request) => routes.putCapacity(request.params.vehicleType, request.body),
  );

  app.get(
    '/drivers/me/route',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags,
        security,
        summary: "The driver's route: its active jobs' stops, done first, then the pending ones in order with ETAs",
        response: { 200: RouteResponse, ...errors(401, 403, 404) },
      },
    },
    async (request) => routes.route(request.auth.userId),
  );
  app.put(
    '/drivers/me/route/order',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags,
        security,
        summary: 'Reorder the pending stops',
        description:
          "409 ROUTE_CHANGED when version is not the route's; 409 PICKUP_AFTER_DROPOFF or WINDOW_BROKEN naming the stop; 400 when stopIds is not exactly the pending stops.",
        body: ReorderBody,
        response: { 200: RouteResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => routes.reorder(request.auth.userId, request.body),
  );
  app.get(
    '/drivers/:id/route',
    {
      onRequest: guard.required(['ADMIN', 'COMPANY', 'DRIVER', 'BUSINESS', 'CUSTOMER']),
      schema: {
        tags,
        security,
        summary: "A driver's route (admins; the driver's company; the driver itself). Anyone else: 404",
        params: IdParams,
        response: { 200: RouteResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => routes.routeFor(request.auth, request.params.id),
  );
};
