// A job's price (contract section 18), shared by packages and rides: locked from a quote or computed at
// creation in the creation's transaction, stored with what it came from, shown as { amount, currency }.
import type { Transaction } from 'kysely';
import type { Database, VehicleType } from '../../db/schema.js';
import type { JobPrice, PriceInputs } from '../pricing/price.js';
import type { PricingService } from '../pricing/pricing.service.js';
import type { Point } from '../pricing/routing.js';
import { divRoundHalfUp, type CancelledBy } from '../pricing/tariff.js';
import { json } from '../../db/json.js';

export type JobPricing = Pick<
  PricingService,
  'lockQuote' | 'priceWithoutQuote' | 'finalRideFare' | 'cancellationFee' | 'commissionRate' | 'returnRate'
>;

export interface Money {
  amount: number;
  currency: string;
}

export async function priceNewJob(
  pricing: JobPricing,
  trx: Transaction<Database>,
  job: {
    kind: 'PACKAGE' | 'RIDE';
    accountId: string;
    quoteId?: string;
    pickup: Point;
    dropoff: Point;
    vehicleType: VehicleType;
    countryId: string;
  },
): Promise<JobPrice> {
  const request = {
    kind: job.kind,
    pickup: job.pickup,
    dropoff: job.dropoff,
    vehicleType: job.vehicleType,
    countryId: job.countryId,
  };
  // The quote is marked used in the job's own transaction: a job that is not created leaves it usable.
  if (job.quoteId !== undefined)
    return pricing.lockQuote({ ...request, quoteId: job.quoteId, accountId: job.accountId }, trx);
  return pricing.priceWithoutQuote(request, trx);
}

export type { JobPrice };

/**
 * A return's price (contract section 23): the way back's price with its trip part (the amount less
 * the booking fee) scaled by `rateBp` basis points (the tariff's returnRate), rounded half up; the
 * booking fee is charged whole. The breakdown keeps adding up: `returnAdjustment` (negative for a
 * discount) is the change, `returnRate` the rate used.
 */
export function returnPrice(price: JobPrice, rateBp: number): JobPrice {
  const fee = price.breakdown.bookingFee;
  const trip = price.amount - fee;
  const scaled = divRoundHalfUp(trip * rateBp, 10_000);
  const breakdown = { ...price.breakdown, returnRate: rateBp, returnAdjustment: scaled - trip };
  return { ...price, amount: scaled + fee, breakdown };
}

export function priceColumns(price: JobPrice) {
  return {
    price_amount: price.amount,
    price_currency: price.currency,
    quote_id: price.quoteId,
    tariff_version: price.tariffVersion,
    surge: price.surge,
    price_breakdown: JSON.stringify(price.breakdown),
    price_inputs: JSON.stringify(price.inputs),
  };
}

type PricedRow = { price_amount: number | null; price_currency: string | null; price_inputs: unknown };

export const money = (amount: number | null, currency: string | null): Money | null =>
  amount === null || currency === null ? null : { amount, currency };

/** What the fare and the fee are computed from: the stored price (null for a job created before prices existed). */
export function storedPrice(row: PricedRow): { amount: number; currency: string; inputs: PriceInputs } | null {
  if (row.price_amount === null || row.price_currency === null || row.price_inputs === null) return null;
  return {
    amount: row.price_amount,
    currency: row.price_currency,
    inputs: json<PriceInputs>(row.price_inputs as never),
  };
}

/** The fee of a cancellation: its amount, or null (also for a job without a stored price). */
export function cancellationFeeFor(
  pricing: JobPricing,
  row: PricedRow,
  cancellation: { cancelledBy: CancelledBy; afterAssignment: boolean },
): number | null {
  const price = storedPrice(row);
  return price ? (pricing.cancellationFee(price, cancellation)?.amount ?? null) : null;
}

/**
 * cancellationFeeNow (contract section 20): what cancelling by the creator would cost at this moment,
 * the same fee the cancellation would charge (cancellationFeeFor); { amount: 0 } while cancelling is
 * free, null when the creator may not cancel now (or the job has no price).
 */
export function cancellationFeeNow(
  pricing: JobPricing,
  row: PricedRow,
  now: { creatorMayCancel: boolean; afterAssignment: boolean },
): Money | null {
  if (!now.creatorMayCancel || row.price_currency === null) return null;
  return {
    amount: cancellationFeeFor(pricing, row, { cancelledBy: 'CREATOR', afterAssignment: now.afterAssignment }) ?? 0,
    currency: row.price_currency,
  };
}

/** The parties of a job a viewer may be (contract section 20's visibility of tips and fees). */
export interface JobParties {
  creatorId: string;
  driverId: string | null;
  driverCompanyId: string | null;
}

/**
 * The money fields a job shows per viewer: `tip` to its creator, its driver, the driver's company
 * and admins; `cancellationFeeNow` to its creator only. Absent for anyone else.
 */
export function viewerMoney(
  parties: JobParties,
  viewer: { userId: string; role: string },
  values: { tip: Money | null; cancellationFeeNow: Money | null },
) {
  const isCreator = viewer.userId === parties.creatorId;
  const seesTip =
    isCreator ||
    viewer.role === 'ADMIN' ||
    (parties.driverId !== null &&
      (viewer.userId === parties.driverId || (viewer.role === 'COMPANY' && viewer.userId === parties.driverCompanyId)));
  return {
    ...(seesTip ? { tip: values.tip } : {}),
    ...(isCreator ? { cancellationFeeNow: values.cancellationFeeNow } : {}),
  };
}
