// Schemas of the routes API (contract section 24).
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Location, Nullable, Uuid, VehicleType } from '../../shared/schemas.js';
import { DriverResponse } from '../drivers/drivers.schemas.js';

export const MaxActiveJobsBody = Body({
  maxActiveJobs: Type.Integer({
    minimum: 1,
    maximum: 20,
    description: 'How many jobs the driver may hold at once (1–20; 1 = one job at a time)',
  }),
});
export type MaxActiveJobsBody = Static<typeof MaxActiveJobsBody>;

export const DriverWithMaxResponse = Type.Object({
  ...DriverResponse.properties,
  maxActiveJobs: Type.Integer(),
});

export const CapacityParams = Type.Object({ vehicleType: VehicleType }, { additionalProperties: false });
export const CapacityBody = Body({
  parcels: Type.Integer({ minimum: 1, maximum: 10000 }),
  kg: Type.Number({ exclusiveMinimum: 0, maximum: 100000 }),
});
export const CapacityResponse = Type.Object({
  vehicleType: VehicleType,
  parcels: Type.Integer(),
  kg: Type.Number(),
  updatedAt: DateTime,
});
export const CapacityList = Type.Object({ items: Type.Array(CapacityResponse) });

export const RouteStop = Type.Object({
  id: Uuid,
  jobId: Uuid,
  kind: Type.Union([Type.Literal('PICKUP'), Type.Literal('DROPOFF')]),
  location: Location,
  address: Type.String(),
  window: Type.Optional(Type.Object({ start: Nullable(DateTime), end: Nullable(DateTime) })),
  eta: Nullable(DateTime),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('DONE')]),
});

export const RouteResponse = Type.Object({
  id: Uuid,
  version: Type.Integer(),
  stops: Type.Array(RouteStop),
  distanceMeters: Type.Integer(),
  durationSeconds: Type.Integer(),
});

export const ReorderBody = Body({
  version: Type.Integer({ minimum: 0, maximum: 2147483647 }),
  stopIds: Type.Array(Uuid, { maxItems: 200 }),
});
export type ReorderBody = Static<typeof ReorderBody>;
