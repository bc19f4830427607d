// Routes of the webhooks module (registered under /api by app.ts).
import { Type } from '@sinclair/typebox';
import { noContent, type FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { PaginationQuery } from '../../shared/pagination.js';
import {
  CreateEndpointBody,
  CreatedEndpointResponse,
  DeliveriesQuery,
  DeliveryPage,
  DeliveryResponse,
  EndpointPage,
  EndpointResponse,
  SecretResponse,
  UpdateEndpointBody,
} from './webhooks.schemas.js';

const tags = ['webhooks'];
const security = [{ bearerAuth: [] }];

export const webhooksModule: FeatureModule = async (app, { services, guard }) => {
  const service = services.webhooks;
  const business = { onRequest: guard.required(['BUSINESS']) };

  app.post(
    '/webhooks',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Register a webhook endpoint (the secret is shown only in this response)',
        body: CreateEndpointBody,
        response: { 201: CreatedEndpointResponse, ...errors(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createEndpoint(request.auth.userId, request.body)),
  );

  app.get(
    '/webhooks',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: "List the business's webhook endpoints",
        querystring: PaginationQuery,
        response: { 200: EndpointPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => service.listEndpoints(request.auth.userId, request.query),
  );

  app.get(
    '/webhooks/:id',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Get a webhook endpoint',
        params: IdParams,
        response: { 200: EndpointResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.getEndpoint(request.auth.userId, request.params.id),
  );

  app.patch(
    '/webhooks/:id',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Change the URL, events, description, or enable/disable',
        params: IdParams,
        body: UpdateEndpointBody,
        response: { 200: EndpointResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.updateEndpoint(request.auth.userId, request.params.id, request.body),
  );

  app.delete(
    '/webhooks/:id',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Delete a webhook endpoint and its delivery log',
        params: IdParams,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await service.deleteEndpoint(request.auth.userId, request.params.id);
      return noContent(reply);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Replace the signing secret (takes effect for every later attempt)',
        params: IdParams,
        response: { 200: SecretResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.rotateSecret(request.auth.userId, request.params.id),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      ...business,
      schema: {
        tags,
        security,
        summary: 'Delivery log of an endpoint, newest first',
        params: IdParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryPage, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => service.listDeliveries(request.auth.userId, request.params.id, request.query),
  );

  // Both queue a delivery and answer 202 with it.
  const queues = (summary: string) => ({
    ...business,
    schema: {
      tags,
      security,
      summary,
      params: IdParams,
      response: { 202: DeliveryResponse, ...errors(400, 401, 403, 404, 409) },
    },
  });
  app.post(
    '/webhooks/deliveries/:id/retry',
    queues('Send a finished delivery again (same webhook-id, fresh retry schedule)'),
    async (request, reply) => reply.code(202).send(await service.retryDelivery(request.auth.userId, request.params.id)),
  );
  app.post('/webhooks/:id/test', queues('Queue a webhook.test event to the endpoint'), async (request, reply) =>
    reply.code(202).send(await service.sendTest(request.auth.userId, request.params.id)),
  );
};
