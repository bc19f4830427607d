// Money in the admin's forms: amounts are typed in major units ("70.00 KES") and sent in minor units,
// moved digit by digit (no floating point) with ISO 4217's decimals (web/src/shared/money.ts).
import { majorText, parseAmount } from '../../shared/money.js';

/** "70.5" KES → 7050; undefined for anything that is not a positive amount with at most the currency's decimals. */
export function toMinorUnits(text: string, currency: string): number | undefined {
  const minor = parseAmount(text, currency);
  return minor !== undefined && minor > 0 ? minor : undefined;
}

/** A fresh Idempotency-Key: one per click, so a double click or a retried request records once. */
export const newIdempotencyKey = () => crypto.randomUUID();

/** 7050 KES → "70.50": exact, for a form's field. */
export const toMajorText = majorText;
