// A payout batch as a bank's or mobile-money provider's bulk-upload file (contract section 21), and
// the ISO 4217 minor units it needs to write amounts in major units. Pure.
import { stringify } from 'csv-stringify/sync';
import { neutralizeCsvText } from '../../shared/csv-text.js';

/**
 * ISO 4217's minor units (List One, "Minor unit" column) of the currencies where it is not 2.
 * Written out rather than taken from Intl: ICU follows CLDR, which differs for some (CLDR gives
 * IQD 0, ISO 3).
 */
const MINOR_UNITS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

/** How many decimals the currency's major unit has (KES 2, UGX 0, KWD 3). */
export const minorUnits = (currency: string): number => MINOR_UNITS[currency] ?? 2;

/** A positive or negative amount in minor units as major units with exactly the currency's decimals: 1234 KES → "12.34". */
export function toMajorUnits(amount: number, currency: string): string {
  const digits = minorUnits(currency);
  const sign = amount < 0 ? '-' : '';
  const text = String(Math.abs(amount));
  if (digits === 0) return sign + text;
  const padded = text.padStart(digits + 1, '0');
  return `${sign}${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
}

export interface PayoutFileLine {
  name: string;
  phone: string;
  amount: number;
  currency: string;
  reference: string;
}

export const PAYOUT_FILE_COLUMNS = ['name', 'phone', 'amount', 'currency', 'reference'] as const;

/**
 * RFC 4180 CSV with a header row, CRLF line ends and no byte order mark (bulk-upload parsers tend to
 * read the first column name literally). The name is free text, neutralised against formulas; the
 * phone (E.164, validated at registration), amount, currency and reference are the service's own and
 * written as they are.
 */
export function payoutFileCsv(lines: PayoutFileLine[]): string {
  const records = lines.map((l) => [neutralizeCsvText(l.name), l.phone, toMajorUnits(l.amount, l.currency), l.currency, l.reference]);
  return stringify(records, { header: true, columns: [...PAYOUT_FILE_COLUMNS], record_delimiter: 'windows' });
}

/** A line's bank reference: short, unique, and readable on a statement (PO-12-00042). */
export const payoutReference = (batchNumber: number, seq: number) => `PO-${batchNumber}-${String(seq).padStart(5, '0')}`;
