// Request and response schemas of the drivers routes.
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Nullable, OrderType, Uuid, VehicleType } from '../../shared/schemas.js';

const Lat = Type.Number({ minimum: -90, maximum: 90 });
const Lng = Type.Number({ minimum: -180, maximum: 180 });

/** A position report; the same fields arrive over HTTP and (with type "location") over the WebSocket. */
export const locationFields = {
  lat: Lat,
  lng: Lng,
  heading: Type.Optional(Type.Number({ minimum: 0, maximum: 360, description: 'degrees clockwise from north' })),
  speed: Type.Optional(Type.Number({ minimum: 0, maximum: 150, description: 'meters per second' })),
  accuracy: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, description: 'meters' })),
  recordedAt: Type.Optional(Type.String({ format: 'date-time', maxLength: 64 })),
};
export const LocationBody = Body(locationFields);
export type LocationBody = Static<typeof LocationBody>;
export const LocationMessage = Body({ type: Type.Literal('location'), ...locationFields });

export const AvailabilityBody = Body({ status: Type.Union([Type.Literal('ONLINE'), Type.Literal('OFFLINE')]) });

const Plate = Type.String({ minLength: 1, maxLength: 20, pattern: '\\S' });
export const PatchDriverBody = Body(
  {
    vehicleType: Type.Optional(VehicleType),
    vehiclePlate: Type.Optional(Plate),
    serviceTypes: Type.Optional(Type.Array(OrderType, { minItems: 1, maxItems: 2, uniqueItems: true })),
  },
  { minProperties: 1 },
);
export type PatchDriverBody = Static<typeof PatchDriverBody>;

export const DriverLocation = Type.Object({
  lat: Type.Number(),
  lng: Type.Number(),
  heading: Nullable(Type.Number()),
  speed: Nullable(Type.Number()),
  updatedAt: DateTime,
});

export const DriverResponse = Type.Object({
  id: Uuid,
  firstName: Type.String(),
  lastName: Type.String(),
  phone: Type.String(),
  vehicleType: VehicleType,
  vehiclePlate: Type.String(),
  serviceTypes: Type.Array(OrderType),
  companyId: Nullable(Uuid),
  availability: Type.Union([Type.Literal('ONLINE'), Type.Literal('OFFLINE')]),
  location: Nullable(DriverLocation),
  rating: Nullable(Type.Number()),
  createdAt: DateTime,
});
