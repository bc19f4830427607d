// Request and response schemas of the webhooks module.
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';
import { PaginationQuery, pageSchema } from '../../shared/pagination.js';
import { WEBHOOK_EVENTS } from './outbox.js';

export const MAX_ENDPOINTS_PER_BUSINESS = 10;

export const EventName = Type.Union(WEBHOOK_EVENTS.map((name) => Type.Literal(name)));
const Events = Type.Array(EventName, {
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  uniqueItems: true,
  description: 'Default: the six delivery.* events; alert.raised is sent only to endpoints that name it',
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'https:// (http:// only where WEBHOOK_ALLOW_HTTP allows it)',
});

export const CreateEndpointBody = Body({
  url: Url,
  events: Type.Optional(Events),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
});
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Body(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { minProperties: 1 },
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const EndpointResponse = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String({ description: 'GONE when the receiver answered 410' })),
  description: Nullable(Type.String()),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export const CreatedEndpointResponse = Type.Object({
  ...EndpointResponse.properties,
  secret: Type.String({ description: 'whsec_ + base64 of 32 random bytes; shown only here and on rotation' }),
});
export const SecretResponse = Type.Object({ secret: Type.String() });
export const EndpointPage = pageSchema(EndpointResponse);

export const DeliveryResponse = Type.Object({
  id: Uuid,
  endpointId: Uuid,
  event: Type.String(),
  deliveryId: Type.String({ description: 'the package id (delivery_id of the payload)' }),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCEEDED'), Type.Literal('FAILED')]),
  attempts: Type.Integer(),
  lastResponseStatus: Nullable(Type.Integer()),
  lastError: Nullable(Type.String({ description: 'at most a short excerpt of the response body' })),
  lastAttemptAt: Nullable(DateTime),
  nextAttemptAt: Nullable(DateTime),
  createdAt: DateTime,
});
export const DeliveryPage = pageSchema(DeliveryResponse);
export const DeliveriesQuery = Type.Object(
  {
    ...PaginationQuery.properties,
    status: Type.Optional(Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCEEDED'), Type.Literal('FAILED')])),
  },
  { additionalProperties: false },
);
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;
