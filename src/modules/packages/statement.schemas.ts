// Schemas of GET /businesses/me/statement.
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, VehicleType } from '../../shared/schemas.js';

const Bound = (what: string) =>
  Type.String({
    minLength: 10,
    maxLength: 40,
    description: `${what}: a date (midnight UTC) or an ISO 8601 instant with Z or an offset`,
  });

export const StatementQuery = Type.Object(
  {
    from: Bound('Start of the period, inclusive'),
    to: Bound('End of the period, exclusive'),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        description: 'Instead of the Accept header (text/csv for CSV), e.g. for a download link',
      }),
    ),
  },
  { additionalProperties: false },
);
export type StatementQuery = Static<typeof StatementQuery>;

const Minor = (description: string) =>
  Type.Integer({ minimum: 0, description: `${description}, in the minor unit of the currency` });

export const StatementItem = Type.Object({
  packageId: Type.String(),
  reference: Nullable(Type.String()),
  status: Type.Union([Type.Literal('DELIVERED'), Type.Literal('FAILED'), Type.Literal('CANCELLED')]),
  vehicleType: VehicleType,
  countryId: Type.String(),
  createdAt: DateTime,
  finishedAt: DateTime,
  currency: Nullable(Type.String({ description: 'ISO 4217; null only for a package created before prices existed' })),
  price: Nullable(Minor('The price the package was created with')),
  deliveryCharge: Minor('The price when DELIVERED, else 0'),
  cancellationFee: Minor('The cancellation fee when CANCELLED after assignment by the business, else 0'),
  amount: Minor('deliveryCharge + cancellationFee'),
});

export const StatementTotal = Type.Object({
  currency: Nullable(Type.String()),
  packages: Type.Integer({ minimum: 0 }),
  deliveryCharges: Type.Integer({ minimum: 0 }),
  cancellationFees: Type.Integer({ minimum: 0 }),
  amount: Type.Integer({ minimum: 0 }),
});

export const StatementResponse = Type.Object({
  businessId: Type.String(),
  from: DateTime,
  to: DateTime,
  items: Type.Array(StatementItem, { description: 'Oldest first, by when the package reached its final status' }),
  totals: Type.Array(StatementTotal, { description: 'One per currency: the sums of the items in it' }),
});
export type StatementResponse = Static<typeof StatementResponse>;
