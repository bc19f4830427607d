// POST /matching/find-drivers: nearest eligible drivers from the live index (contract section 8).
import { sendJsonText, type FeatureModule } from '../../http/context.js';
import { errorResponses } from '../../shared/schemas.js';
import { forbidden, notFound } from '../../shared/errors.js';
import { FoundDriversJson } from './found-drivers-json.js';
import { DEFAULT_LIMIT, DEFAULT_RADIUS_METERS, FindDriversBody, FindDriversResponse } from './matching.schemas.js';

const COUNTRY_CACHE_MS = 60_000;

export const matchingModule: FeatureModule = async (app, { deps, services, guard }) => {
  const { live } = services;
  const db = deps.database.db;
  // Countries are reference data: remember the ones that exist for a minute (never the misses).
  const knownCountries = new Map<string, number>();
  const answers = new FoundDriversJson();

  const countryExists = async (id: string) => {
    const now = deps.clock.now().getTime();
    const until = knownCountries.get(id);
    if (until !== undefined && until > now) return true;
    const row = await db.selectFrom('countries').select('id').where('id', '=', id).executeTakeFirst();
    if (row) knownCountries.set(id, now + COUNTRY_CACHE_MS);
    return Boolean(row);
  };

  app.post(
    '/matching/find-drivers',
    {
      onRequest: guard.required(),
      schema: {
        tags: ['matching'],
        summary: 'Find the nearest eligible drivers',
        description:
          'Drivers that are ACTIVE, ONLINE, without an active job, of that vehicleType, serving that orderType, with a position younger than DRIVER_LOCATION_TTL and within radiusMeters (great-circle), nearest first.',
        security: [{ bearerAuth: [] }],
        body: FindDriversBody,
        response: {
          200: FindDriversResponse,
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.customerId !== undefined) {
        if (request.auth.role === 'CUSTOMER' && body.customerId !== request.auth.userId) {
          throw forbidden('A customer may only find drivers for itself', 'CUSTOMER_MISMATCH');
        }
        // A customer naming itself was already checked by the guard (it exists, is ACTIVE, is a CUSTOMER).
        if (body.customerId !== request.auth.userId) {
          const customer = await db.selectFrom('users').select('id').where('id', '=', body.customerId).where('role', '=', 'CUSTOMER').executeTakeFirst();
          if (!customer) throw notFound('Customer not found', 'CUSTOMER_NOT_FOUND');
        }
      }
      if (body.countryId !== undefined && !(await countryExists(body.countryId))) {
        throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
      }
      const radiusMeters = body.radiusMeters ?? DEFAULT_RADIUS_METERS;
      const found = live.index.nearest({
        lat: body.pickupLocation.lat,
        lng: body.pickupLocation.lng,
        radiusMeters,
        limit: body.limit ?? DEFAULT_LIMIT,
        vehicleType: body.vehicleType,
        orderType: body.orderType,
        countryId: body.countryId,
        staleBefore: deps.clock.now().getTime() - deps.config.driverLocationTtlMs,
      });
      // test/matching-response.test.ts holds the text equal to the 200 schema's JSON.
      return sendJsonText(reply, answers.render(found, radiusMeters));
    },
  );
};
