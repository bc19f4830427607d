// The SLA and the alert rules (pure): promises, risks, and each condition at its edge.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assess, evaluate, promiseOf, slaOf, type MonitoredJob, type MonitorRules } from './sla.js';

const MIN = 60_000;
const T0 = Date.parse('2026-12-07T10:00:00Z');
const rules: MonitorRules = {
  asapSlackMs: 15 * MIN,
  atRiskMarginMs: 5 * MIN,
  unansweredAfterMs: 10 * MIN,
  stalledAfterMs: 10 * MIN,
};
const PICKUP = { lat: -1.2864, lng: 36.8172 };

const job = (over: Partial<MonitoredJob> = {}): MonitoredJob => ({
  jobType: 'PACKAGE',
  jobId: 'j',
  status: 'PENDING',
  vehicleType: 'BIKE',
  createdAtMs: T0,
  pickupWindowStartMs: null,
  pickupWindowEndMs: null,
  dropoffWindowEndMs: null,
  scheduledAtMs: null,
  durationSeconds: 600,
  pickup: PICKUP,
  dropoff: { lat: -1.3, lng: 36.8 },
  driverId: null,
  driver: null,
  businessId: null,
  driverCompanyId: null,
  dispatchState: null,
  enteredAtMs: null,
  offers: 0,
  watch: null,
  raised: [],
  ...over,
});
const kinds = (j: MonitoredJob, now: number) => evaluate(j, now, rules).raise.map((r) => r.kind);

test('an ASAP promise is creation + ASAP_SLACK, the drop-off the trip later; windows win', () => {
  assert.deepEqual(promiseOf(job(), rules), { pickupBy: T0 + 15 * MIN, dropoffBy: T0 + 25 * MIN });
  assert.deepEqual(promiseOf(job({ pickupWindowEndMs: T0 + 60 * MIN, dropoffWindowEndMs: T0 + 120 * MIN }), rules), {
    pickupBy: T0 + 60 * MIN,
    dropoffBy: T0 + 120 * MIN,
  });
  assert.deepEqual(promiseOf(job({ dropoffWindowEndMs: T0 + 120 * MIN }), rules), {
    pickupBy: T0 + 110 * MIN,
    dropoffBy: T0 + 120 * MIN,
  });
  assert.equal(promiseOf(job({ jobType: 'RIDE', scheduledAtMs: T0 + 40 * MIN }), rules).pickupBy, T0 + 40 * MIN);
});

test('risk: OK, AT_RISK from AT_RISK_MARGIN before the end, LATE after it', () => {
  assert.equal(assess(job(), T0 + 10 * MIN, rules).risk, 'OK');
  assert.equal(assess(job(), T0 + 10 * MIN + 1, rules).risk, 'AT_RISK');
  assert.equal(assess(job(), T0 + 15 * MIN + 1, rules).risk, 'LATE');
  // Picked up: only the drop-off counts.
  assert.equal(
    assess(job({ status: 'PICKED_UP', driverId: 'd', driver: PICKUP }), T0 + 16 * MIN, rules).risk,
    'AT_RISK',
  );
});

test('an ended job has no sla', () => {
  assert.equal(slaOf(job({ status: 'DELIVERED' }), T0, rules), null);
  assert.deepEqual(slaOf(job(), T0, rules), {
    pickupBy: '2026-12-07T10:15:00.000Z',
    dropoffBy: '2026-12-07T10:25:00.000Z',
    risk: 'OK',
  });
});

test('offer.unanswered at UNANSWERED_AFTER or 5 offers; never for a scheduled job not yet in dispatch', () => {
  assert.deepEqual(kinds(job(), T0 + 10 * MIN - 1), []);
  assert.deepEqual(kinds(job(), T0 + 10 * MIN), ['offer.unanswered']);
  assert.deepEqual(kinds(job({ offers: 5 }), T0 + MIN), ['offer.unanswered']);
  assert.deepEqual(kinds(job({ dispatchState: 'SCHEDULED', offers: 9 }), T0 + 10 * MIN), []);
  assert.deepEqual(kinds(job({ raised: ['offer.unanswered'] }), T0 + 10 * MIN), []);
});

test('driver.not_at_pickup 5 minutes into the window unless the driver was within 100 m', () => {
  const assigned = job({
    status: 'ASSIGNED',
    driverId: 'd',
    driver: { lat: PICKUP.lat + 0.01, lng: PICKUP.lng },
    pickupWindowStartMs: T0,
    pickupWindowEndMs: T0 + 60 * MIN,
    dropoffWindowEndMs: T0 + 120 * MIN,
  });
  assert.deepEqual(kinds(assigned, T0 + 5 * MIN - 1), []);
  assert.deepEqual(kinds(assigned, T0 + 5 * MIN), ['driver.not_at_pickup']);
  const there = evaluate({ ...assigned, driver: { lat: PICKUP.lat + 0.0005, lng: PICKUP.lng } }, T0, rules).watch;
  assert.ok(there?.arrivedAtMs);
  assert.deepEqual(kinds({ ...assigned, watch: there }, T0 + 6 * MIN), []);
});

test('driver.stalled after STALLED_AFTER under 200 m; a move of 200 m starts the count again', () => {
  const moving = job({ status: 'IN_TRANSIT', driverId: 'd', driver: PICKUP });
  const first = evaluate(moving, T0, rules).watch!;
  const near = { lat: PICKUP.lat + 0.001, lng: PICKUP.lng };
  assert.deepEqual(kinds({ ...moving, driver: near, watch: first }, T0 + 10 * MIN - 1), []);
  assert.deepEqual(kinds({ ...moving, driver: near, watch: first }, T0 + 10 * MIN), ['driver.stalled']);
  const far = { lat: PICKUP.lat + 0.003, lng: PICKUP.lng };
  const moved = evaluate({ ...moving, driver: far, watch: first }, T0 + 5 * MIN, rules).watch!;
  assert.equal(moved.anchorAtMs, T0 + 5 * MIN);
  assert.deepEqual(kinds({ ...moving, driver: far, watch: moved }, T0 + 10 * MIN), []);
});
