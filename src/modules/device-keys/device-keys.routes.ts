// Device keys (the driver's, for Traccar Client) and the positions Traccar Client sends with them in
// the OsmAnd protocol (contract section 19).
import { parse as parseQuery } from 'node:querystring';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { noContent, type App, type FeatureModule } from '../../http/context.js';
import { clientKey } from '../../http/rate-limit.js';
import { serializeRequest } from '../../http/request-logger.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import {
  CreateDeviceKeyBody,
  CreatedDeviceKeyResponse,
  DeviceKeyList,
  DeviceKeyParams,
  OsmAndQuery,
} from './device-keys.schemas.js';

/** Traccar Client's requests are small: a form or JSON body of a few hundred bytes. */
const OSMAND_BODY_LIMIT = 16 * 1024;

export const deviceKeysModule: FeatureModule = async (app, ctx) => {
  const { guard } = ctx;
  const { deviceKeys, osmand: intake } = ctx.services;
  const driverOnly = guard.required(['DRIVER']);
  const security = [{ bearerAuth: [] }];

  app.post(
    '/drivers/me/device-keys',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: 'Make a device key for Traccar Client',
        description:
          'The key is in this answer only (stored as its SHA-256 hash). At most 3 per driver (409 DEVICE_KEY_LIMIT). The driver must be approved (ACTIVE).',
        security,
        body: Type.Optional(CreateDeviceKeyBody),
        response: { 201: CreatedDeviceKeyResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await deviceKeys.create(request.auth.userId, request.body?.name)),
  );

  app.get(
    '/drivers/me/device-keys',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: "The calling driver's device keys (never the keys themselves)",
        security,
        response: { 200: DeviceKeyList, ...errors(401, 403) },
      },
    },
    async (request) => deviceKeys.list(request.auth.userId),
  );

  app.delete(
    '/drivers/me/device-keys/:id',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: 'Revoke a device key',
        description: "Takes effect at once on every instance: its next position gets 401. Another driver's key: 404.",
        security,
        params: DeviceKeyParams,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await deviceKeys.revoke(request.auth.userId, request.params.id);
      return noContent(reply);
    },
  );

  // Its own scope: the form-urlencoded body is taken here only (everything else under /api is JSON).
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, parseQuery(body as string)),
    );
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      await intake.receive(
        { query: (request.query ?? {}) as Record<string, unknown>, body: request.body, address: clientKey(request.ip) },
        (limit) => {
          reply.header('x-ratelimit-limit', String(limit.limit));
          reply.header('x-ratelimit-remaining', String(limit.remaining));
          reply.header('x-ratelimit-reset', String(limit.resetSeconds));
        },
      );
      // Traccar Client wants a 200; an empty body is what Traccar's server answers.
      return reply.code(200).send();
    };
    const schema = (method: string) => ({
      tags: ['drivers'],
      summary: `A position from Traccar Client (OsmAnd protocol, ${method})`,
      description:
        "Traccar Client's OsmAnd protocol: the query string, a form-urlencoded body with the same pairs, or the JSON body of newer clients " +
        '({ device_id, location: { timestamp, coords: { latitude, longitude, speed, heading, accuracy } } }). Authenticated by the device key ' +
        '(id / deviceid / device_id; unknown or revoked: 401), limited per key (RATE_LIMIT_OSMAND) instead of per IP. Answers 200 with an empty body.',
      security: [{ deviceKey: [] }],
      querystring: OsmAndQuery,
      response: { 200: Type.Null({ description: 'accepted (empty body)' }), ...errors(400, 401, 403, 413, 415) },
    });
    // The input is read by the decoder (osmand-decode.ts), as Traccar's server reads it: the query's
    // schema is there for the document, and extra pairs (altitude, batt ...) are allowed.
    const anything = () => () => true;
    // No query string in the logs: the device key may come under a name the decoder does not read
    // (`id[]=`, `id;x=1=`), which no redaction by name would catch.
    const logSerializers = {
      req: (req: FastifyRequest) => ({ ...serializeRequest(req), url: req.url.replace(/[?#].*$/s, '') }),
    };
    scope.get('/positions/osmand', { schema: schema('GET'), validatorCompiler: anything, logSerializers }, handler);
    scope.post(
      '/positions/osmand',
      {
        schema: { ...schema('POST'), body: Type.Unknown() },
        validatorCompiler: anything,
        bodyLimit: OSMAND_BODY_LIMIT,
        logSerializers,
      },
      handler,
    );
  });
};
