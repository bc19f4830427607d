// Schemas of the payout routes (contract section 21): batches, their lines and bank files.
import { Type } from '@sinclair/typebox';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';
import { Currency } from '../ledger/ledger.schemas.js';

const Major = Type.String({
  description: 'The same amount in major units with the currency\'s ISO 4217 decimals ("1234.50" KES, "5000" UGX)',
});

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

const LineStatus = Type.Union([
  Type.Literal('OPEN'),
  Type.Literal('SENT'),
  Type.Literal('UNKNOWN'),
  Type.Literal('PAID'),
  Type.Literal('FAILED'),
]);
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
    { OPEN: StatusTotal, SENT: StatusTotal, UNKNOWN: StatusTotal, PAID: StatusTotal, FAILED: StatusTotal },
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
