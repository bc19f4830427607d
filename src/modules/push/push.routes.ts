// Routes of the push module (contract section 19; registered under /api by app.ts).
import { Type } from '@sinclair/typebox';
import { noContent, type FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { SubscribeBody, SubscriptionResponse, UnsubscribeBody, VapidKeyResponse } from './push.schemas.js';

const tags = ['push'];
const security = [{ bearerAuth: [] }];

export const pushModule: FeatureModule = async (app, { services, guard }) => {
  const service = services.push;
  const signedIn = { onRequest: guard.required() };

  app.get(
    '/push/vapid-public-key',
    {
      schema: {
        tags,
        summary: 'The VAPID public key browsers subscribe with (404 PUSH_NOT_CONFIGURED when push is off)',
        response: { 200: VapidKeyResponse, ...errors(404) },
      },
    },
    async () => service.vapidPublicKey(),
  );

  app.post(
    '/push/subscriptions',
    {
      ...signedIn,
      schema: {
        tags,
        security,
        summary:
          "Save the browser's PushSubscription for the caller (at most 10 per account: the oldest is replaced; another account's endpoint: 409 PUSH_ENDPOINT_TAKEN)",
        body: SubscribeBody,
        response: { 201: SubscriptionResponse, ...errors(400, 401, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await service.subscribe(request.auth.userId, request.body)),
  );

  app.delete(
    '/push/subscriptions',
    {
      ...signedIn,
      schema: {
        tags,
        security,
        summary: "Delete one of the caller's push subscriptions by its endpoint (anyone else's: 404)",
        body: UnsubscribeBody,
        response: { 204: Type.Null(), ...errors(400, 401, 404) },
      },
    },
    async (request, reply) => {
      await service.unsubscribe(request.auth.userId, request.body.endpoint);
      return noContent(reply);
    },
  );
};
