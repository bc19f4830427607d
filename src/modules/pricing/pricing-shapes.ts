// Pricing's shapes: what a quote and a tariff look like to callers, and the small pure functions that
// build them from rows (split from pricing.service.ts, which re-exports what callers use).
import type { Selectable } from 'kysely';
import type { VehicleType } from '../../db/schema.js';
import type { TariffsTable } from '../../db/tables/pricing.js';
import { distanceMeters } from '../matching/driver-index.js';
import type { PriceRequest, StoredQuote } from './price.js';
import type { Availability } from './quote-timing.js';
import type { Point } from './routing.js';
import type { Breakdown, TariffValues } from './tariff.js';

/** A point of a job within this distance of the quote's counts as the same point. */
export const QUOTE_POINT_TOLERANCE_METERS = 25;

export interface QuoteResult {
  id: string;
  amount: number;
  currency: string;
  breakdown: Breakdown;
  distanceMeters: number;
  durationSeconds: number;
  pickupEtaSeconds: number | null;
  expiresAt: string;
  pickupEta?: string | null;
  dropoffEta?: string | null;
  availability?: Availability;
}

export interface LockQuoteInput extends PriceRequest {
  quoteId: string;
  /** The account creating the job (the quote must be its own). */
  accountId: string;
}

export interface TariffResult extends TariffValues {
  /** Basis points of (amount − booking fee) that are the operator's (section 21). */
  commissionRate: number;
  /** Basis points of a return's trip part (contract section 23; 10000 = 100 %). */
  returnRate: number;
  countryId: string;
  countryCode: string;
  currency: string;
  vehicleType: VehicleType;
  version: number;
  updatedAt: string;
}

export interface CountryInfo {
  id: string;
  code: string;
  currency: string;
}

export const tariffValues = (
  row: Pick<
    Selectable<TariffsTable>,
    'base' | 'per_km' | 'per_minute' | 'minimum' | 'booking_fee' | 'cancellation_fee'
  >,
): TariffValues => ({
  base: row.base,
  perKm: row.per_km,
  perMinute: row.per_minute,
  minimum: row.minimum,
  bookingFee: row.booking_fee,
  cancellationFee: row.cancellation_fee,
});

export function quoteMismatch(quote: StoredQuote, input: LockQuoteInput): string | undefined {
  if (quote.accountId !== input.accountId) return 'another account';
  if (quote.kind !== input.kind) return `a ${quote.kind === 'RIDE' ? 'ride' : 'package'}`;
  if (quote.vehicleType !== input.vehicleType) return `another vehicle type (${quote.vehicleType})`;
  if (quote.countryId !== input.countryId) return 'another country';
  const far = (a: Point, b: Point) => distanceMeters(a.lat, a.lng, b.lat, b.lng) > QUOTE_POINT_TOLERANCE_METERS;
  if (far(quote.pickup, input.pickup)) return 'another pickup point';
  if (far(quote.dropoff, input.dropoff)) return 'another dropoff point';
  return undefined;
}

export function toTariffResult(row: Selectable<TariffsTable>, country: CountryInfo): TariffResult {
  return {
    countryId: country.id,
    countryCode: country.code,
    currency: country.currency,
    vehicleType: row.vehicle_type,
    ...tariffValues(row),
    commissionRate: row.commission_rate,
    returnRate: row.return_rate,
    version: row.version,
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
