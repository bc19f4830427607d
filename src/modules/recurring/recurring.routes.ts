// Routes of recurring jobs (registered under /api by app.ts): BUSINESS only; another business's is a 404.
import { Type } from '@sinclair/typebox';
import { noContent, type FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { PaginationQuery } from '../../shared/pagination.js';
import {
  CreateRecurringBody,
  OccurrenceParams,
  PauseBody,
  RecurringJobPage,
  RecurringJobResponse,
  SkipResponse,
  UpdateRecurringBody,
} from './recurring.schemas.js';

const tags = ['recurring-jobs'];
const security = [{ bearerAuth: [] }];

export const recurringModule: FeatureModule = async (app, { services, guard }) => {
  const service = services.recurring;
  const business = { onRequest: guard.required(['BUSINESS']) };

  app.post(
    '/recurring-jobs',
    {
      ...business,
      schema: {
        tags,
        security,
        summary:
          'Create a recurring job: an RRULE in a time zone and a package template whose windows are offsets from each occurrence',
        body: CreateRecurringBody,
        response: { 201: RecurringJobResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => reply.code(201).send(await service.create(request.auth, request.body)),
  );

  app.get(
    '/recurring-jobs',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: "List the business's recurring jobs, newest first",
        querystring: PaginationQuery,
        response: { 200: RecurringJobPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => service.list(request.auth, request.query),
  );

  app.get(
    '/recurring-jobs/:id',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Get a recurring job with its next 10 occurrences',
        params: IdParams,
        response: { 200: RecurringJobResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.get(request.auth, request.params.id),
  );

  app.patch(
    '/recurring-jobs/:id',
    {
      ...business,
      schema: {
        tags,
        security,
        summary:
          'Change the rule, time zone or template: occurrences to come follow it (their PENDING packages are cancelled and made again; assigned ones go ahead)',
        params: IdParams,
        body: UpdateRecurringBody,
        response: { 200: RecurringJobResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.update(request.auth, request.params.id, request.body),
  );

  app.delete(
    '/recurring-jobs/:id',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Delete a recurring job (its PENDING occurrences from now on are cancelled)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await service.remove(request.auth, request.params.id);
      return noContent(reply);
    },
  );

  app.post(
    '/recurring-jobs/:id/pause',
    {
      ...business,
      schema: {
        tags,
        security,
        summary:
          'Pause (until a time, or until resumed): the PENDING occurrences inside the pause are cancelled, none is created',
        params: IdParams,
        body: Type.Optional(PauseBody),
        response: {
          200: Type.Composite([
            RecurringJobResponse,
            Type.Object({ cancelled: Type.Integer({ description: 'PENDING occurrences cancelled' }) }),
          ]),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (request) => service.pause(request.auth, request.params.id, request.body ?? {}),
  );

  app.post(
    '/recurring-jobs/:id/resume',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Resume: occurrences from now on are created again (those a pause cancelled included)',
        params: IdParams,
        response: { 200: RecurringJobResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.resume(request.auth, request.params.id),
  );

  app.delete(
    '/recurring-jobs/:id/occurrences/:date',
    {
      ...business,
      schema: {
        tags,
        security,
        summary:
          'Skip one occurrence (local YYYY-MM-DDTHH:MM[:SS]) or every occurrence of a local date (YYYY-MM-DD); a PENDING package of one is cancelled',
        params: OccurrenceParams,
        response: { 200: SkipResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => service.skip(request.auth, request.params.id, request.params.date),
  );
};
