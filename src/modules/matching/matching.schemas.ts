import { Type, type Static } from '@sinclair/typebox';
import { Body, Location, Nullable, OrderType, Uuid, VehicleType } from '../../shared/schemas.js';

export const DEFAULT_RADIUS_METERS = 5000;
export const MAX_RADIUS_METERS = 50_000;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 50;

export const FindDriversBody = Body({
  pickupLocation: Location,
  destinationLocation: Type.Optional(Location),
  vehicleType: VehicleType,
  orderType: OrderType,
  countryId: Type.Optional(Uuid),
  customerId: Type.Optional(Uuid),
  radiusMeters: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, maximum: MAX_RADIUS_METERS, default: DEFAULT_RADIUS_METERS }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
});
export type FindDriversBody = Static<typeof FindDriversBody>;

export const FoundDriver = Type.Object({
  driverId: Uuid,
  firstName: Type.String(),
  vehicleType: VehicleType,
  vehiclePlate: Type.String(),
  rating: Nullable(Type.Number()),
  location: Type.Object({ lat: Type.Number(), lng: Type.Number() }),
  distanceMeters: Type.Integer(),
  etaSeconds: Type.Integer(),
});

export const FindDriversResponse = Type.Object({ drivers: Type.Array(FoundDriver), radiusMeters: Type.Number() });
