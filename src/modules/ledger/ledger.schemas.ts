// Schemas of the ledger's routes (contract section 21): balances, settlements, business payments.
import { Type } from '@sinclair/typebox';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';

export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217, the currency of a country' });
const MinorAmount = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'A positive whole number in the minor unit of the currency (cents for KES; UGX has none)',
});
const Reference = Type.String({
  minLength: 1,
  maxLength: 100,
  description: "The operator's receipt or bank reference",
});

export const BalancesQuery = Type.Object(
  { currency: Type.Optional(Currency), ...PaginationQuery.properties },
  { additionalProperties: false },
);

const AccountKind = Type.Union(
  [
    'DRIVER',
    'BUSINESS',
    'CUSTOMER',
    'OPERATOR_COMMISSION',
    'OPERATOR_BOOKING_FEES',
    'OPERATOR_CASH',
    'OPERATOR_BANK',
    'PAYOUTS_CLEARING',
  ].map((k) => Type.Literal(k)),
);

export const BalanceItem = Type.Object({
  accountId: Uuid,
  partyKind: AccountKind,
  partyId: Nullable(Uuid),
  name: Nullable(
    Type.String({
      description: "A business's trading name or a person's full name; null for the operator's own accounts",
    }),
  ),
  currency: Type.String(),
  balance: Type.Integer({
    description: 'What the operator owes the party, in minor units (negative: the party owes the operator)',
  }),
});
export const BalancePage = pageSchema(BalanceItem);

export const SettlementBody = Body({ driverId: Uuid, amount: MinorAmount, currency: Currency, reference: Reference });
export const BusinessPaymentBody = Body({
  businessId: Uuid,
  amount: MinorAmount,
  currency: Currency,
  reference: Reference,
});

const receiptFields = {
  id: Uuid,
  amount: Type.Integer(),
  currency: Type.String(),
  reference: Type.String(),
  balance: Type.Integer({ description: "The party's balance after it, in minor units" }),
  recordedBy: Uuid,
  transactionId: Uuid,
  createdAt: DateTime,
};
export const SettlementResponse = Type.Object({ driverId: Uuid, ...receiptFields });
export const BusinessPaymentResponse = Type.Object({ businessId: Uuid, ...receiptFields });

const listedFields = {
  id: Uuid,
  amount: Type.Integer({ description: 'In minor units' }),
  currency: Type.String(),
  reference: Type.String(),
  recordedBy: Uuid,
  recordedByName: Type.String({ description: "The recording admin's full name, as it is now" }),
  transactionId: Uuid,
  createdAt: DateTime,
};
export const SettlementItem = Type.Object({
  driverId: Uuid,
  driverName: Type.String({ description: "The driver's full name, as it is now" }),
  ...listedFields,
});
export const BusinessPaymentItem = Type.Object({
  businessId: Uuid,
  businessName: Type.String({ description: "The business's trading name, as it is now" }),
  ...listedFields,
});
export const SettlementPage = pageSchema(SettlementItem);
export const BusinessPaymentPage = pageSchema(BusinessPaymentItem);
const ListFormat = Type.Optional(
  Type.Union([Type.Literal('json'), Type.Literal('csv')], {
    description: 'Instead of the Accept header (text/csv for CSV), e.g. for a download link',
  }),
);
export const SettlementListQuery = Type.Object(
  {
    driverId: Type.Optional(Uuid),
    currency: Type.Optional(Currency),
    ...PaginationQuery.properties,
    format: ListFormat,
  },
  { additionalProperties: false },
);
export const BusinessPaymentListQuery = Type.Object(
  {
    businessId: Type.Optional(Uuid),
    currency: Type.Optional(Currency),
    ...PaginationQuery.properties,
    format: ListFormat,
  },
  { additionalProperties: false },
);
