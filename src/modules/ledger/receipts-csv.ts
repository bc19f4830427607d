// GET /admin/settlements and /admin/business-payments as CSV (contract section 21): one page of the
// list, as its JSON has it. Pure.
import { stringify } from 'csv-stringify/sync';
import { neutralizeCsvText } from '../../shared/csv-text.js';

export interface ListedReceipt {
  id: string;
  createdAt: string;
  partyId: string;
  partyName: string;
  amount: number;
  currency: string;
  reference: string;
  recordedBy: string;
  recordedByName: string;
  transactionId: string;
}

/**
 * RFC 4180 (CRLF, a header row, no byte order mark), amounts in minor units as in the JSON. The
 * names and the reference are free text, neutralised against formulas; ids, instants, amounts and
 * currencies are the service's own and written as they are.
 */
export function receiptsCsv(party: 'driver' | 'business', items: ListedReceipt[]): string {
  const columns = [
    'id',
    'createdAt',
    `${party}Id`,
    `${party}Name`,
    'amount',
    'currency',
    'reference',
    'recordedBy',
    'recordedByName',
    'transactionId',
  ];
  const records = items.map((r) => [
    r.id,
    r.createdAt,
    r.partyId,
    neutralizeCsvText(r.partyName),
    r.amount,
    r.currency,
    neutralizeCsvText(r.reference),
    r.recordedBy,
    neutralizeCsvText(r.recordedByName),
    r.transactionId,
  ]);
  return stringify(records, { header: true, columns, record_delimiter: 'windows' });
}
