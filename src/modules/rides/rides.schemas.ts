// Request and response schemas of the rides module.
import { SlaField } from '../alerts/alerts.schemas.js';
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Location, Nullable, Uuid, VehicleType } from '../../shared/schemas.js';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import {
  DispatchInfo,
  DriverSummary,
  EarningsField,
  NullableMoney,
  PaymentMethod,
  QuoteIdField,
  StatusHistoryItem,
  ViewerMoneyFields,
} from '../jobs/jobs.schemas.js';
import { ScheduledAtField, TimeZoneField } from '../scheduling/scheduling.schemas.js';
import { RIDE_STATUSES } from './ride-status.js';

export const CreateRideBody = Body({
  pickupLocation: Location,
  destinationLocation: Location,
  vehicleType: VehicleType,
  countryId: Uuid,
  quoteId: QuoteIdField,
  paymentMethod: Type.Optional(PaymentMethod),
  scheduledAt: ScheduledAtField,
  timeZone: Type.Optional(TimeZoneField),
});
export type CreateRideBody = Static<typeof CreateRideBody>;

export const RideStatus = Type.Union(RIDE_STATUSES.map((status) => Type.Literal(status)));

export const RideResponse = Type.Object({
  id: Type.String(),
  status: RideStatus,
  orderType: Type.Literal('RIDE'),
  customerId: Type.String(),
  vehicleType: VehicleType,
  countryId: Type.String(),
  pickupLocation: Location,
  destinationLocation: Location,
  driver: Nullable(DriverSummary),
  statusHistory: Type.Array(StatusHistoryItem),
  createdAt: DateTime,
  updatedAt: DateTime,
  dispatch: DispatchInfo,
  scheduledAt: Nullable({
    ...DateTime,
    description: 'A ride booked ahead: when the driver is to be at the pickup (null: as soon as possible)',
  }),
  sla: SlaField,
  timeZone: Nullable(
    Type.String({
      description:
        "The ride's IANA time zone: its own, else its country's (null: a ride made before time zones were kept)",
    }),
  ),
  price: NullableMoney(
    'Locked from the quote, or computed at creation; null only for rides requested before prices existed',
  ),
  fare: NullableMoney(
    "The final fare once COMPLETED: the price's tariff and surge over the positions the driver reported between start and completion, at most 1.25 × the price; else null",
  ),
  cancellationFee: NullableMoney('Charged when the customer cancels after a driver accepted; else null'),
  paymentMethod: PaymentMethod,
  earnings: EarningsField,
  ...ViewerMoneyFields,
});
export type RideResponse = Static<typeof RideResponse>;

export const RideListQuery = Type.Object(
  { ...PaginationQuery.properties, status: Type.Optional(RideStatus) },
  { additionalProperties: false },
);
export type RideListQuery = Static<typeof RideListQuery>;
export const RidePage = pageSchema(RideResponse);

export const CancelRideBody = Body({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) });
