// POST /matching/find-drivers: nearest eligible drivers from the live index (contract section 8).
import { sendJsonText, type FeatureModule } from '../../http/context.js';
import { errorResponses } from '../../shared/schemas.js';
import { FoundDriversJson } from './found-drivers-json.js';
import { FindDriversBody, FindDriversResponse } from './matching.schemas.js';

export const matchingModule: FeatureModule = async (app, { services, guard }) => {
  const answers = new FoundDriversJson();

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
      const { found, radiusMeters } = await services.matching.findDrivers(request.body, request.auth);
      // test/matching-response.test.ts holds the text equal to the 200 schema's JSON.
      return sendJsonText(reply, answers.render(found, radiusMeters));
    },
  );
};
