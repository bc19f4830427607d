// The money arithmetic of contract section 21 and the entries each flow books. Pure: no I/O, and
// integers only (minor units). Each function returns the entry list that LedgerService.post books;
// an entry's amount is signed, positive crediting the account (the operator owes the party more),
// negative debiting it, and the entries of one transaction sum to zero.
import { AppError, UUID_PATTERN } from '../../shared/errors.js';
import type { OperatorAccountKind, PartyAccountKind } from '../../db/tables/ledger.js';

export type { OperatorAccountKind, PartyAccountKind };

export type PartyRef = { kind: PartyAccountKind; partyId: string };
export type OperatorRef = { kind: OperatorAccountKind };
/** An account by its party or operator purpose (created on first use), or by id (must exist). */
export type AccountRef = PartyRef | OperatorRef | { accountId: string };

/** Why an entry moved money: what earnings reports and invoices select on. */
export type EntryCode =
  | 'JOB_CHARGE'
  | 'CASH_COLLECTED'
  | 'EARNINGS'
  | 'COMMISSION'
  | 'BOOKING_FEE'
  | 'CANCELLATION_FEE'
  | 'TIP'
  | 'COD'
  | 'SETTLEMENT'
  | 'BUSINESS_PAYMENT'
  | 'PAYOUT'
  | 'PAYOUT_PAID'
  | 'PAYOUT_FAILED'
  | 'MPESA_PAYMENT'
  | 'MPESA_REFUND';

export const ENTRY_CODES: readonly EntryCode[] = [
  'JOB_CHARGE',
  'CASH_COLLECTED',
  'EARNINGS',
  'COMMISSION',
  'BOOKING_FEE',
  'CANCELLATION_FEE',
  'TIP',
  'COD',
  'SETTLEMENT',
  'BUSINESS_PAYMENT',
  'PAYOUT',
  'PAYOUT_PAID',
  'PAYOUT_FAILED',
  'MPESA_PAYMENT',
  'MPESA_REFUND',
];

export interface EntryInput {
  account: AccountRef;
  amount: number;
  code: EntryCode;
}

export interface TransactionInput {
  /** What caused it, unique for good: a second post with the same key books nothing. */
  sourceKey: string;
  currency: string;
  entries: EntryInput[];
  memo?: string;
}

/** MPESA: paid by the payer into the MPESA account beforehand, so charged like ACCOUNT (section 26). */
export type PaymentMethod = 'CASH' | 'ACCOUNT' | 'MPESA';

/** Commission rates are basis points: 2000 is 20 %. */
export const BASIS_POINTS = 10_000;
export const DEFAULT_COMMISSION_RATE = 2000;

const invalidAmount = (message: string) => new AppError(400, 'LEDGER_INVALID_AMOUNT', message);

/** A whole number of minor units, at least `min` (0 or 1), that JavaScript holds exactly. */
export function assertMinorUnits(name: string, value: number, min: 0 | 1 = 1): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw invalidAmount(`${name} must be a whole number of minor units (got ${String(value)})`);
  if (value < min) throw invalidAmount(`${name} must be ${min === 1 ? 'positive' : 'zero or more'} (got ${value})`);
}

function assertRate(rate: number): void {
  if (!Number.isInteger(rate) || rate < 0 || rate > BASIS_POINTS)
    throw new AppError(
      400,
      'LEDGER_INVALID_RATE',
      `commissionRate must be whole basis points from 0 to ${BASIS_POINTS} (got ${String(rate)})`,
    );
}

/** round(n × rate / 10000) half up, in BigInt so that no product loses precision. */
function shareHalfUp(n: number, rate: number): number {
  const d = BigInt(BASIS_POINTS);
  return Number((2n * BigInt(n) * BigInt(rate) + d) / (2n * d));
}

export interface Split {
  /** The driver's earnings. */
  driver: number;
  commission: number;
  bookingFee: number;
}

/**
 * A job's amount split (section 21): the amount less the booking fee is split into the operator's
 * commission (rounded half up) and the driver's earnings; the booking fee is all the operator's.
 * The three parts always add up to the amount.
 */
export function splitAmount(input: { amount: number; bookingFee: number; commissionRate: number }): Split {
  assertMinorUnits('amount', input.amount, 0);
  assertMinorUnits('bookingFee', input.bookingFee, 0);
  assertRate(input.commissionRate);
  if (input.bookingFee > input.amount)
    throw invalidAmount(`bookingFee (${input.bookingFee}) exceeds the amount (${input.amount})`);
  const net = input.amount - input.bookingFee;
  const commission = shareHalfUp(net, input.commissionRate);
  return { driver: net - commission, commission, bookingFee: input.bookingFee };
}

/** A cancellation fee is split like an amount with no booking fee in it (the tariff's fee is a figure of its own). */
export function splitCancellationFee(input: { fee: number; commissionRate: number }): Split {
  return splitAmount({ amount: input.fee, bookingFee: 0, commissionRate: input.commissionRate });
}

/** Entries without the zero ones (a 0 % commission, no booking fee): the ledger refuses zero entries. */
const nonZero = (entries: EntryInput[]) => entries.filter((e) => e.amount !== 0);

const driverRef = (driverId: string): PartyRef => ({ kind: 'DRIVER', partyId: driverId });

/** The split's credits: the driver's earnings, the operator's commission and booking fee. */
function splitCredits(driverId: string, split: Split): EntryInput[] {
  return [
    { account: driverRef(driverId), amount: split.driver, code: 'EARNINGS' },
    { account: { kind: 'OPERATOR_COMMISSION' }, amount: split.commission, code: 'COMMISSION' },
    { account: { kind: 'OPERATOR_BOOKING_FEES' }, amount: split.bookingFee, code: 'BOOKING_FEE' },
  ];
}

export interface JobCompletion {
  driverId: string;
  /** Who is charged on ACCOUNT: the job's creator (a business; a customer once a provider exists). */
  payer: PartyRef;
  paymentMethod: PaymentMethod;
  /** A ride's fare, else the price. */
  amount: number;
  bookingFee: number;
  commissionRate: number;
}

/**
 * A job COMPLETED or DELIVERED. CASH: the driver collected the amount, so the driver's account is
 * charged all of it and credited the earnings. ACCOUNT: the payer is charged, the driver credited.
 * An amount of 0 books nothing (an empty list: the caller posts nothing).
 */
export function jobCompletedEntries(job: JobCompletion): EntryInput[] {
  const split = splitAmount(job);
  if (job.amount === 0) return [];
  const charged: EntryInput =
    job.paymentMethod === 'CASH'
      ? { account: driverRef(job.driverId), amount: -job.amount, code: 'CASH_COLLECTED' }
      : { account: job.payer, amount: -job.amount, code: 'JOB_CHARGE' };
  return nonZero([charged, ...splitCredits(job.driverId, split)]);
}

/**
 * A cancellation fee (a creator cancelling after assignment): the creator's account is charged
 * whatever the payment method (no cash changed hands), split like an amount.
 */
export function cancellationFeeEntries(input: {
  driverId: string;
  payer: PartyRef;
  fee: number;
  commissionRate: number;
}): EntryInput[] {
  assertMinorUnits('fee', input.fee);
  const split = splitCancellationFee(input);
  return nonZero([
    { account: input.payer, amount: -input.fee, code: 'CANCELLATION_FEE' },
    ...splitCredits(input.driverId, split),
  ]);
}

/**
 * A tip, all of it the driver's. CASH: the driver collected it and keeps it: charged and credited
 * the same amount (the balance does not move; the ledger still shows the tip). ACCOUNT: the payer
 * is charged and the driver credited.
 */
export function tipEntries(input: {
  driverId: string;
  payer: PartyRef;
  paymentMethod: PaymentMethod;
  amount: number;
}): EntryInput[] {
  assertMinorUnits('tip', input.amount);
  const from: EntryInput =
    input.paymentMethod === 'CASH'
      ? { account: driverRef(input.driverId), amount: -input.amount, code: 'CASH_COLLECTED' }
      : { account: input.payer, amount: -input.amount, code: 'TIP' };
  return [from, { account: driverRef(input.driverId), amount: input.amount, code: 'TIP' }];
}

/** Cash on delivery collected: the driver holds the business's money. */
export function cashOnDeliveryEntries(input: { driverId: string; businessId: string; amount: number }): EntryInput[] {
  assertMinorUnits('cashOnDelivery', input.amount);
  return [
    { account: driverRef(input.driverId), amount: -input.amount, code: 'COD' },
    { account: { kind: 'BUSINESS', partyId: input.businessId }, amount: input.amount, code: 'COD' },
  ];
}

/** A driver hands cash in: the driver owes that much less, the operator holds it. */
export function settlementEntries(input: { driverId: string; amount: number }): EntryInput[] {
  assertMinorUnits('settlement', input.amount);
  return [
    { account: driverRef(input.driverId), amount: input.amount, code: 'SETTLEMENT' },
    { account: { kind: 'OPERATOR_CASH' }, amount: -input.amount, code: 'SETTLEMENT' },
  ];
}

/** A business pays (part of) its invoice into the operator's bank account. */
export function businessPaymentEntries(input: { businessId: string; amount: number }): EntryInput[] {
  assertMinorUnits('payment', input.amount);
  return [
    { account: { kind: 'BUSINESS', partyId: input.businessId }, amount: input.amount, code: 'BUSINESS_PAYMENT' },
    { account: { kind: 'OPERATOR_BANK' }, amount: -input.amount, code: 'BUSINESS_PAYMENT' },
  ];
}

/** A payout line in a batch: the party's balance moves to clearing until the bank pays it (or fails). */
export function payoutLineEntries(input: { party: PartyRef; amount: number }): EntryInput[] {
  assertMinorUnits('payout', input.amount);
  return [
    { account: input.party, amount: -input.amount, code: 'PAYOUT' },
    { account: { kind: 'PAYOUTS_CLEARING' }, amount: input.amount, code: 'PAYOUT' },
  ];
}

/** A payout line paid: the money left the operator's bank account. */
export function payoutLinePaidEntries(input: { amount: number }): EntryInput[] {
  assertMinorUnits('payout', input.amount);
  return [
    { account: { kind: 'PAYOUTS_CLEARING' }, amount: -input.amount, code: 'PAYOUT_PAID' },
    { account: { kind: 'OPERATOR_BANK' }, amount: input.amount, code: 'PAYOUT_PAID' },
  ];
}

/** A B2C payment of a payout line paid (section 26): the money left the operator's M-Pesa shortcode. */
export function payoutPaidByMpesaEntries(input: { amount: number }): EntryInput[] {
  assertMinorUnits('payout', input.amount);
  return [
    { account: { kind: 'PAYOUTS_CLEARING' }, amount: -input.amount, code: 'PAYOUT_PAID' },
    { account: { kind: 'MPESA' }, amount: input.amount, code: 'PAYOUT_PAID' },
  ];
}

/**
 * A job paid by STK Push (section 26): the money is on the operator's shortcode (MPESA), the payer
 * credited it until the job charges it (jobCompletedEntries, or a cancellation fee).
 */
export function mpesaPaymentEntries(input: { payer: PartyRef; amount: number }): EntryInput[] {
  assertMinorUnits('payment', input.amount);
  return [
    { account: input.payer, amount: input.amount, code: 'MPESA_PAYMENT' },
    { account: { kind: 'MPESA' }, amount: -input.amount, code: 'MPESA_PAYMENT' },
  ];
}

/** A paid job's refund sent back by B2C (section 26): the payer's credit leaves the shortcode. */
export function mpesaRefundEntries(input: { payer: PartyRef; amount: number }): EntryInput[] {
  assertMinorUnits('refund', input.amount);
  return [
    { account: input.payer, amount: -input.amount, code: 'MPESA_REFUND' },
    { account: { kind: 'MPESA' }, amount: input.amount, code: 'MPESA_REFUND' },
  ];
}

/** A payout line failed: its amount returns to the party's balance. */
export function payoutLineFailedEntries(input: { party: PartyRef; amount: number }): EntryInput[] {
  assertMinorUnits('payout', input.amount);
  return [
    { account: { kind: 'PAYOUTS_CLEARING' }, amount: -input.amount, code: 'PAYOUT_FAILED' },
    { account: input.party, amount: input.amount, code: 'PAYOUT_FAILED' },
  ];
}

/** The source keys of section 21's events, in one place so that two callers never spell one differently. */
export const sourceKeys = {
  jobCompleted: (jobType: 'PACKAGE' | 'RIDE', jobId: string) => `job:${jobType}:${jobId}:completed`,
  cancellationFee: (jobType: 'PACKAGE' | 'RIDE', jobId: string) => `job:${jobType}:${jobId}:cancellation-fee`,
  tip: (jobType: 'PACKAGE' | 'RIDE', jobId: string) => `tip:${jobType}:${jobId}`,
  cashOnDelivery: (packageId: string) => `cod:${packageId}`,
  settlement: (settlementId: string) => `settlement:${settlementId}`,
  businessPayment: (paymentId: string) => `business-payment:${paymentId}`,
  payoutLine: (lineId: string) => `payout-line:${lineId}`,
  payoutLinePaid: (lineId: string) => `payout-line:${lineId}:paid`,
  payoutLineFailed: (lineId: string) => `payout-line:${lineId}:failed`,
};

const CURRENCY = /^[A-Z]{3}$/;
// Printable ASCII without spaces: keys are built from ids and names, never free text.
const SOURCE_KEY = /^[\x21-\x7e]{1,200}$/;

const OPERATOR_KINDS: readonly string[] = [
  'OPERATOR_COMMISSION',
  'OPERATOR_BOOKING_FEES',
  'OPERATOR_CASH',
  'OPERATOR_BANK',
  'PAYOUTS_CLEARING',
  'MPESA',
];
const PARTY_KINDS: readonly string[] = ['DRIVER', 'BUSINESS', 'CUSTOMER'];

/** A well-formed reference (ids checked here, so that a malformed one never reaches SQL and aborts the caller's transaction). */
function validRef(ref: AccountRef | undefined): boolean {
  if (!ref || typeof ref !== 'object') return false;
  if ('accountId' in ref) return typeof ref.accountId === 'string' && UUID_PATTERN.test(ref.accountId);
  if ('partyId' in ref)
    return PARTY_KINDS.includes(ref.kind) && typeof ref.partyId === 'string' && UUID_PATTERN.test(ref.partyId);
  return OPERATOR_KINDS.includes(ref.kind);
}

export function assertAccountRef(ref: AccountRef): void {
  if (!validRef(ref))
    throw new AppError(
      400,
      'LEDGER_INVALID_ENTRY',
      'Not an account: a party kind with a UUID, an operator kind, or an account UUID',
    );
}

export function assertCurrency(currency: string): void {
  if (typeof currency !== 'string' || !CURRENCY.test(currency))
    throw new AppError(400, 'LEDGER_INVALID_CURRENCY', `currency must be an ISO 4217 code (got ${String(currency)})`);
}

/**
 * The checks a transaction passes before any I/O: a sane source key and currency, at least two
 * entries, each a non-zero whole number of minor units, known codes, and a zero sum (in BigInt, so
 * that a sum past 2^53 cannot round to zero).
 */
export function checkTransaction(input: TransactionInput): void {
  if (typeof input.sourceKey !== 'string' || !SOURCE_KEY.test(input.sourceKey)) {
    throw new AppError(
      400,
      'LEDGER_INVALID_SOURCE_KEY',
      'sourceKey must be 1 to 200 printable characters without spaces',
    );
  }
  assertCurrency(input.currency);
  if (!Array.isArray(input.entries) || input.entries.length < 2) {
    throw new AppError(400, 'LEDGER_TOO_FEW_ENTRIES', 'A transaction needs at least two entries');
  }
  let sum = 0n;
  for (const [i, entry] of input.entries.entries()) {
    if (typeof entry.amount !== 'number' || !Number.isSafeInteger(entry.amount) || entry.amount === 0) {
      throw invalidAmount(
        `Entry ${i}: amount must be a non-zero whole number of minor units (got ${String(entry.amount)})`,
      );
    }
    if (!ENTRY_CODES.includes(entry.code))
      throw new AppError(400, 'LEDGER_INVALID_ENTRY', `Entry ${i}: unknown code ${String(entry.code)}`);
    if (!validRef(entry.account)) throw new AppError(400, 'LEDGER_INVALID_ENTRY', `Entry ${i}: not an account`);
    sum += BigInt(entry.amount);
  }
  if (sum !== 0n) throw new AppError(400, 'LEDGER_UNBALANCED', `The entries sum to ${sum}, not 0`);
}
