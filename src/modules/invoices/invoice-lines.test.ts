// The pure parts of invoices: lines from ledger entries, totals, numbers, months and PDF amounts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { invoiceLines, invoiceNumber, invoiceTotals, jobOfSourceKey } from './invoice-lines.js';
import { monthOf, parseMonth, previousMonth } from './invoice-month.js';
import { formatAmount } from '../../shared/money.js';

const id = '0b7f3c1e-8a4d-4a36-9b7e-2f6c1d0e9a11';

test('the job a source key names', () => {
  assert.deepEqual(jobOfSourceKey(`job:PACKAGE:${id}:completed`), { jobType: 'PACKAGE', jobId: id });
  assert.deepEqual(jobOfSourceKey(`job:RIDE:${id}:cancellation-fee`), { jobType: 'RIDE', jobId: id });
  assert.deepEqual(jobOfSourceKey(`tip:PACKAGE:${id}`), { jobType: 'PACKAGE', jobId: id });
  assert.deepEqual(jobOfSourceKey(`cod:${id}`), { jobType: 'PACKAGE', jobId: id });
  assert.equal(jobOfSourceKey(`business-payment:${id}`), undefined);
  assert.equal(jobOfSourceKey(`payout-line:${id}:failed`), undefined);
});

test('lines keep the ledger sign; totals add up to the net; unknown codes are OTHER', () => {
  const at = new Date('2026-10-05T09:00:00Z');
  const lines = invoiceLines(
    [
      { amount: -10_000, code: 'JOB_CHARGE', createdAt: at, sourceKey: `job:PACKAGE:${id}:completed`, memo: null },
      { amount: -2000, code: 'JOB_CHARGE', createdAt: at, sourceKey: `job:RIDE:${id}:completed`, memo: null },
      { amount: 3000, code: 'BUSINESS_PAYMENT', createdAt: at, sourceKey: `business-payment:${id}`, memo: 'BANK-1' },
      { amount: -400, code: 'PAYOUT', createdAt: at, sourceKey: `payout-line:${id}`, memo: null },
      { amount: 400, code: 'PAYOUT_FAILED', createdAt: at, sourceKey: `payout-line:${id}:failed`, memo: null },
      { amount: 7, code: 'SOMETHING_NEW', createdAt: at, sourceKey: 'x', memo: null },
    ],
    new Map([[id, 'ORD-9']]),
  );
  assert.deepEqual(
    lines.map((l) => [l.kind, l.description, l.reference, l.amount]),
    [
      ['DELIVERY', 'Delivery', 'ORD-9', -10_000],
      ['DELIVERY', 'Ride', null, -2000],
      ['PAYMENT', 'Payment received', 'BANK-1', 3000],
      ['PAYOUT', 'Payout to you', null, -400],
      ['PAYOUT', 'Payout returned (failed)', null, 400],
      ['OTHER', 'SOMETHING_NEW', null, 7],
    ],
  );
  assert.deepEqual(invoiceTotals(lines), {
    deliveries: -12_000,
    deliveryCount: 2,
    cancellationFees: 0,
    tips: 0,
    cashOnDelivery: 0,
    payments: 3000,
    payouts: 0,
    other: 7,
    net: -8993,
  });
});

test('numbers and months (UTC)', () => {
  assert.equal(invoiceNumber(1), 'INV-000001');
  assert.equal(invoiceNumber(1_234_567), 'INV-1234567');
  assert.deepEqual(parseMonth('2026-12'), {
    month: '2026-12',
    monthStart: '2026-12-01',
    start: new Date('2026-12-01T00:00:00Z'),
    end: new Date('2027-01-01T00:00:00Z'),
  });
  assert.equal(previousMonth('2027-01'), '2026-12');
  assert.equal(monthOf(new Date('2026-10-31T23:59:59.999Z')), '2026-10');
});

test("PDF amounts: the currency's decimals, thousands separators, exact", () => {
  assert.equal(formatAmount(-1_234_567, 'KES'), '-12,345.67');
  assert.equal(formatAmount(5, 'KES'), '0.05');
  assert.equal(formatAmount(0, 'KES'), '0.00');
  assert.equal(formatAmount(5_000_000, 'UGX'), '5,000,000');
  assert.equal(formatAmount(1234, 'KWD'), '1.234');
  assert.equal(formatAmount(Number.MAX_SAFE_INTEGER, 'USD'), '90,071,992,547,409.91');
});
