// Routes of the pricing module (registered under /api by app.ts): quotes, and tariff administration.
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import {
  QuoteBody,
  QuoteResponse,
  TariffBody,
  TariffList,
  TariffListQuery,
  TariffParams,
  TariffResponse,
} from './pricing.schemas.js';

const security = [{ bearerAuth: [] }];

export const pricingModule: FeatureModule = async (app, { services, guard }) => {
  const { pricing } = services;

  app.post(
    '/quotes',
    {
      onRequest: guard.required(['BUSINESS', 'CUSTOMER']),
      schema: {
        tags: ['pricing'],
        security,
        summary: 'Price a trip before ordering it',
        description:
          'Distance and duration from the routing function, the tariff of the country and vehicle type, and the surge at the pickup. ' +
          'The quote holds for QUOTE_TTL: POST /packages or POST /rides with its id as quoteId locks the price. ' +
          'The points must be at most MAX_TRIP_DISTANCE apart and in the country.',
        body: QuoteBody,
        response: { 201: QuoteResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { kind, pickup, dropoff, vehicleType, countryId, pickupWindow, dropoffWindow, timeZone, scheduledAt } =
        request.body;
      const quote = await pricing.quote(
        request.auth.userId,
        { kind, pickup: pickup.location, dropoff: dropoff.location, vehicleType, countryId },
        { pickupWindow, dropoffWindow, timeZone, scheduledAt },
      );
      return reply.code(201).send(quote);
    },
  );

  const admin = { onRequest: guard.required(['ADMIN']) };
  const tags = ['admin'];

  app.get(
    '/admin/tariffs',
    {
      ...admin,
      schema: {
        tags,
        security,
        summary: 'List tariffs (by country code, then vehicle type); reference data, not paginated',
        querystring: TariffListQuery,
        response: { 200: TariffList, ...errors(400, 401, 403) },
      },
    },
    async (request) => ({ items: await pricing.listTariffs(request.query) }),
  );

  app.get(
    '/admin/tariffs/:countryId/:vehicleType',
    {
      ...admin,
      schema: {
        tags,
        security,
        summary: 'Get the tariff of a country and vehicle type',
        params: TariffParams,
        response: { 200: TariffResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => pricing.getTariff(request.params.countryId, request.params.vehicleType),
  );

  app.put(
    '/admin/tariffs/:countryId/:vehicleType',
    {
      ...admin,
      schema: {
        tags,
        security,
        summary: 'Set the tariff of a country and vehicle type',
        description:
          "Every amount is a non-negative integer in the minor unit of the country's currency. The version goes up by one; quotes already given keep their price.",
        params: TariffParams,
        body: TariffBody,
        response: { 200: TariffResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) =>
      pricing.putTariff(request.params.countryId, request.params.vehicleType, request.body, request.auth.userId),
  );
};
