// Schemas both kinds of job share: the driver summary, the status history, the driver's job lists.
import { Type } from '@sinclair/typebox';
import { DateTime, Location, Nullable, VehicleType } from '../../shared/schemas.js';
import { QuoteIdInput } from '../pricing/pricing.schemas.js';

export const ParcelSize = Type.Union([Type.Literal('SMALL'), Type.Literal('MEDIUM'), Type.Literal('LARGE')]);

export const DriverSummary = Type.Object({
  id: Type.String(),
  firstName: Type.String(),
  phone: Type.String(),
  vehicleType: VehicleType,
  vehiclePlate: Type.String(),
  rating: Nullable(
    Type.Number({
      description: "The average of the driver's last 500 ratings, one decimal (1.0 to 5.0); null before the first",
    }),
  ),
  ratingCount: Type.Integer({ minimum: 0, description: 'How many ratings the driver received' }),
  location: Nullable(
    Type.Object({
      lat: Type.Number(),
      lng: Type.Number(),
      heading: Nullable(Type.Number()),
      speed: Nullable(Type.Number()),
      updatedAt: DateTime,
    }),
  ),
});

/** Money (contract section 18): an integer in the minor unit of the ISO 4217 currency (cents for KES). */
export const Money = Type.Object(
  {
    amount: Type.Integer({ minimum: 0, description: 'In the minor unit of the currency' }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217' }),
  },
  { additionalProperties: false },
);

export const NullableMoney = (description: string) =>
  Nullable(Type.Object(Money.properties, { additionalProperties: false, description }));

/** The per-viewer money fields of a job (contract section 20). */
export const ViewerMoneyFields = {
  tip: Type.Optional(
    NullableMoney(
      "The creator's tip, all of it the driver's (POST /…/:id/tip); null without one. Shown to the creator, the driver, the driver's company and admins only",
    ),
  ),
  cancellationFeeNow: Type.Optional(
    NullableMoney(
      'What cancelling by the creator would cost at this moment (amount 0 while free); null when the creator may not cancel now. Shown to the creator only',
    ),
  ),
};

/** The optional `quoteId` of POST /packages and POST /rides. */
export const QuoteIdField = Type.Optional(
  QuoteIdInput(
    'A quote of the caller (the id POST /quotes answered) for the same points, vehicle type and country: its price is locked. Without it, the price is computed at creation',
  ),
);

export const StatusHistoryItem = Type.Object({
  status: Type.String(),
  at: DateTime,
  reason: Type.Optional(Type.String()),
  reasonCode: Type.Optional(
    Type.String({ description: "A FAILED package's reason code (contract section 23); absent on other items" }),
  ),
});

/** A job as the driver sees it in its own job list. */
export const DriverJob = Type.Object({
  jobType: Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')]),
  id: Type.String(),
  status: Type.String(),
  orderType: Type.Union([Type.Literal('PACKAGE_DELIVERY'), Type.Literal('RIDE')]),
  vehicleType: VehicleType,
  pickupLocation: Location,
  destinationLocation: Location,
  createdAt: DateTime,
  updatedAt: DateTime,
});
export const DriverJobsResponse = Type.Object({ active: Nullable(DriverJob), recent: Type.Array(DriverJob) });

/** A job offered nearby: pickup area and parcel size only, no addresses or contacts. */
export const NearbyJob = Type.Object({
  jobType: Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')]),
  id: Type.String(),
  orderType: Type.Union([Type.Literal('PACKAGE_DELIVERY'), Type.Literal('RIDE')]),
  vehicleType: VehicleType,
  pickupArea: Location,
  parcelSize: Nullable(ParcelSize),
  distanceMeters: Type.Integer(),
  createdAt: DateTime,
});
export const NearbyQuery = Type.Object(
  {
    radiusMeters: Type.Optional(Type.Integer({ minimum: 100, maximum: 50_000, default: 5000 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);
export const NearbyResponse = Type.Object({ items: Type.Array(NearbyJob), radiusMeters: Type.Integer() });

/** Where the job stands in dispatch (contract section 13). */
export const DispatchInfo = Type.Object({
  state: Type.Union(
    ['SCHEDULED', 'SEARCHING', 'OFFERED', 'NO_DRIVERS', 'DONE', 'OFF'].map((s) => Type.Literal(s)),
    {
      description:
        'SCHEDULED: waits until its start − lead (section 22); SEARCHING: looking for a driver; OFFERED: an offer is open; NO_DRIVERS: nobody eligible, tried again later; DONE: out of dispatch; OFF: not dispatched',
    },
  ),
  attempts: Type.Integer({ description: 'Offers made for this job' }),
});

export const ReleaseBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500 }) },
  { additionalProperties: false },
);

/** How a job is paid (section 21). */
export const PaymentMethod = Type.Union([Type.Literal('CASH'), Type.Literal('ACCOUNT'), Type.Literal('MPESA')], {
  description:
    "CASH: the driver collects the amount (a ride's fare, else the price). ACCOUNT: the business is charged (invoiced). MPESA (section 26, when M-Pesa is configured): a customer's package paid by an STK Push prompt before it is dispatched. A customer's ride is CASH only",
});

/** `earnings` on a job: shown only to its driver, the driver's company and admins (section 21). */
export const EarningsField = Type.Optional(
  Type.Object(
    {
      driver: Type.Integer({ description: "the driver's earnings: (amount − bookingFee) − commission" }),
      commission: Type.Integer({
        description: "the operator's commission: (amount − bookingFee) × commissionRate, rounded half up",
      }),
      bookingFee: Type.Integer({ description: "the booking fee, all the operator's" }),
      tip: Type.Integer({ description: 'tips booked to the driver for this job (0 when none)' }),
      currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    },
    {
      description:
        "Only for the job's driver, its driver's company and admins (absent for everyone else). Before the job ends: what its price would give; once DELIVERED or COMPLETED: what was booked (a ride's fare); a cancellation with a fee: the fee's split; FAILED, EXPIRED or cancelled without a fee: zeros",
    },
  ),
);
