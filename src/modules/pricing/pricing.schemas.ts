// Request and response schemas of the pricing module (contract section 18).
import { ScheduledAtField, WindowFields } from '../scheduling/scheduling.schemas.js';
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Location, Nullable, Uuid, VehicleType } from '../../shared/schemas.js';
import { MAX_MONEY } from './tariff.js';

/** What POST /packages and POST /rides take as `quoteId`: the `id` POST /quotes answered (contract section 1: a UUID). */
export const QuoteIdInput = (description: string) => Type.String({ format: 'uuid', description });

const Money = (description: string) =>
  Type.Integer({
    minimum: 0,
    maximum: MAX_MONEY,
    description: `${description}, in the minor unit of the country's currency`,
  });
const Point = Body({ location: Location });

export const QuoteBody = Body({
  kind: Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')], {
    description: 'what will be ordered: POST /packages or POST /rides',
  }),
  pickup: Point,
  dropoff: Point,
  vehicleType: VehicleType,
  countryId: Type.String({
    format: 'uuid',
    description: 'the country whose tariff and currency apply; both points must be in it',
  }),
  // Section 22: the same fields as the job (pickupWindow/dropoffWindow/timeZone for a package, scheduledAt for a ride).
  ...WindowFields,
  scheduledAt: ScheduledAtField,
});
export type QuoteBody = Static<typeof QuoteBody>;

export const BreakdownSchema = Type.Object(
  {
    base: Money('the tariff base'),
    distance: Money('perKm × km, rounded half up'),
    time: Money('perMinute × minutes, rounded half up'),
    surge: Type.Number({ minimum: 1, description: 'the multiplier at the pickup, one decimal, 1.0 to SURGE_MAX' }),
    surgeAmount: Money('round((base + distance + time) × (surge − 1))'),
    minimumTopUp: Money('max(0, minimum − trip − surgeAmount)'),
    bookingFee: Money('the booking fee'),
  },
  { description: 'The parts of the amount: base + distance + time + surgeAmount + minimumTopUp + bookingFee = amount' },
);

export const QuoteResponse = Type.Object({
  id: Type.String({
    format: 'uuid',
    description: 'pass it as quoteId to POST /packages or POST /rides before expiresAt',
  }),
  amount: Type.Integer({
    minimum: 0,
    description: 'the price in the minor unit of the currency (cents, kobo; UGX and RWF have none)',
  }),
  currency: Type.String({ description: 'ISO 4217, from the country' }),
  breakdown: BreakdownSchema,
  distanceMeters: Type.Integer({
    description: 'from the router (ROUTER: great-circle × 1.3 by default, or by road)',
  }),
  durationSeconds: Type.Integer({ description: "from the router (by default at the vehicle's average town speed)" }),
  pickupEtaSeconds: Nullable(
    Type.Integer({ description: 'the nearest eligible driver (within 10 km) to the pickup, or null when none' }),
  ),
  expiresAt: Type.String({
    format: 'date-time',
    description: 'QUOTE_TTL after now: pass the id as quoteId to POST /packages or POST /rides before then',
  }),
  pickupEta: Type.Optional(
    Nullable(
      Type.String({
        format: 'date-time',
        description:
          'When the pickup would be: the window start or scheduledAt (never before now), else now + pickupEtaSeconds; null when no driver is near an ASAP job',
      }),
    ),
  ),
  dropoffEta: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'pickupEta + durationSeconds' }))),
  availability: Type.Optional(
    Type.Union([Type.Literal('OK'), Type.Literal('WARN'), Type.Literal('BLOCK')], {
      description:
        'BLOCK: no driver of the vehicle type active in the area (the surge cell and its 8 neighbours) in the last 7 days, or the drop-off window cannot be reached by travel time; WARN: that hour a week before had fewer drivers than jobs; OK otherwise. A job can be created whatever the answer',
    }),
  ),
});

export const TariffBody = Body({
  base: Money('charged on every trip'),
  perKm: Money('per kilometre of route'),
  perMinute: Money('per minute of route'),
  minimum: Money('the least a trip costs before the booking fee'),
  bookingFee: Money('added to every trip'),
  cancellationFee: Money('charged when the creator cancels after a driver was assigned'),
  commissionRate: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10_000,
      description:
        "the operator's commission in basis points of (amount − booking fee), 0 to 10000 (2000 = 20 %); absent: unchanged (2000 for a new tariff). Jobs keep the rate they were created with",
    }),
  ),
  returnRate: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 20_000,
      description:
        "what a return of a failed delivery (POST /packages/:id/return) costs, in basis points of the way back's price less the booking fee, 0 to 20000 (10000 = 100 %, the booking fee charged whole); absent: unchanged (10000 for a new tariff)",
    }),
  ),
});
export type TariffBody = Static<typeof TariffBody>;

export const TariffResponse = Type.Object({
  countryId: Uuid,
  countryCode: Type.String(),
  currency: Type.String({ description: 'ISO 4217; every amount is in its minor unit' }),
  vehicleType: VehicleType,
  base: Type.Integer(),
  perKm: Type.Integer(),
  perMinute: Type.Integer(),
  minimum: Type.Integer(),
  bookingFee: Type.Integer(),
  cancellationFee: Type.Integer(),
  commissionRate: Type.Integer({
    description: "basis points of (amount − booking fee) that are the operator's commission (section 21)",
  }),
  returnRate: Type.Integer({
    description:
      "basis points of the way back's price less the booking fee that a return costs (section 23; 10000 = 100 %)",
  }),
  version: Type.Integer({
    description: 'goes up by one on every change; each job keeps the version it was priced with',
  }),
  updatedAt: DateTime,
});

export const TariffParams = Type.Object({ countryId: Uuid, vehicleType: VehicleType }, { additionalProperties: false });
export const TariffListQuery = Type.Object(
  { countryId: Type.Optional(Uuid), vehicleType: Type.Optional(VehicleType) },
  { additionalProperties: false },
);
export const TariffList = Type.Object({ items: Type.Array(TariffResponse) });
