// Device keys (the driver's, for Traccar Client) and the positions Traccar Client sends with them in
// the OsmAnd protocol (contract section 19).
import { parse as parseQuery } from 'node:querystring';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { noContent, type App, type FeatureModule } from '../../http/context.js';
import { clientKey, createKeyedLimiter } from '../../http/rate-limit.js';
import { badRequest, tooManyRequests, unauthorized } from '../../shared/errors.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { acceptPosition } from '../drivers/position-intake.js';
import { CreateDeviceKeyBody, CreatedDeviceKeyResponse, DeviceKeyList, DeviceKeyParams, OsmAndQuery } from './device-keys.schemas.js';
import { DeviceKeysService, hashDeviceKey } from './device-keys.service.js';
import { decodeJson, decodeParams, deviceKeyOf } from './osmand-decode.js';

/** Traccar Client's requests are small: a form or JSON body of a few hundred bytes. */
const OSMAND_BODY_LIMIT = 16 * 1024;

export const deviceKeysModule: FeatureModule = async (app, ctx) => {
  const { guard, deps } = ctx;
  const { deviceKeys, live } = ctx.services;
  const driverOnly = guard.required(['DRIVER']);
  const security = [{ bearerAuth: [] }];

  app.post(
    '/drivers/me/device-keys',
    {
      onRequest: driverOnly,
      schema: {
        tags: ['drivers'],
        summary: 'Make a device key for Traccar Client',
        description: 'The key is in this answer only (stored as its SHA-256 hash). At most 3 per driver (409 DEVICE_KEY_LIMIT). The driver must be approved (ACTIVE).',
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
      schema: { tags: ['drivers'], summary: "The calling driver's device keys (never the keys themselves)", security, response: { 200: DeviceKeyList, ...errors(401, 403) } },
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
        description: 'Takes effect at once on every instance: its next position gets 401. Another driver\'s key: 404.',
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
    const perKey = deps.config.rateLimits.osmand ? createKeyedLimiter(deps, 'osmand', deps.config.rateLimits.osmand) : undefined;
    // Outside the global per-IP limit, a client could make the database look up one made-up key after
    // another: unknown keys count per IP against the global limit's numbers, and an IP beyond them is
    // refused before any lookup (a key already known here is still served from the cache).
    const unknownKeys = deps.config.rateLimits.global ? createKeyedLimiter(deps, 'osmand-unknown', deps.config.rateLimits.global) : undefined;
    const blocked = new Map<string, number>();
    const refuseIfBlocked = (ip: string) => async () => {
      const until = blocked.get(ip);
      if (until === undefined) return;
      const left = until - Date.now();
      if (left > 0) throw tooManyRequests(`Too many unknown device keys from this address; retry in ${Math.ceil(left / 1000)} seconds`, left / 1000);
      blocked.delete(ip);
    };
    const countUnknown = async (ip: string) => {
      if (!unknownKeys) return;
      const limit = await unknownKeys(ip);
      // Its allowance used up: the next lookup from there is refused.
      if (!limit.allowed || limit.remaining === 0) {
        if (blocked.size >= 100_000) blocked.clear();
        blocked.set(ip, Date.now() + Math.max(1, limit.resetSeconds) * 1000);
      }
    };

    const handler = async (request: { query: unknown; body: unknown; ip: string }, reply: FastifyReply) => {
      const query = (request.query ?? {}) as Record<string, unknown>;
      const body = request.body;
      const key = deviceKeyOf(body, query);
      if (key === undefined) throw unauthorized('Missing device key (id)', 'MISSING_DEVICE_KEY');
      const ip = clientKey(request.ip);
      if (!DeviceKeysService.wellFormed(key)) {
        await countUnknown(ip);
        throw unauthorized('Unknown device key', 'INVALID_DEVICE_KEY');
      }
      // Counted per key, before the database is asked (the route is outside the global per-IP limit).
      if (perKey) {
        const limit = await perKey(hashDeviceKey(key));
        reply.header('x-ratelimit-limit', String(limit.limit));
        reply.header('x-ratelimit-remaining', String(limit.remaining));
        reply.header('x-ratelimit-reset', String(limit.resetSeconds));
        if (!limit.allowed) throw tooManyRequests(`Too many positions for this device key; retry in ${Math.max(1, limit.resetSeconds)} seconds`, limit.resetSeconds);
      }
      const owner = await deviceKeys.resolve(key, refuseIfBlocked(ip)).catch(async (err: { statusCode?: number }) => {
        if (err.statusCode === 401) await countUnknown(ip);
        throw err;
      });
      const isJson = !!body && typeof body === 'object' && !Array.isArray(body) && ('location' in body || 'device_id' in body);
      const decoded = isJson
        ? decodeJson(body as Record<string, unknown>, query)
        : decodeParams({ ...query, ...(body && typeof body === 'object' ? (body as Record<string, unknown>) : {}) });
      if (!decoded.ok) throw badRequest(decoded.message);
      if (!(await live.ensure(owner.driverId))) throw unauthorized('Unknown device key', 'INVALID_DEVICE_KEY');
      // The WebSocket's checks and pipeline (position-intake.ts).
      const outcome = acceptPosition(live, owner.driverId, decoded.message, 'position');
      if (!outcome.ok) throw badRequest(outcome.message);
      // Traccar Client wants a 200; an empty body is what Traccar's server answers.
      return reply.code(200).send();
    };

    const schema = (method: string) => ({
      tags: ['drivers'],
      summary: `A position from Traccar Client (OsmAnd protocol, ${method})`,
      description:
        'Traccar Client\'s OsmAnd protocol: the query string, a form-urlencoded body with the same pairs, or the JSON body of newer clients ' +
        '({ device_id, location: { timestamp, coords: { latitude, longitude, speed, heading, accuracy } } }). Authenticated by the device key ' +
        '(id / deviceid / device_id; unknown or revoked: 401), limited per key (RATE_LIMIT_OSMAND) instead of per IP. Answers 200 with an empty body.',
      security: [{ deviceKey: [] }],
      querystring: OsmAndQuery,
      response: { 200: Type.Null({ description: 'accepted (empty body)' }), ...errors(400, 401, 403, 413, 415) },
    });
    // The input is read by the decoder (osmand-decode.ts), as Traccar's server reads it: the query's
    // schema is there for the document, and extra pairs (altitude, batt ...) are allowed.
    const anything = () => () => true;
    scope.get('/positions/osmand', { schema: schema('GET'), validatorCompiler: anything }, handler);
    scope.post('/positions/osmand', { schema: { ...schema('POST'), body: Type.Unknown() }, validatorCompiler: anything, bodyLimit: OSMAND_BODY_LIMIT }, handler);
  });
};
