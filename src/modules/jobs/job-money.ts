// What a job's end does to money (contract section 21), as jobs/ sees it: the facts of a job that the
// ledger books from (JobMoneyFacts), the hook the lifecycle calls in its transaction (JobMoneyHook,
// implemented in ./job-money-hook.ts by booking through the ledger), and the `earnings` object a job shows its driver's side.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PaymentMethod } from '../../db/tables/jobs.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { json } from '../../db/json.js';
import { splitAmount, splitCancellationFee, type PartyRef } from '../ledger/postings.js';
import type { JobType } from './driver-claims.js';

export type { PaymentMethod };

/** What the ledger needs of a job that has just changed status. */
export interface JobMoneyFacts {
  jobType: JobType;
  jobId: string;
  /** DONE: DELIVERED or COMPLETED; CANCELLED; OTHER (nothing to book). */
  outcome: 'DONE' | 'CANCELLED' | 'OTHER';
  driverId: string | null;
  /** Who an ACCOUNT job and a cancellation fee are charged to: the business, else the customer. */
  payer: PartyRef;
  paymentMethod: PaymentMethod;
  /** null for a job created before prices existed: nothing is booked. */
  currency: string | null;
  /** A ride's fare, else the price. */
  amount: number | null;
  bookingFee: number;
  commissionRate: number;
  cancellationFee: number | null;
  /** A business package's cash on delivery, confirmed by the driver at delivery. */
  cashOnDelivery: { amount: number; businessId: string } | null;
}

/** The lifecycle's money step, in the status change's transaction. */
export interface JobMoneyHook {
  settle(trx: Transaction<Database>, facts: JobMoneyFacts): Promise<void>;
}

export interface Earnings {
  driver: number;
  commission: number;
  bookingFee: number;
  tip: number;
  currency: string;
}

/** The columns a job's money comes from (packages and rides both have them). */
export interface MoneyColumns {
  status: string;
  driver_id: string | null;
  payment_method: PaymentMethod;
  commission_rate: number;
  price_amount: number | null;
  price_currency: string | null;
  price_breakdown: unknown;
  cancellation_fee: number | null;
}

const DONE = ['DELIVERED', 'COMPLETED'];

/** Whether a change to `status` may book money (a job done, or cancelled with a fee); others book nothing. */
export function mayBook(status: string): boolean {
  return DONE.includes(status) || status === 'CANCELLED';
}

/** The booking fee in the job's price breakdown (0 for a job without one). */
export function bookingFeeOf(breakdown: unknown): number {
  if (breakdown === null || breakdown === undefined) return 0;
  const parsed = json<{ bookingFee?: number }>(breakdown as never);
  return typeof parsed?.bookingFee === 'number' ? parsed.bookingFee : 0;
}

export function moneyFacts(
  jobType: JobType,
  row: MoneyColumns & { id: string },
  extra: { payer: PartyRef; amount: number | null; cashOnDelivery: JobMoneyFacts['cashOnDelivery'] },
): JobMoneyFacts {
  return {
    jobType,
    jobId: row.id,
    outcome: DONE.includes(row.status) ? 'DONE' : row.status === 'CANCELLED' ? 'CANCELLED' : 'OTHER',
    driverId: row.driver_id,
    payer: extra.payer,
    paymentMethod: row.payment_method,
    currency: row.price_currency,
    amount: extra.amount,
    bookingFee: bookingFeeOf(row.price_breakdown),
    commissionRate: row.commission_rate,
    cancellationFee: row.cancellation_fee,
    cashOnDelivery: extra.cashOnDelivery,
  };
}

/**
 * A job's `earnings` (section 21): before it ends, what its price would give; once DELIVERED or
 * COMPLETED, what was booked (the same split of the fare or price: `splitAmount` is what the ledger
 * booked from); a cancellation with a fee, that fee's split; FAILED, EXPIRED or cancelled without
 * a fee, zeros. Null for a job without a price.
 */
export function jobEarnings(row: MoneyColumns, amount: number | null, tip: number): Earnings | null {
  if (row.price_currency === null || amount === null) return null;
  const currency = row.price_currency;
  const zero = { driver: 0, commission: 0, bookingFee: 0, tip, currency };
  if (row.status === 'CANCELLED') {
    if (!row.cancellation_fee) return zero;
    return {
      ...splitCancellationFee({ fee: row.cancellation_fee, commissionRate: row.commission_rate }),
      tip,
      currency,
    };
  }
  if (row.status === 'FAILED' || row.status === 'EXPIRED') return zero;
  const bookingFee = Math.min(bookingFeeOf(row.price_breakdown), amount);
  return { ...splitAmount({ amount, bookingFee, commissionRate: row.commission_rate }), tip, currency };
}

/** Who sees a job's earnings: its driver, its driver's company and admins (section 21). */
export function seesEarnings(
  row: { driver_id: string | null; driver_company_id: string | null },
  auth: AuthContext,
): boolean {
  if (auth.role === 'ADMIN') return true;
  if (row.driver_id === null) return false;
  return auth.userId === row.driver_id || (auth.role === 'COMPANY' && row.driver_company_id === auth.userId);
}
