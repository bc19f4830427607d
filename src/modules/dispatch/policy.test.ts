// The offer policy's preferred driver (contract section 23): the driver holding a failed job's parcel
// gets its first offer wherever it is, when it may take the job; otherwise the nearest driver does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DriverIndex, type DriverAttributes } from '../matching/driver-index.js';
import { pickDriver, type PickRequest } from './policy.js';

const NOW = 1_000_000;
const driver = (id: string, extra: Partial<DriverAttributes> = {}): DriverAttributes => ({
  id,
  firstName: id,
  vehicleType: 'BIKE',
  vehiclePlate: 'KAA 1',
  rating: null,
  countryId: null,
  serviceTypes: ['PACKAGE_DELIVERY'],
  active: true,
  online: true,
  busy: false,
  ...extra,
});
const at = (lat: number, lng: number, when = NOW) => ({ lat, lng, heading: null, speed: null, at: when });

const request = (extra: Partial<PickRequest> = {}): PickRequest => ({
  lat: -1.2864,
  lng: 36.8172,
  vehicleType: 'BIKE',
  orderType: 'PACKAGE_DELIVERY',
  staleBefore: NOW - 60_000,
  radiusMeters: 5_000,
  maxRadiusMeters: 15_000,
  excluded: new Map(),
  holding: new Set(),
  ...extra,
});

test('the preferred driver is chosen first, even beyond the radius; then the nearest', () => {
  const index = new DriverIndex();
  index.upsert(driver('near'), at(-1.2864, 36.8172));
  index.upsert(driver('holder'), at(-1.6, 36.8172)); // ~35 km away: beyond every radius
  const first = pickDriver(index, request({ preferred: 'holder' }));
  assert.equal(first.choice?.driverId, 'holder');
  assert.ok(first.choice!.distanceMeters > 30_000);
  assert.equal(pickDriver(index, request()).choice?.driverId, 'near');
});

test('a preferred driver who cannot take the job now is passed over for the nearest', () => {
  const cases: [string, Partial<DriverAttributes>, number?][] = [
    ['busy', { busy: true }],
    ['offline', { online: false }],
    ['inactive', { active: false }],
    ['another vehicle', { vehicleType: 'CAR' }],
    ['rides only', { serviceTypes: ['RIDE'] }],
    ['stale position', {}, NOW - 120_000],
  ];
  for (const [why, attrs, when] of cases) {
    const index = new DriverIndex();
    index.upsert(driver('near'), at(-1.2864, 36.8172));
    index.upsert(driver('holder', attrs), at(-1.29, 36.8172, when));
    assert.equal(pickDriver(index, request({ preferred: 'holder' })).choice?.driverId, 'near', why);
  }
  const index = new DriverIndex();
  index.upsert(driver('near'), at(-1.2864, 36.8172));
  index.upsert(driver('holder'), at(-1.29, 36.8172));
  const declined = request({ preferred: 'holder', excluded: new Map([['holder', 'DECLINED']]) });
  assert.equal(pickDriver(index, declined).choice?.driverId, 'near', 'declined before');
  const holding = request({ preferred: 'holder', holding: new Set(['holder']) });
  assert.equal(pickDriver(index, holding).choice?.driverId, 'near', 'holding another offer');
  assert.equal(pickDriver(index, request({ preferred: 'nobody' })).choice?.driverId, 'near', 'unknown driver');
});

test('a preferred driver already on a route gets the offer only when the job fits the route, with its batch', () => {
  const onRoute = { activeJobs: 2, maxActiveJobs: 4 };
  const index = new DriverIndex();
  index.upsert(driver('near'), at(-1.2864, 36.8172));
  index.upsert(driver('holder', onRoute), at(-1.29, 36.8172));
  const fits = (fit: NonNullable<PickRequest['batch']> extends ReadonlyMap<string, infer F> ? F : never) =>
    request({ preferred: 'holder', batch: new Map([['holder', fit]]) });

  const fitting = pickDriver(index, fits({ ok: true, addedSeconds: 120, stopsBefore: 3 }));
  assert.equal(fitting.choice?.driverId, 'holder');
  assert.deepEqual(fitting.choice?.batch, { addedSeconds: 120, stopsBefore: 3, bestFreeEtaSeconds: null });

  const tooFar = pickDriver(index, fits({ ok: false, reason: 'BATCH_DETOUR', addedSeconds: 900 }));
  assert.equal(tooFar.choice?.driverId, 'near', 'the detour is too long: the nearest driver instead');
  const unknownFit = pickDriver(index, request({ preferred: 'holder' }));
  assert.equal(unknownFit.choice?.driverId, 'near', 'no fit computed: not offered as preferred');
});
