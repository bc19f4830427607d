// Schemas of the tracking routes (contract section 14).
import { Type } from '@sinclair/typebox';
import { DateTime, Location, Nullable, VehicleType } from '../../shared/schemas.js';

export const TokenParams = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

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
  stopsBefore: Type.Optional(
    Type.Integer({
      description:
        'Only for a package on its driver\'s route (section 24): the stops before its drop-off ("n stops before yours"); etaSeconds is then the route\'s ETA for the drop-off',
    }),
  ),
  // What the job is promised for (contract section 22).
  pickupWindow: Nullable(Type.Object({ start: DateTime, end: DateTime })),
  dropoffWindow: Nullable(Type.Object({ start: DateTime, end: DateTime })),
  scheduledAt: Nullable(DateTime),
  timeZone: Nullable(Type.String({ description: "The job's IANA time zone: windows are shown in it" })),
  updatedAt: DateTime,
});

export const RotatedTracking = Type.Object({ trackingUrl: Type.String() });

/**
 * Stream routes only: a browser EventSource cannot send headers, so the bearer may come as access_token.
 * JSON routes do not take it (contract section 14): a token in a URL ends up in proxies' logs and histories.
 */
const AccessTokenQuery = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 4096,
    description: 'The access token, for a browser EventSource (never logged)',
  }),
);
export const StreamQuery = Type.Object({ access_token: AccessTokenQuery }, { additionalProperties: false });

const Bbox = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'minLng,minLat,maxLng,maxLat (WGS84 degrees; at most 30 degrees each way)',
});
export const LiveMapQuery = Type.Object({ bbox: Bbox }, { additionalProperties: false });
export const LiveMapStreamQuery = Type.Object(
  { bbox: Bbox, access_token: AccessTokenQuery },
  { additionalProperties: false },
);
export const NoQuery = Type.Object({}, { additionalProperties: false });

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
