// A payout batch as a bank's or mobile-money provider's bulk-upload file (contract section 21), its
// amounts in major units with ISO 4217's decimals (src/shared/money.ts). Pure.
import { stringify } from 'csv-stringify/sync';
import { neutralizeCsvText } from '../../shared/csv-text.js';
import { majorText } from '../../shared/money.js';

/** A positive or negative amount in minor units as major units with exactly the currency's ISO 4217 decimals: 1234 KES → "12.34". */
export const toMajorUnits = majorText;

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
  const records = lines.map((l) => [
    neutralizeCsvText(l.name),
    l.phone,
    toMajorUnits(l.amount, l.currency),
    l.currency,
    l.reference,
  ]);
  return stringify(records, { header: true, columns: [...PAYOUT_FILE_COLUMNS], record_delimiter: 'windows' });
}

/** A line's bank reference: short, unique, and readable on a statement (PO-12-00042). */
export const payoutReference = (batchNumber: number, seq: number) =>
  `PO-${batchNumber}-${String(seq).padStart(5, '0')}`;
