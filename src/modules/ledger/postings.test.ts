import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../shared/errors.js';
import {
  businessPaymentEntries,
  cancellationFeeEntries,
  cashOnDeliveryEntries,
  checkTransaction,
  jobCompletedEntries,
  payoutLineEntries,
  payoutLineFailedEntries,
  payoutLinePaidEntries,
  settlementEntries,
  splitAmount,
  splitCancellationFee,
  tipEntries,
  type EntryInput,
  type PartyRef,
} from './postings.js';

const DRIVER = '00000000-0000-4000-8000-000000000001';
const BUSINESS: PartyRef = { kind: 'BUSINESS', partyId: '00000000-0000-4000-8000-000000000002' };

const appError = (statusCode: number, code: string) => (err: unknown) => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.statusCode, statusCode);
  assert.equal(err.code, code);
  return true;
};

const sum = (entries: EntryInput[]) => entries.reduce((s, e) => s + e.amount, 0);
const net = (entries: EntryInput[], key: string) =>
  entries
    .filter((e) => ('partyId' in e.account ? e.account.partyId : 'kind' in e.account ? e.account.kind : '') === key)
    .reduce((s, e) => s + e.amount, 0);

test("a job amount: the booking fee is the operator's, the rest split by the rate with the commission rounded half up", () => {
  assert.deepEqual(splitAmount({ amount: 27_000, bookingFee: 2_000, commissionRate: 2000 }), {
    driver: 20_000,
    commission: 5_000,
    bookingFee: 2_000,
  });
  // 5 × 50 % = 2.5 → 3; 1 × 25 % = 0.25 → 0; 3 × 50 % = 1.5 → 2.
  assert.deepEqual(splitAmount({ amount: 5, bookingFee: 0, commissionRate: 5000 }), {
    driver: 2,
    commission: 3,
    bookingFee: 0,
  });
  assert.deepEqual(splitAmount({ amount: 1, bookingFee: 0, commissionRate: 2500 }), {
    driver: 1,
    commission: 0,
    bookingFee: 0,
  });
  assert.deepEqual(splitAmount({ amount: 13, bookingFee: 10, commissionRate: 5000 }), {
    driver: 1,
    commission: 2,
    bookingFee: 10,
  });
  assert.deepEqual(splitCancellationFee({ fee: 10_000, commissionRate: 2000 }), {
    driver: 8_000,
    commission: 2_000,
    bookingFee: 0,
  });
});

test('the split adds up to the amount, exactly, for any amount and rate (BigInt arithmetic past 2^53 products)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.integer({ min: 0, max: 10_000 }),
      fc.integer({ min: 0, max: 100 }),
      (amount, rate, feePercent) => {
        const bookingFee = Math.min(amount, Math.floor((amount / 100) * feePercent));
        const s = splitAmount({ amount, bookingFee, commissionRate: rate });
        assert.equal(s.driver + s.commission + s.bookingFee, amount);
        for (const part of Object.values(s)) assert.ok(Number.isSafeInteger(part) && part >= 0);
        const exact = (2n * BigInt(amount - bookingFee) * BigInt(rate) + 10_000n) / 20_000n;
        assert.equal(BigInt(s.commission), exact);
      },
    ),
  );
});

test('bad amounts and rates are 400s with a code', () => {
  assert.throws(
    () => splitAmount({ amount: 10.5, bookingFee: 0, commissionRate: 2000 }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(
    () => splitAmount({ amount: -1, bookingFee: 0, commissionRate: 2000 }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(
    () => splitAmount({ amount: 10, bookingFee: 11, commissionRate: 2000 }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(
    () => splitAmount({ amount: 10, bookingFee: 0, commissionRate: 10_001 }),
    appError(400, 'LEDGER_INVALID_RATE'),
  );
  assert.throws(
    () => splitAmount({ amount: 10, bookingFee: 0, commissionRate: 20.5 }),
    appError(400, 'LEDGER_INVALID_RATE'),
  );
  assert.throws(
    () => splitAmount({ amount: 2 ** 53, bookingFee: 0, commissionRate: 20 }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(
    () => tipEntries({ driverId: DRIVER, payer: BUSINESS, paymentMethod: 'ACCOUNT', amount: 0 }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(() => settlementEntries({ driverId: DRIVER, amount: -5 }), appError(400, 'LEDGER_INVALID_AMOUNT'));
  assert.throws(
    () => cashOnDeliveryEntries({ driverId: DRIVER, businessId: BUSINESS.partyId, amount: 0.1 }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(
    () => payoutLineEntries({ party: BUSINESS, amount: Number.NaN }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
});

test('a CASH job: the driver is charged what was collected and credited the earnings; the operator keeps commission and booking fee', () => {
  const entries = jobCompletedEntries({
    driverId: DRIVER,
    payer: BUSINESS,
    paymentMethod: 'CASH',
    amount: 27_000,
    bookingFee: 2_000,
    commissionRate: 2000,
  });
  assert.deepEqual(entries, [
    { account: { kind: 'DRIVER', partyId: DRIVER }, amount: -27_000, code: 'CASH_COLLECTED' },
    { account: { kind: 'DRIVER', partyId: DRIVER }, amount: 20_000, code: 'EARNINGS' },
    { account: { kind: 'OPERATOR_COMMISSION' }, amount: 5_000, code: 'COMMISSION' },
    { account: { kind: 'OPERATOR_BOOKING_FEES' }, amount: 2_000, code: 'BOOKING_FEE' },
  ]);
  assert.equal(net(entries, DRIVER), -7_000);
});

test('an ACCOUNT job: the business is charged, the driver credited; zero parts are left out', () => {
  const entries = jobCompletedEntries({
    driverId: DRIVER,
    payer: BUSINESS,
    paymentMethod: 'ACCOUNT',
    amount: 1_000,
    bookingFee: 0,
    commissionRate: 2000,
  });
  assert.deepEqual(entries, [
    { account: BUSINESS, amount: -1_000, code: 'JOB_CHARGE' },
    { account: { kind: 'DRIVER', partyId: DRIVER }, amount: 800, code: 'EARNINGS' },
    { account: { kind: 'OPERATOR_COMMISSION' }, amount: 200, code: 'COMMISSION' },
  ]);
  assert.deepEqual(
    jobCompletedEntries({
      driverId: DRIVER,
      payer: BUSINESS,
      paymentMethod: 'ACCOUNT',
      amount: 0,
      bookingFee: 0,
      commissionRate: 2000,
    }),
    [],
  );
});

test("tips: whole to the driver; in cash the driver's balance does not move but the tip is on the books", () => {
  const cash = tipEntries({ driverId: DRIVER, payer: BUSINESS, paymentMethod: 'CASH', amount: 500 });
  assert.equal(net(cash, DRIVER), 0);
  assert.deepEqual(
    cash.map((e) => e.code),
    ['CASH_COLLECTED', 'TIP'],
  );
  const account = tipEntries({ driverId: DRIVER, payer: BUSINESS, paymentMethod: 'ACCOUNT', amount: 500 });
  assert.equal(net(account, DRIVER), 500);
  assert.equal(net(account, BUSINESS.partyId), -500);
});

test('every flow balances, has no zero entry and passes the transaction check', () => {
  const party = fc.constantFrom<PartyRef>(
    BUSINESS,
    { kind: 'DRIVER', partyId: DRIVER },
    { kind: 'CUSTOMER', partyId: '00000000-0000-4000-8000-000000000003' },
  );
  const positive = fc.integer({ min: 1, max: 10 ** 12 });
  const flow = fc.oneof(
    fc
      .record({
        amount: positive,
        feePercent: fc.integer({ min: 0, max: 100 }),
        rate: fc.integer({ min: 0, max: 10_000 }),
        cash: fc.boolean(),
        payer: party,
      })
      .map((j) =>
        jobCompletedEntries({
          driverId: DRIVER,
          payer: j.payer,
          paymentMethod: j.cash ? 'CASH' : 'ACCOUNT',
          amount: j.amount,
          bookingFee: Math.floor((j.amount * j.feePercent) / 100),
          commissionRate: j.rate,
        }),
      ),
    fc
      .record({ fee: positive, rate: fc.integer({ min: 0, max: 10_000 }), payer: party })
      .map((f) => cancellationFeeEntries({ driverId: DRIVER, payer: f.payer, fee: f.fee, commissionRate: f.rate })),
    fc
      .record({ amount: positive, cash: fc.boolean() })
      .map((t) =>
        tipEntries({ driverId: DRIVER, payer: BUSINESS, paymentMethod: t.cash ? 'CASH' : 'ACCOUNT', amount: t.amount }),
      ),
    positive.map((amount) => cashOnDeliveryEntries({ driverId: DRIVER, businessId: BUSINESS.partyId, amount })),
    positive.map((amount) => settlementEntries({ driverId: DRIVER, amount })),
    positive.map((amount) => businessPaymentEntries({ businessId: BUSINESS.partyId, amount })),
    fc.tuple(party, positive).map(([p, amount]) => payoutLineEntries({ party: p, amount })),
    positive.map((amount) => payoutLinePaidEntries({ amount })),
    fc.tuple(party, positive).map(([p, amount]) => payoutLineFailedEntries({ party: p, amount })),
  );
  fc.assert(
    fc.property(flow, (entries) => {
      if (!entries.length) return;
      assert.equal(sum(entries), 0);
      assert.ok(entries.every((e) => e.amount !== 0 && Number.isSafeInteger(e.amount)));
      checkTransaction({ sourceKey: 'k', currency: 'KES', entries });
    }),
  );
});

test('the transaction check names what is wrong', () => {
  const two = settlementEntries({ driverId: DRIVER, amount: 100 });
  assert.throws(
    () => checkTransaction({ sourceKey: 'k', currency: 'KES', entries: [two[0]!, { ...two[1]!, amount: -99 }] }),
    appError(400, 'LEDGER_UNBALANCED'),
  );
  assert.throws(
    () => checkTransaction({ sourceKey: 'k', currency: 'KES', entries: [two[0]!] }),
    appError(400, 'LEDGER_TOO_FEW_ENTRIES'),
  );
  assert.throws(
    () =>
      checkTransaction({
        sourceKey: 'k',
        currency: 'KES',
        entries: [
          { ...two[0]!, amount: 0 },
          { ...two[1]!, amount: 0 },
        ],
      }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(
    () =>
      checkTransaction({
        sourceKey: 'k',
        currency: 'KES',
        entries: [
          { ...two[0]!, amount: 0.5 },
          { ...two[1]!, amount: -0.5 },
        ],
      }),
    appError(400, 'LEDGER_INVALID_AMOUNT'),
  );
  assert.throws(
    () => checkTransaction({ sourceKey: 'k', currency: 'kes', entries: two }),
    appError(400, 'LEDGER_INVALID_CURRENCY'),
  );
  assert.throws(
    () => checkTransaction({ sourceKey: 'a key', currency: 'KES', entries: two }),
    appError(400, 'LEDGER_INVALID_SOURCE_KEY'),
  );
  assert.throws(
    () => checkTransaction({ sourceKey: '', currency: 'KES', entries: two }),
    appError(400, 'LEDGER_INVALID_SOURCE_KEY'),
  );
  assert.throws(
    () =>
      checkTransaction({ sourceKey: 'k', currency: 'KES', entries: [two[0]!, { ...two[1]!, code: 'GIFT' as never }] }),
    appError(400, 'LEDGER_INVALID_ENTRY'),
  );
  // Two amounts at the safe limit sum past 2^53: the BigInt sum still sees that they do not cancel.
  const max = Number.MAX_SAFE_INTEGER;
  assert.throws(
    () =>
      checkTransaction({
        sourceKey: 'k',
        currency: 'KES',
        entries: [
          { ...two[0]!, amount: max },
          { ...two[0]!, amount: max },
          { ...two[1]!, amount: -max },
          { ...two[1]!, amount: -max + 1 },
        ],
      }),
    appError(400, 'LEDGER_UNBALANCED'),
  );
});
