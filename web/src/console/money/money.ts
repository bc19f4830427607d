// Money in the admin's forms: amounts are typed in major units ("70.00 KES") and sent in minor units,
// moved digit by digit (no floating point).

/** The currency's ISO 4217 decimals as the browser's Intl knows them (KES 2, UGX 0). */
export function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** "70.5" KES → 7050; undefined for anything that is not a positive amount with at most the currency's decimals. */
export function toMinorUnits(text: string, currency: string): number | undefined {
  const digits = currencyDigits(currency);
  const m = /^\s*(\d+)(?:[.,](\d*))?\s*$/.exec(text);
  if (!m || (m[2] ?? '').length > digits) return undefined;
  const minor = Number(m[1] + (m[2] ?? '').padEnd(digits, '0'));
  return Number.isSafeInteger(minor) && minor > 0 ? minor : undefined;
}

/** A fresh Idempotency-Key: one per click, so a double click or a retried request records once. */
export const newIdempotencyKey = () => crypto.randomUUID();

/** 7050 KES → "70.50": exact, for a form's field. */
export function toMajorText(minor: number, currency: string): string {
  const digits = currencyDigits(currency);
  if (!digits) return String(minor);
  const text = String(Math.abs(minor)).padStart(digits + 1, '0');
  return `${minor < 0 ? '-' : ''}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}
