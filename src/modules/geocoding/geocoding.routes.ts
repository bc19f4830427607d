// GET /geocode: address search for signed-in users (the global rate limit applies).
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { GeocodeQuery, GeocodeResponse } from './geocoding.schemas.js';

export const geocodingModule: FeatureModule = async (app, { services, guard }) => {
  app.get(
    '/geocode',
    {
      onRequest: guard.required(),
      schema: {
        tags: ['geocoding'],
        summary:
          'Search places in a country through the configured geocoder (404 GEOCODER_NOT_CONFIGURED without GEOCODER_URL; 502 GEOCODER_FAILED, 504 GEOCODER_TIMEOUT)',
        security: [{ bearerAuth: [] }],
        querystring: GeocodeQuery,
        response: { 200: GeocodeResponse, ...errors(400, 401, 404, 502, 504) },
      },
    },
    async (request) => services.geocoding.search(request.query),
  );
};
