// Schemas of the money routes (contract section 21): balances, settlements, business payments, payouts.
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
const Major = Type.String({
  description: 'The same amount in major units with the currency\'s ISO 4217 decimals ("1234.50" KES, "5000" UGX)',
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

export const CreatePayoutBody = Body({
  currency: Currency,
  minimum: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Pay only balances at least this, in minor units (default 1)',
    }),
  ),
});

const LineStatus = Type.Union([Type.Literal('OPEN'), Type.Literal('PAID'), Type.Literal('FAILED')]);
const StatusTotal = Type.Object({ lines: Type.Integer(), amount: Type.Integer() });

export const PayoutBatchResponse = Type.Object({
  id: Uuid,
  number: Type.Integer({ description: "Sequential; the lines' references are PO-<number>-<line>" }),
  currency: Type.String(),
  minimum: Type.Integer(),
  status: Type.Union([Type.Literal('OPEN'), Type.Literal('CLOSED')], { description: 'OPEN while a line is OPEN' }),
  lineCount: Type.Integer(),
  total: Type.Integer({ description: 'In minor units' }),
  totalMajor: Major,
  lines: Type.Object(
    { OPEN: StatusTotal, PAID: StatusTotal, FAILED: StatusTotal },
    { description: 'Lines and amounts per status' },
  ),
  createdBy: Uuid,
  createdAt: DateTime,
  closedAt: Nullable(DateTime),
});
export const PayoutBatchPage = pageSchema(PayoutBatchResponse);

export const PayoutLineResponse = Type.Object({
  id: Uuid,
  seq: Type.Integer(),
  reference: Type.String(),
  partyKind: Type.Union([Type.Literal('DRIVER'), Type.Literal('BUSINESS')]),
  partyId: Uuid,
  name: Type.String(),
  phone: Type.String({ description: 'E.164' }),
  amount: Type.Integer({ description: 'In minor units' }),
  amountMajor: Major,
  currency: Type.String(),
  status: LineStatus,
  failureReason: Nullable(Type.String()),
  closedAt: Nullable(DateTime),
});
export const PayoutLinePage = pageSchema(PayoutLineResponse);

export const PayoutListQuery = Type.Object(
  { currency: Type.Optional(Currency), ...PaginationQuery.properties },
  { additionalProperties: false },
);
export const PayoutQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        description: 'Instead of the Accept header (text/csv for CSV), e.g. for a download link',
      }),
    ),
  },
  { additionalProperties: false },
);
export const PayoutLinesQuery = Type.Object(
  { status: Type.Optional(LineStatus), ...PaginationQuery.properties },
  { additionalProperties: false },
);
export const BatchLineParams = Type.Object({ id: Uuid, lineId: Uuid }, { additionalProperties: false });
export const FailLineBody = Type.Union([
  Body({
    reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'Why the bank or provider refused it' }),
    ),
  }),
  Type.Null(),
]);
