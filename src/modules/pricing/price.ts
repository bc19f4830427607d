// What a price and a quote are made of (contract section 18): the shapes the pricing service, the
// quote store and the jobs share. No I/O, and no import of the service (nothing here depends on it).
import type { VehicleType } from '../../db/schema.js';
import type { QuoteKind } from '../../db/tables/pricing.js';
import type { Point } from './routing.js';
import type { Breakdown, TariffValues } from './tariff.js';

export interface PriceRequest {
  kind: QuoteKind;
  pickup: Point;
  dropoff: Point;
  vehicleType: VehicleType;
  countryId: string;
}

/** Everything a price came from: with these, the price is recomputed by arithmetic alone. */
export interface PriceInputs {
  kind: QuoteKind;
  pickup: Point;
  dropoff: Point;
  vehicleType: VehicleType;
  countryId: string;
  currency: string;
  tariff: TariffValues & { version: number };
  routing: string;
  distanceMeters: number;
  durationSeconds: number;
  surge: number;
  pricedAt: string;
}

/** A job's price: what the job stores (amount and currency shown; the rest kept to recompute it). */
export interface JobPrice {
  amount: number;
  currency: string;
  breakdown: Breakdown;
  tariffVersion: number;
  surge: number;
  /** The quote it was locked from; null when computed at creation. */
  quoteId: string | null;
  inputs: PriceInputs;
}

/**
 * A quote as it is kept until it expires (quote-store.ts): the inputs its price came from (the surge
 * is the breakdown's, the time is createdAt), the price, the account it was given to, and when.
 */
export interface StoredQuote extends Omit<PriceInputs, 'surge' | 'pricedAt'> {
  /** A UUID: the quote's id in POST /quotes, its key in the store, and the jobs' `quote_id`. */
  id: string;
  accountId: string;
  amount: number;
  breakdown: Breakdown;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
}

/** What a job priced from this quote keeps: the inverse of how the quote was made from its price's inputs. */
export function quoteInputs(quote: StoredQuote): PriceInputs {
  const {
    id: _id,
    accountId: _accountId,
    amount: _amount,
    breakdown,
    createdAt,
    expiresAt: _expiresAt,
    ...inputs
  } = quote;
  return { ...inputs, surge: breakdown.surge, pricedAt: new Date(createdAt).toISOString() };
}
