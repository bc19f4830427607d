// A business's statement (contract section 18): its packages that reached a final status in a period,
// what each was charged, and the totals per currency, as JSON or CSV.
import { stringify } from 'csv-stringify/sync';
import { neutralizeCsvText } from '../../shared/csv-text.js';
import { badRequest } from '../../shared/errors.js';
import { parseBound } from '../../shared/period-bound.js';
import type { PackagesRepository } from './packages.repository.js';
import type { StatementQuery, StatementResponse } from './statement.schemas.js';

export const MAX_STATEMENT_DAYS = 366;
export const MAX_STATEMENT_ROWS = 10_000;

/** What a final package is charged: its price when DELIVERED, its cancellation fee (if any) when CANCELLED, nothing when FAILED. */
function charges(row: { status: string; price_amount: number | null; cancellation_fee: number | null }) {
  const deliveryCharge = row.status === 'DELIVERED' ? (row.price_amount ?? 0) : 0;
  const cancellationFee = row.status === 'CANCELLED' ? (row.cancellation_fee ?? 0) : 0;
  return { deliveryCharge, cancellationFee, amount: deliveryCharge + cancellationFee };
}

export async function buildStatement(
  repo: PackagesRepository,
  businessId: string,
  query: StatementQuery,
): Promise<StatementResponse> {
  const from = parseBound('from', query.from);
  const to = parseBound('to', query.to);
  if (to.getTime() <= from.getTime())
    throw badRequest('querystring.to must be after querystring.from', 'VALIDATION_FAILED');
  if (to.getTime() - from.getTime() > MAX_STATEMENT_DAYS * 86_400_000) {
    throw badRequest(`A statement covers at most ${MAX_STATEMENT_DAYS} days`, 'STATEMENT_PERIOD_TOO_LONG');
  }
  const rows = await repo.finishedOf(businessId, from, to, MAX_STATEMENT_ROWS + 1);
  if (rows.length > MAX_STATEMENT_ROWS) {
    throw badRequest(
      `More than ${MAX_STATEMENT_ROWS} packages in this period: ask for a shorter one`,
      'STATEMENT_TOO_LARGE',
    );
  }
  const items = rows.map((r) => ({
    packageId: r.id,
    reference: r.reference,
    status: r.status as 'DELIVERED' | 'FAILED' | 'CANCELLED',
    vehicleType: r.vehicle_type,
    countryId: r.country_id,
    createdAt: r.created_at.toISOString(),
    finishedAt: r.finished_at!.toISOString(),
    currency: r.price_currency,
    price: r.price_amount,
    ...charges(r),
  }));
  const totals = new Map<
    string | null,
    { currency: string | null; packages: number; deliveryCharges: number; cancellationFees: number; amount: number }
  >();
  for (const item of items) {
    const total = totals.get(item.currency) ?? {
      currency: item.currency,
      packages: 0,
      deliveryCharges: 0,
      cancellationFees: 0,
      amount: 0,
    };
    total.packages += 1;
    total.deliveryCharges += item.deliveryCharge;
    total.cancellationFees += item.cancellationFee;
    total.amount += item.amount;
    totals.set(item.currency, total);
  }
  return {
    businessId,
    from: from.toISOString(),
    to: to.toISOString(),
    items,
    totals: [...totals.values()].sort((a, b) => (a.currency ?? '').localeCompare(b.currency ?? '')),
  };
}

const COLUMNS = [
  'type',
  'packageId',
  'reference',
  'status',
  'vehicleType',
  'createdAt',
  'finishedAt',
  'currency',
  'price',
  'deliveryCharge',
  'cancellationFee',
  'amount',
] as const;

/**
 * RFC 4180 CSV (csv-stringify: CRLF, quotes doubled), a PACKAGE row per item, then a TOTAL row per
 * currency. Free text (the business's reference) cannot start a formula in a spreadsheet; ids,
 * statuses, times and amounts are the service's own and written as they are.
 */
export function statementCsv(statement: StatementResponse): string {
  const text = (v: string | null) => (v === null ? '' : neutralizeCsvText(v));
  const records: (string | number)[][] = [];
  for (const i of statement.items) {
    records.push([
      'PACKAGE',
      i.packageId,
      text(i.reference),
      i.status,
      i.vehicleType,
      i.createdAt,
      i.finishedAt,
      text(i.currency),
      i.price ?? '',
      i.deliveryCharge,
      i.cancellationFee,
      i.amount,
    ]);
  }
  for (const t of statement.totals) {
    records.push([
      'TOTAL',
      '',
      '',
      '',
      '',
      '',
      '',
      text(t.currency),
      '',
      t.deliveryCharges,
      t.cancellationFees,
      t.amount,
    ]);
  }
  return stringify(records, { header: true, columns: [...COLUMNS], record_delimiter: 'windows', bom: true });
}
