// The pure parts of failed deliveries' follow-ups (contract section 23): a return's price from the
// way back's price and the tariff's returnRate, and who holds the parcel of a failed package.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { returnPrice, type JobPrice } from '../jobs/job-price.js';
import { parcelHolder } from './package-follow-ups.js';

const price = (trip: number, bookingFee: number): JobPrice =>
  ({
    amount: trip + bookingFee,
    currency: 'KES',
    breakdown: { base: trip, distance: 0, time: 0, surge: 1, surgeAmount: 0, minimumTopUp: 0, bookingFee },
    tariffVersion: 1,
    surge: 1,
    quoteId: null,
    inputs: {} as JobPrice['inputs'],
  }) as JobPrice;

test('a return costs the trip part × returnRate (rounded half up) plus the whole booking fee', () => {
  assert.equal(returnPrice(price(10_000, 2_000), 10_000).amount, 12_000);
  assert.equal(returnPrice(price(10_000, 2_000), 5_000).amount, 7_000);
  assert.equal(returnPrice(price(10_000, 2_000), 0).amount, 2_000);
  assert.equal(returnPrice(price(10_000, 2_000), 15_000).amount, 17_000);
  // 333 × 0.5 = 166.5 → 167 (half up).
  assert.equal(returnPrice(price(333, 0), 5_000).amount, 167);
  const b = returnPrice(price(10_000, 2_000), 5_000).breakdown as JobPrice['breakdown'] & Record<string, number>;
  assert.equal(b.returnRate, 5_000);
  assert.equal(b.returnAdjustment, -5_000);
});

test('property: integer minor units, the breakdown adds up, the booking fee never scaled', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 10 ** 9 }),
      fc.integer({ min: 0, max: 10 ** 7 }),
      fc.integer({ min: 0, max: 20_000 }),
      (trip, fee, rate) => {
        const p = returnPrice(price(trip, fee), rate);
        const b = p.breakdown as JobPrice['breakdown'] & { returnAdjustment: number };
        assert.ok(Number.isSafeInteger(p.amount) && p.amount >= fee);
        assert.equal(
          b.base + b.distance + b.time + b.surgeAmount + b.minimumTopUp + b.bookingFee + b.returnAdjustment,
          p.amount,
        );
        assert.ok(Math.abs(p.amount - fee - (trip * rate) / 10_000) <= 0.5);
      },
    ),
  );
});

test('the failing driver holds the parcel when the failure came after pickup', () => {
  const h = (...statuses: string[]) => statuses.map((status) => ({ status, at: '2026-12-07T10:00:00.000Z' }));
  const driver = 'd1';
  assert.equal(
    parcelHolder({ driver_id: driver, status_history: h('PENDING', 'ASSIGNED', 'PICKED_UP', 'FAILED') }),
    driver,
  );
  assert.equal(
    parcelHolder({ driver_id: driver, status_history: h('PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT', 'FAILED') }),
    driver,
  );
  assert.equal(parcelHolder({ driver_id: driver, status_history: h('PENDING', 'ASSIGNED', 'FAILED') }), null);
  // JSON text as a driver may return the column.
  assert.equal(
    parcelHolder({
      driver_id: driver,
      status_history: JSON.stringify(h('PENDING', 'ASSIGNED', 'IN_TRANSIT', 'FAILED')),
    }),
    driver,
  );
  assert.equal(parcelHolder({ driver_id: null, status_history: h('PICKED_UP', 'FAILED') }), null);
  assert.equal(parcelHolder({ driver_id: driver, status_history: h('PENDING') }), null);
});
