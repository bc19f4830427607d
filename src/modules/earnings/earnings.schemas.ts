// Schemas of GET /drivers/me/earnings and GET /companies/me/earnings (contract section 21).
import { Type, type Static } from '@sinclair/typebox';
import { DateTime } from '../../shared/schemas.js';

const Bound = (what: string) =>
  Type.String({
    minLength: 10,
    maxLength: 40,
    description: `${what}: a date (midnight UTC) or an ISO 8601 instant with Z or an offset`,
  });

export const EarningsQuery = Type.Object(
  {
    from: Type.Optional(Bound('Start, inclusive (default: today 00:00 UTC)')),
    to: Type.Optional(Bound('End, exclusive (default: now); at most 92 days after from')),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        description: 'Instead of the Accept header (text/csv for CSV)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EarningsQuery = Static<typeof EarningsQuery>;

const Minor = (description: string) =>
  Type.Integer({ description: `${description}, in the minor unit of the currency` });

export const EarningsJob = Type.Object({
  jobType: Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')]),
  jobId: Type.String(),
  kind: Type.Union([Type.Literal('COMPLETED'), Type.Literal('CANCELLATION_FEE')], {
    description: 'COMPLETED: delivered or completed; CANCELLATION_FEE: cancelled by its creator after assignment',
  }),
  completedAt: DateTime,
  currency: Type.String(),
  amount: Minor("What the job came to: a ride's fare, a package's price, or the cancellation fee"),
  earnings: Minor("The driver's share"),
  tip: Minor('Tips booked to the driver for this job (any time), 0 when none'),
  cashCollected: Minor('Cash the driver collected for it: the amount of a CASH job plus any cash on delivery'),
});

export const EarningsTotal = Type.Object({
  currency: Type.String(),
  jobs: Type.Integer(),
  amount: Minor("Sum of the jobs' amounts"),
  earnings: Minor('Sum of the earnings'),
  tips: Minor('Tips booked in the period'),
  cashCollected: Minor('Cash collected in the period (job amounts and cash on delivery)'),
});

export const Balance = Type.Object({
  currency: Type.String(),
  balance: Minor('What the operator owes the driver now (negative: the driver owes the operator, e.g. cash collected)'),
});

export const DriverEarningsResponse = Type.Object({
  driverId: Type.String(),
  from: DateTime,
  to: DateTime,
  jobs: Type.Array(EarningsJob, { description: 'Oldest first, by when the job was booked' }),
  totals: Type.Array(EarningsTotal, { description: 'One per currency' }),
  balances: Type.Array(Balance, {
    description: "The driver's current balance per currency (none before the first booking)",
  }),
});
export type DriverEarningsResponse = Static<typeof DriverEarningsResponse>;

export const CompanyEarningsResponse = Type.Object({
  companyId: Type.String(),
  from: DateTime,
  to: DateTime,
  drivers: Type.Array(
    Type.Object({
      driverId: Type.String(),
      firstName: Type.String(),
      lastName: Type.String(),
      totals: Type.Array(EarningsTotal),
      balances: Type.Array(Balance),
    }),
    {
      description:
        "The company's drivers by name, each with the period's totals and its current balance (a company's drivers are paid individually)",
    },
  ),
});
export type CompanyEarningsResponse = Static<typeof CompanyEarningsResponse>;
