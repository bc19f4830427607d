// Routes of ratings and tips (contract section 20), registered under /api by app.ts.
import type { FeatureModule } from '../../http/context.js';
import { stepOnce } from '../../http/idempotency.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import type { JobKind } from '../../db/tables/ratings.js';
import {
  AdminRatingsQuery,
  AlertsQuery,
  CompanyRatingsQuery,
  DriverRatingPage,
  DriverRatingsQuery,
  OwnRatingsQuery,
  RateBody,
  RatingAlerts,
  RatingPage,
  RatingResponse,
  TipBody,
  TipResponse,
} from './ratings.schemas.js';

const security = [{ bearerAuth: [] }];

export const ratingsModule: FeatureModule = async (app, { services, guard }) => {
  const { ratings } = services;
  const tags = ['ratings'];

  for (const [collection, jobType] of [
    ['rides', 'RIDE'],
    ['packages', 'PACKAGE'],
  ] as [string, JobKind][]) {
    const done = jobType === 'RIDE' ? 'COMPLETED' : 'DELIVERED';
    app.post(
      `/${collection}/:id/rating`,
      {
        onRequest: guard.required(['CUSTOMER', 'BUSINESS', 'DRIVER']),
        schema: {
          tags,
          summary: `Rate a ${done} ${jobType === 'RIDE' ? 'ride' : 'package'}: its creator rates the driver, the driver rates its creator; once per side (409 ALREADY_RATED), within 7 days (409 RATING_CLOSED)`,
          security,
          params: IdParams,
          body: RateBody,
          response: { 201: RatingResponse, ...errors(400, 401, 403, 404, 409) },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await ratings.rate(jobType, request.params.id, request.auth, request.body)),
    );
    app.post(
      `/${collection}/:id/tip`,
      {
        onRequest: guard.required(['CUSTOMER', 'BUSINESS']),
        schema: {
          tags,
          summary: `Tip the driver of a ${done} ${jobType === 'RIDE' ? 'ride' : 'package'} (its creator; once: 409 ALREADY_TIPPED; within 24 h: 409 TIP_CLOSED; at most TIP_MAX_SHARE of the price: 400 TIP_TOO_LARGE; honours Idempotency-Key)`,
          security,
          params: IdParams,
          body: TipBody,
          response: { 201: TipResponse, ...errors(400, 401, 403, 404, 409, 422) },
        },
      },
      async (request, reply) =>
        stepOnce(services.idempotency, request, reply, `POST /${collection}/${request.params.id}/tip`, 201, (record) =>
          ratings.tip(jobType, request.params.id, request.auth, request.body.amount, record),
        ),
    );
  }

  app.get(
    '/admin/ratings',
    {
      onRequest: guard.required(['ADMIN']),
      schema: {
        tags: ['admin', ...tags],
        summary: "Every rating with its comment, newest first (driverId: the ratings of that driver's jobs, both ways)",
        security,
        querystring: AdminRatingsQuery,
        response: { 200: RatingPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => ratings.adminList(request.query),
  );

  app.get(
    '/admin/ratings/alerts',
    {
      onRequest: guard.required(['ADMIN']),
      schema: {
        tags: ['admin', ...tags],
        summary: 'Drivers rated below RATING_ALERT_BELOW with at least 20 ratings, lowest first',
        security,
        querystring: AlertsQuery,
        response: { 200: RatingAlerts, ...errors(400, 401, 403) },
      },
    },
    async (request) => ratings.alerts(request.query),
  );

  app.get(
    '/companies/me/ratings',
    {
      onRequest: guard.required(['COMPANY']),
      schema: {
        tags,
        summary:
          "The ratings the company's drivers received, newest first (stars only: comments are for admins and their authors)",
        security,
        querystring: CompanyRatingsQuery,
        response: { 200: RatingPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => ratings.companyList(request.auth, request.query),
  );

  app.get(
    '/businesses/me/ratings',
    {
      onRequest: guard.required(['BUSINESS']),
      schema: {
        tags,
        summary: 'The ratings the business gave its drivers, with its comments, newest first',
        security,
        querystring: OwnRatingsQuery,
        response: { 200: RatingPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => ratings.givenBy(request.auth, request.query),
  );

  app.get(
    '/drivers/me/ratings',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags,
        summary:
          "The driver's ratings, newest first: side=received, the stars it was given (no comment, no rater); side=given, the ratings it gave, with its comments",
        security,
        querystring: DriverRatingsQuery,
        response: { 200: DriverRatingPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => ratings.driverList(request.auth, request.query),
  );
};
