// The price arithmetic of contract section 18. Pure, and integers only: money is in the currency's
// minor unit, distance in whole metres, time in whole seconds, surge in tenths (12 is ×1.2). Every
// product that has a fraction (perKm × km, perMinute × minutes, trip × (surge − 1)) is an exact
// integer numerator over an integer denominator, rounded once, half up: no floating-point money.

/** The largest amount a tariff field may hold: keeps every product below 2^53 (see `divRoundHalfUp`). */
export const MAX_MONEY = 1_000_000_000;

export interface TariffValues {
  base: number;
  perKm: number;
  perMinute: number;
  minimum: number;
  bookingFee: number;
  cancellationFee: number;
}

export const TARIFF_FIELDS: (keyof TariffValues)[] = [
  'base',
  'perKm',
  'perMinute',
  'minimum',
  'bookingFee',
  'cancellationFee',
];

export interface Breakdown {
  base: number;
  distance: number;
  time: number;
  /** The multiplier with one decimal (1.0 to SURGE_MAX). */
  surge: number;
  surgeAmount: number;
  minimumTopUp: number;
  bookingFee: number;
}

export interface PriceParts {
  amount: number;
  breakdown: Breakdown;
}

/**
 * round(n / d) half up, for n ≥ 0 and d > 0 integers: floor((2n + d) / 2d). Exact as long as 2n + d
 * stays below 2^53 (with MAX_MONEY and a trip under 10,000 km it is below 2^51).
 */
export function divRoundHalfUp(n: number, d: number): number {
  return Math.floor((2 * n + d) / (2 * d));
}

function assertWhole(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative integer (got ${value})`);
}

/** The surge multiplier as a number with one decimal, from tenths. */
export const surgeFromTenths = (tenths: number) => tenths / 10;
/** Tenths from a stored multiplier (1.2 → 12); the multiplier always has one decimal. */
export const tenthsFromSurge = (surge: number) => Math.round(surge * 10);

/**
 * The price of a trip: `trip = base + distance + time`, `surgeAmount = round(trip × (surge − 1))`,
 * `minimumTopUp = max(0, minimum − trip − surgeAmount)`, `amount = trip + surgeAmount + minimumTopUp + bookingFee`.
 * distance = round(perKm × metres / 1000), time = round(perMinute × seconds / 60).
 */
export function priceTrip(
  tariff: TariffValues,
  trip: { distanceMeters: number; durationSeconds: number; surgeTenths: number },
): PriceParts {
  for (const field of TARIFF_FIELDS) assertWhole(field, tariff[field]);
  assertWhole('distanceMeters', trip.distanceMeters);
  assertWhole('durationSeconds', trip.durationSeconds);
  if (!Number.isInteger(trip.surgeTenths) || trip.surgeTenths < 10)
    throw new RangeError(`surge must be at least 1.0 (got ${trip.surgeTenths} tenths)`);
  const distance = divRoundHalfUp(tariff.perKm * trip.distanceMeters, 1000);
  const time = divRoundHalfUp(tariff.perMinute * trip.durationSeconds, 60);
  const tripAmount = tariff.base + distance + time;
  const surgeAmount = divRoundHalfUp(tripAmount * (trip.surgeTenths - 10), 10);
  const minimumTopUp = Math.max(0, tariff.minimum - tripAmount - surgeAmount);
  const amount = tripAmount + surgeAmount + minimumTopUp + tariff.bookingFee;
  return {
    amount,
    breakdown: {
      base: tariff.base,
      distance,
      time,
      surge: surgeFromTenths(trip.surgeTenths),
      surgeAmount,
      minimumTopUp,
      bookingFee: tariff.bookingFee,
    },
  };
}

/** The most a completed ride may cost: 1.25 × its price, rounded down so it is never more. */
export const fareCap = (priceAmount: number) => Math.floor((priceAmount * 5) / 4);

export interface FinalFare extends PriceParts {
  /** What the actual trip came to before the cap. */
  uncappedAmount: number;
  capped: boolean;
}

/**
 * The final fare of a ride: the same tariff and surge as its price, over the actual distance and
 * time, never more than 1.25 × the price. The breakdown is the actual trip's; when capped, `amount`
 * is the cap and `uncappedAmount` says what the trip came to.
 */
export function finalFare(
  tariff: TariffValues,
  price: { amount: number; surgeTenths: number },
  actual: { distanceMeters: number; durationSeconds: number },
): FinalFare {
  const parts = priceTrip(tariff, {
    distanceMeters: Math.round(actual.distanceMeters),
    durationSeconds: Math.round(actual.durationSeconds),
    surgeTenths: price.surgeTenths,
  });
  const cap = fareCap(price.amount);
  return {
    amount: Math.min(parts.amount, cap),
    breakdown: parts.breakdown,
    uncappedAmount: parts.amount,
    capped: parts.amount > cap,
  };
}

export type CancelledBy = 'CREATOR' | 'DRIVER' | 'ADMIN';

/**
 * The cancellation fee: the tariff's, when the job's creator cancels it after a driver was assigned;
 * none when a driver releases it, an admin cancels it, or nobody was assigned yet.
 */
export function cancellationFeeAmount(
  tariff: TariffValues,
  cancellation: { cancelledBy: CancelledBy; afterAssignment: boolean },
): number | null {
  if (cancellation.cancelledBy !== 'CREATOR' || !cancellation.afterAssignment) return null;
  return tariff.cancellationFee > 0 ? tariff.cancellationFee : null;
}
