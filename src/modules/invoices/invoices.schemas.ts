// Schemas of business invoices (contract section 21).
import { Type } from '@sinclair/typebox';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';
import { MONTH_PATTERN } from './invoice-month.js';

const Month = Type.String({ pattern: MONTH_PATTERN, maxLength: 7, description: 'A month in UTC, YYYY-MM' });
const Signed = (description: string) =>
  Type.Integer({
    description: `${description}, in minor units, signed as the ledger: negative charges the business, positive credits it`,
  });

export const RunInvoicesBody = Body({ month: Month });

const InvoiceTotals = Type.Object({
  deliveries: Signed('Deliveries charged (JOB_CHARGE)'),
  deliveryCount: Type.Integer(),
  cancellationFees: Signed('Cancellation fees'),
  tips: Signed('Tips on account'),
  cashOnDelivery: Signed('Cash on delivery collected for the business'),
  payments: Signed('Payments received'),
  payouts: Signed('Payouts to the business (and failed ones returned)'),
  other: Signed('Any other entry'),
  net: Signed('The month: closingBalance − openingBalance'),
});

const InvoiceLine = Type.Object({
  date: DateTime,
  kind: Type.Union(
    ['DELIVERY', 'CANCELLATION_FEE', 'TIP', 'CASH_ON_DELIVERY', 'PAYMENT', 'PAYOUT', 'OTHER'].map((k) =>
      Type.Literal(k),
    ),
  ),
  description: Type.String(),
  jobType: Nullable(Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')])),
  jobId: Nullable(Uuid),
  reference: Nullable(
    Type.String({ description: "The package's reference given by the business, or the payment's reference" }),
  ),
  amount: Signed('The entry'),
});

const summaryFields = {
  id: Uuid,
  number: Type.String({ description: 'INV-000042: sequential for the operator, without gaps' }),
  month: Type.String({ description: 'YYYY-MM (UTC)' }),
  currency: Type.String(),
  business: Type.Object(
    { id: Uuid, name: Type.String(), address: Nullable(Type.String()) },
    { description: 'As it was when issued' },
  ),
  openingBalance: Type.Integer({
    description:
      'The balance at the start of the month, minor units (what the operator owes the business; negative: the business owes)',
  }),
  closingBalance: Type.Integer({ description: 'The balance at the end of the month' }),
  amountDue: Type.Integer({
    description: 'What the business owes at the end of the month: −closingBalance when negative, else 0',
  }),
  totals: InvoiceTotals,
  lineCount: Type.Integer(),
  issuedAt: DateTime,
};

export const InvoiceSummary = Type.Object(summaryFields);
export const InvoiceResponse = Type.Object({ ...summaryFields, lines: Type.Array(InvoiceLine) });
export const InvoicePage = pageSchema(InvoiceSummary);
export const RunInvoicesResponse = Type.Object({
  month: Type.String(),
  created: Type.Integer({ description: 'Invoices this run created (0 when the month was done before)' }),
  invoices: Type.Array(InvoiceSummary),
});

export const InvoiceQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('pdf')], {
        description: 'Instead of the Accept header (application/pdf for PDF), e.g. for a download link',
      }),
    ),
  },
  { additionalProperties: false },
);
export const MyInvoicesQuery = Type.Object(
  { month: Type.Optional(Month), ...PaginationQuery.properties },
  { additionalProperties: false },
);
export const AdminInvoicesQuery = Type.Object(
  { businessId: Type.Optional(Uuid), month: Type.Optional(Month), ...PaginationQuery.properties },
  { additionalProperties: false },
);
