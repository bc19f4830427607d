// An invoice's lines and totals from the business account's ledger entries of the month. Pure.
// Amounts keep the ledger's sign (docs/money.md): negative charges the business, positive credits it.

export type InvoiceLineKind =
  'DELIVERY' | 'CANCELLATION_FEE' | 'TIP' | 'CASH_ON_DELIVERY' | 'PAYMENT' | 'PAYOUT' | 'OTHER';

export interface InvoiceLine {
  /** When it was booked (ISO 8601, UTC). */
  date: string;
  kind: InvoiceLineKind;
  description: string;
  jobType: 'PACKAGE' | 'RIDE' | null;
  jobId: string | null;
  /** The business's own reference of the package, or the payment's reference. */
  reference: string | null;
  amount: number;
}

export interface InvoiceTotals {
  deliveries: number;
  deliveryCount: number;
  cancellationFees: number;
  tips: number;
  cashOnDelivery: number;
  payments: number;
  payouts: number;
  other: number;
  /** The month's movement: closing balance − opening balance. */
  net: number;
}

export interface LedgerEntry {
  amount: number;
  code: string;
  createdAt: Date;
  sourceKey: string;
  memo: string | null;
}

const JOB_KEY = /^(?:job|tip):(PACKAGE|RIDE):([0-9a-f-]{36})(?::|$)/i;
const COD_KEY = /^cod:([0-9a-f-]{36})$/i;

/** The job a source key names (docs/money.md's keys), if any. */
export function jobOfSourceKey(sourceKey: string): { jobType: 'PACKAGE' | 'RIDE'; jobId: string } | undefined {
  const job = JOB_KEY.exec(sourceKey);
  if (job) return { jobType: job[1] as 'PACKAGE' | 'RIDE', jobId: job[2]!.toLowerCase() };
  const cod = COD_KEY.exec(sourceKey);
  return cod ? { jobType: 'PACKAGE', jobId: cod[1]!.toLowerCase() } : undefined;
}

const KIND_OF_CODE: Record<string, InvoiceLineKind> = {
  JOB_CHARGE: 'DELIVERY',
  CANCELLATION_FEE: 'CANCELLATION_FEE',
  TIP: 'TIP',
  COD: 'CASH_ON_DELIVERY',
  BUSINESS_PAYMENT: 'PAYMENT',
  PAYOUT: 'PAYOUT',
  PAYOUT_FAILED: 'PAYOUT',
};

function describe(kind: InvoiceLineKind, code: string, jobType: 'PACKAGE' | 'RIDE' | null): string {
  switch (kind) {
    case 'DELIVERY':
      return jobType === 'RIDE' ? 'Ride' : 'Delivery';
    case 'CANCELLATION_FEE':
      return 'Cancellation fee';
    case 'TIP':
      return 'Tip';
    case 'CASH_ON_DELIVERY':
      return 'Cash on delivery collected for you';
    case 'PAYMENT':
      return 'Payment received';
    case 'PAYOUT':
      return code === 'PAYOUT_FAILED' ? 'Payout returned (failed)' : 'Payout to you';
    default:
      return code;
  }
}

export function invoiceLines(entries: LedgerEntry[], packageReferences: Map<string, string | null>): InvoiceLine[] {
  return entries.map((e) => {
    const kind = KIND_OF_CODE[e.code] ?? 'OTHER';
    const job = jobOfSourceKey(e.sourceKey);
    const reference = job ? (job.jobType === 'PACKAGE' ? (packageReferences.get(job.jobId) ?? null) : null) : e.memo;
    return {
      date: e.createdAt.toISOString(),
      kind,
      description: describe(kind, e.code, job?.jobType ?? null),
      jobType: job?.jobType ?? null,
      jobId: job?.jobId ?? null,
      reference,
      amount: e.amount,
    };
  });
}

const TOTAL_OF_KIND: Record<InvoiceLineKind, Exclude<keyof InvoiceTotals, 'net' | 'deliveryCount'>> = {
  DELIVERY: 'deliveries',
  CANCELLATION_FEE: 'cancellationFees',
  TIP: 'tips',
  CASH_ON_DELIVERY: 'cashOnDelivery',
  PAYMENT: 'payments',
  PAYOUT: 'payouts',
  OTHER: 'other',
};

export function invoiceTotals(lines: InvoiceLine[]): InvoiceTotals {
  const totals: InvoiceTotals = {
    deliveries: 0,
    deliveryCount: 0,
    cancellationFees: 0,
    tips: 0,
    cashOnDelivery: 0,
    payments: 0,
    payouts: 0,
    other: 0,
    net: 0,
  };
  for (const line of lines) {
    totals[TOTAL_OF_KIND[line.kind]] += line.amount;
    if (line.kind === 'DELIVERY') totals.deliveryCount += 1;
    totals.net += line.amount;
  }
  return totals;
}

/** INV-000042: one sequence for the operator, without gaps. */
export const invoiceNumber = (seq: number) => `INV-${String(seq).padStart(6, '0')}`;
