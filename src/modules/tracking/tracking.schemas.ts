// Schemas of the tracking routes (contract section 14).
import { Type } from '@sinclair/typebox';
import { DateTime, Location, Nullable, VehicleType } from '../../shared/schemas.js';

export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/** What anyone holding the link sees: no phones, contact names, addresses, delivery code or account ids. */
export const TrackingView = Type.Object({
  status: Type.String(),
  statusHistory: Type.Array(Type.Object({ status: Type.String(), at: DateTime })),
  driver: Nullable(
    Type.Object({
      firstName: Type.String(),
      vehicleType: VehicleType,
      vehiclePlate: Type.String(),
      location: Nullable(Location),
    }),
  ),
  pickup: Type.Object({ location: Location }),
  dropoff: Type.Object({ location: Location }),
  etaSeconds: Nullable(Type.Integer()),
  updatedAt: DateTime,
});

export const RotatedTracking = Type.Object({ trackingUrl: Type.String() });

/** Stream routes: a browser EventSource cannot send headers, so the bearer may come as access_token. */
export const StreamQuery = Type.Object({ access_token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })) }, { additionalProperties: false });

export const LiveMapQuery = Type.Object(
  {
    bbox: Type.String({ minLength: 1, maxLength: 200, description: 'minLng,minLat,maxLng,maxLat (WGS84 degrees; at most 30 degrees each way)' }),
    access_token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  },
  { additionalProperties: false },
);

export const LiveDriver = Type.Object({
  driverId: Type.String(),
  firstName: Type.String(),
  vehicleType: VehicleType,
  availability: Type.Union([Type.Literal('ONLINE'), Type.Literal('OFFLINE')]),
  onJob: Type.Boolean(),
  location: Location,
  updatedAt: DateTime,
});

export const LiveDrivers = Type.Object({ drivers: Type.Array(LiveDriver), truncated: Type.Boolean() });

/** The 200 of a stream route in the OpenAPI document (the stream itself is written by hand, not serialized). */
export const EventStream = {
  description: 'text/event-stream: see docs/tracking.md for the events',
  content: { 'text/event-stream': { schema: Type.String() } },
};
