// Request and response schemas of the packages module.
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Location, Nullable, Phone, Uuid, VehicleType } from '../../shared/schemas.js';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import { PACKAGE_STATUSES } from './package-status.js';

const Text = (max: number, min = 1) => Type.String({ minLength: min, maxLength: max });

export const Stop = Type.Object(
  {
    location: Location,
    address: Text(500),
    contactName: Text(200),
    contactPhone: Phone,
    notes: Type.Optional(Text(1000, 0)),
  },
  { additionalProperties: false },
);

export const ParcelSize = Type.Union([Type.Literal('SMALL'), Type.Literal('MEDIUM'), Type.Literal('LARGE')]);

export const Parcel = Type.Object(
  {
    description: Text(1000),
    weightKg: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 50_000 })),
    size: Type.Optional(ParcelSize),
  },
  { additionalProperties: false },
);

export const CreatePackageBody = Body({
  pickup: Stop,
  dropoff: Stop,
  vehicleType: VehicleType,
  countryId: Uuid,
  customerId: Type.Optional(Uuid),
  parcel: Parcel,
  reference: Type.Optional(Text(100)),
  requireDeliveryCode: Type.Optional(Type.Boolean()),
});
export type CreatePackageBody = Static<typeof CreatePackageBody>;

export const PackageStatus = Type.Union(PACKAGE_STATUSES.map((status) => Type.Literal(status)));

export const DriverSummary = Type.Object({
  id: Type.String(),
  firstName: Type.String(),
  phone: Type.String(),
  vehicleType: VehicleType,
  vehiclePlate: Type.String(),
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

export const StatusHistoryItem = Type.Object({ status: Type.String(), at: DateTime, reason: Type.Optional(Type.String()) });

const packageProperties = {
  id: Type.String(),
  status: PackageStatus,
  orderType: Type.Literal('PACKAGE_DELIVERY'),
  vehicleType: VehicleType,
  countryId: Type.String(),
  businessId: Nullable(Type.String()),
  customerId: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  pickup: Stop,
  dropoff: Stop,
  parcel: Parcel,
  driver: Nullable(DriverSummary),
  statusHistory: Type.Array(StatusHistoryItem),
  createdAt: DateTime,
  updatedAt: DateTime,
};

export const PackageResponse = Type.Object(packageProperties);
export type PackageResponse = Static<typeof PackageResponse>;

/** The creator's 201: the package plus, when asked for, its delivery code (shown only here). */
export const CreatedPackageResponse = Type.Object({
  ...packageProperties,
  deliveryCode: Type.Optional(Type.String({ pattern: '^[0-9]{4}$' })),
});

export const PackageListQuery = Type.Object({ ...PaginationQuery.properties, status: Type.Optional(PackageStatus) }, { additionalProperties: false });
export type PackageListQuery = Static<typeof PackageListQuery>;
export const PackagePage = pageSchema(PackageResponse);

export const DeliverBody = Body({
  deliveryCode: Type.Optional(Type.String({ pattern: '^[0-9]{4}$', description: '4 digits' })),
  recipientName: Type.Optional(Text(200)),
});
export const FailBody = Body({ reason: Text(500) });
export const CancelBody = Body({ reason: Type.Optional(Text(500)) });
export const AssignBody = Body({ driverId: Uuid });

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
