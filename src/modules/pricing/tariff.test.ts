import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  cancellationFeeAmount,
  divRoundHalfUp,
  fareCap,
  finalFare,
  MAX_MONEY,
  priceTrip,
  type TariffValues,
} from './tariff.js';

const money = fc.integer({ min: 0, max: MAX_MONEY });
const smallMoney = fc.integer({ min: 0, max: 1_000_000 });
const tariff = (m: fc.Arbitrary<number>) =>
  fc.record<TariffValues>({ base: m, perKm: m, perMinute: m, minimum: m, bookingFee: m, cancellationFee: m });
const metres = fc.integer({ min: 0, max: 400_000 });
const seconds = fc.integer({ min: 0, max: 200_000 });
const surge = fc.integer({ min: 10, max: 100 });

test('the worked example of docs/pricing.md', () => {
  const kenyaCar = {
    base: 10_000,
    perKm: 4_000,
    perMinute: 400,
    minimum: 25_000,
    bookingFee: 2_000,
    cancellationFee: 10_000,
  };
  const { amount, breakdown } = priceTrip(kenyaCar, { distanceMeters: 7_250, durationSeconds: 870, surgeTenths: 12 });
  assert.deepEqual(breakdown, {
    base: 10_000,
    distance: 29_000,
    time: 5_800,
    surge: 1.2,
    surgeAmount: 8_960,
    minimumTopUp: 0,
    bookingFee: 2_000,
  });
  assert.equal(amount, 55_760);
  const short = priceTrip(kenyaCar, { distanceMeters: 900, durationSeconds: 108, surgeTenths: 10 });
  assert.deepEqual(short.breakdown, {
    base: 10_000,
    distance: 3_600,
    time: 720,
    surge: 1,
    surgeAmount: 0,
    minimumTopUp: 10_680,
    bookingFee: 2_000,
  });
  assert.equal(short.amount, 27_000);
});

test('each part is rounded half up, once', () => {
  assert.equal(divRoundHalfUp(1500, 1000), 2);
  assert.equal(divRoundHalfUp(1499, 1000), 1);
  assert.equal(divRoundHalfUp(2500, 1000), 3);
  // perKm 1 over 500 m is half a unit: up. (Floating-point 0.1 * 5 would be fine here, 1.005 * 1000 not.)
  assert.equal(
    priceTrip(
      { base: 0, perKm: 1, perMinute: 0, minimum: 0, bookingFee: 0, cancellationFee: 0 },
      { distanceMeters: 500, durationSeconds: 0, surgeTenths: 10 },
    ).breakdown.distance,
    1,
  );
  assert.equal(
    priceTrip(
      { base: 0, perKm: 0, perMinute: 1, minimum: 0, bookingFee: 0, cancellationFee: 0 },
      { distanceMeters: 0, durationSeconds: 30, surgeTenths: 10 },
    ).breakdown.time,
    1,
  );
  assert.equal(
    priceTrip(
      { base: 5, perKm: 0, perMinute: 0, minimum: 0, bookingFee: 0, cancellationFee: 0 },
      { distanceMeters: 0, durationSeconds: 0, surgeTenths: 11 },
    ).breakdown.surgeAmount,
    1,
  );
});

test('property: the parts add up to the amount, all integers, amount ≥ minimum + bookingFee', () => {
  fc.assert(
    fc.property(tariff(money), metres, seconds, surge, (t, distanceMeters, durationSeconds, surgeTenths) => {
      const { amount, breakdown } = priceTrip(t, { distanceMeters, durationSeconds, surgeTenths });
      const { base, distance, time, surgeAmount, minimumTopUp, bookingFee } = breakdown;
      for (const part of [amount, base, distance, time, surgeAmount, minimumTopUp, bookingFee])
        assert.ok(Number.isSafeInteger(part) && part >= 0, `${part}`);
      assert.equal(base + distance + time + surgeAmount + minimumTopUp + bookingFee, amount);
      assert.ok(amount >= t.minimum + t.bookingFee);
      assert.equal(breakdown.surge * 10, surgeTenths);
    }),
    { numRuns: 2000 },
  );
});

test('property: each part equals the exact rational result rounded half up (checked with BigInt)', () => {
  const roundHalfUp = (n: bigint, d: bigint) => (2n * n + d) / (2n * d);
  fc.assert(
    fc.property(tariff(money), metres, seconds, surge, (t, distanceMeters, durationSeconds, surgeTenths) => {
      const { breakdown } = priceTrip(t, { distanceMeters, durationSeconds, surgeTenths });
      assert.equal(BigInt(breakdown.distance), roundHalfUp(BigInt(t.perKm) * BigInt(distanceMeters), 1000n));
      assert.equal(BigInt(breakdown.time), roundHalfUp(BigInt(t.perMinute) * BigInt(durationSeconds), 60n));
      const trip = BigInt(t.base + breakdown.distance + breakdown.time);
      assert.equal(BigInt(breakdown.surgeAmount), roundHalfUp(trip * BigInt(surgeTenths - 10), 10n));
    }),
  );
});

test('property: the amount never falls as the distance, the time or the surge grows', () => {
  fc.assert(
    fc.property(tariff(smallMoney), metres, metres, seconds, surge, surge, (t, d1, d2, s, g1, g2) => {
      const [dLo, dHi] = d1 <= d2 ? [d1, d2] : [d2, d1];
      const [gLo, gHi] = g1 <= g2 ? [g1, g2] : [g2, g1];
      assert.ok(
        priceTrip(t, { distanceMeters: dLo, durationSeconds: s, surgeTenths: gLo }).amount <=
          priceTrip(t, { distanceMeters: dHi, durationSeconds: s, surgeTenths: gLo }).amount,
      );
      assert.ok(
        priceTrip(t, { distanceMeters: dLo, durationSeconds: s, surgeTenths: gLo }).amount <=
          priceTrip(t, { distanceMeters: dLo, durationSeconds: s, surgeTenths: gHi }).amount,
      );
    }),
    { numRuns: 1000 },
  );
});

test('property: the final fare is the actual trip, never more than 1.25 × the price', () => {
  fc.assert(
    fc.property(tariff(smallMoney), metres, seconds, metres, seconds, surge, (t, qd, qs, ad, as, g) => {
      const price = priceTrip(t, { distanceMeters: qd, durationSeconds: qs, surgeTenths: g });
      const fare = finalFare(t, { amount: price.amount, surgeTenths: g }, { distanceMeters: ad, durationSeconds: as });
      const actual = priceTrip(t, { distanceMeters: ad, durationSeconds: as, surgeTenths: g });
      assert.ok(fare.amount <= price.amount * 1.25);
      assert.ok(Number.isSafeInteger(fare.amount));
      assert.equal(fare.uncappedAmount, actual.amount);
      assert.equal(fare.amount, Math.min(actual.amount, fareCap(price.amount)));
      assert.equal(fare.capped, actual.amount > fareCap(price.amount));
    }),
  );
  const t = { base: 100, perKm: 100, perMinute: 0, minimum: 0, bookingFee: 0, cancellationFee: 0 };
  const fare = finalFare(t, { amount: 1_100, surgeTenths: 10 }, { distanceMeters: 30_000, durationSeconds: 0 });
  assert.deepEqual([fare.amount, fare.uncappedAmount, fare.capped], [1_375, 3_100, true]);
});

test('the cancellation fee: only the creator, only after assignment', () => {
  const t = { base: 0, perKm: 0, perMinute: 0, minimum: 0, bookingFee: 0, cancellationFee: 500 };
  assert.equal(cancellationFeeAmount(t, { cancelledBy: 'CREATOR', afterAssignment: true }), 500);
  assert.equal(cancellationFeeAmount(t, { cancelledBy: 'CREATOR', afterAssignment: false }), null);
  assert.equal(cancellationFeeAmount(t, { cancelledBy: 'DRIVER', afterAssignment: true }), null);
  assert.equal(cancellationFeeAmount(t, { cancelledBy: 'ADMIN', afterAssignment: true }), null);
  assert.equal(
    cancellationFeeAmount({ ...t, cancellationFee: 0 }, { cancelledBy: 'CREATOR', afterAssignment: true }),
    null,
  );
});

test('bad input is refused, not priced', () => {
  const t = { base: 1, perKm: 1, perMinute: 1, minimum: 1, bookingFee: 1, cancellationFee: 1 };
  assert.throws(
    () => priceTrip({ ...t, base: 1.5 }, { distanceMeters: 1, durationSeconds: 1, surgeTenths: 10 }),
    RangeError,
  );
  assert.throws(
    () => priceTrip({ ...t, perKm: -1 }, { distanceMeters: 1, durationSeconds: 1, surgeTenths: 10 }),
    RangeError,
  );
  assert.throws(() => priceTrip(t, { distanceMeters: 1.5, durationSeconds: 1, surgeTenths: 10 }), RangeError);
  assert.throws(() => priceTrip(t, { distanceMeters: 1, durationSeconds: 1, surgeTenths: 9 }), RangeError);
});
