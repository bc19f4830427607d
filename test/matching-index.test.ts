import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OrderType, VehicleType } from '../src/db/schema.js';
import {
  DriverIndex,
  distanceMeters,
  newerPosition,
  type DriverAttributes,
  type NearestQuery,
} from '../src/modules/matching/driver-index.js';

// A seeded PRNG so a failure can be replayed.
function rng(seed: number) {
  return () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}

const VEHICLES: VehicleType[] = ['BIKE', 'CAR', 'VAN', 'TRUCK'];
const SERVICES: OrderType[][] = [['RIDE'], ['PACKAGE_DELIVERY'], ['RIDE', 'PACKAGE_DELIVERY']];
const COUNTRIES = ['c1', 'c2'];

function attrs(id: string, r: () => number, overrides: Partial<DriverAttributes> = {}): DriverAttributes {
  return {
    id,
    firstName: `D${id}`,
    vehicleType: VEHICLES[Math.floor(r() * 2)],
    vehiclePlate: `P${id}`,
    rating: null,
    countryId: COUNTRIES[Math.floor(r() * 2)],
    serviceTypes: SERVICES[Math.floor(r() * 3)],
    active: r() > 0.1,
    online: r() > 0.1,
    busy: r() < 0.1,
    ...overrides,
  };
}

/** The reference: every driver, every rule, sorted by distance. */
function bruteForce(index: DriverIndex, all: string[], q: NearestQuery) {
  const out: { id: string; d: number }[] = [];
  for (const id of all) {
    const rec = index.get(id);
    if (!rec || !rec.position) continue;
    if (!rec.active || !rec.online || rec.busy || rec.vehicleType !== q.vehicleType) continue;
    if (!rec.serviceTypes.includes(q.orderType)) continue;
    if (rec.position.at <= q.staleBefore) continue;
    if (q.countryId !== undefined && rec.countryId !== q.countryId) continue;
    const d = distanceMeters(q.lat, q.lng, rec.position.lat, rec.position.lng);
    if (d <= q.radiusMeters) out.push({ id, d });
  }
  out.sort((a, b) => a.d - b.d);
  return out.slice(0, q.limit);
}

function compare(index: DriverIndex, all: string[], q: NearestQuery) {
  const expected = bruteForce(index, all, q);
  const got = index.nearest(q).map((r) => ({ id: r.driver.id, d: r.distanceMeters }));
  assert.equal(got.length, expected.length, `count for ${JSON.stringify(q)}`);
  for (let i = 0; i < got.length; i++) {
    // Ties may come in either order; distances must match position by position.
    assert.ok(Math.abs(got[i].d - expected[i].d) < 1e-6, `distance #${i} for ${JSON.stringify(q)}`);
    if (i > 0) assert.ok(got[i].d >= got[i - 1].d, 'nearest first');
  }
  return got;
}

/** Scatters drivers around a centre within `spreadDeg`, wrapping longitudes and clamping latitudes. */
function scatter(
  index: DriverIndex,
  r: () => number,
  n: number,
  lat: number,
  lng: number,
  spreadDeg: number,
  now: number,
) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `${lat}:${lng}:${i}`;
    ids.push(id);
    index.upsert(attrs(id, r));
    let pLng = lng + (r() - 0.5) * 2 * spreadDeg;
    pLng = ((((pLng + 180) % 360) + 360) % 360) - 180;
    const pLat = Math.max(-90, Math.min(90, lat + (r() - 0.5) * 2 * spreadDeg));
    index.setPosition(id, { lat: pLat, lng: pLng, heading: null, speed: null, at: now - Math.floor(r() * 200_000) });
  }
  return ids;
}

describe('driver index against a brute-force reference', () => {
  const now = 10_000_000;
  const staleBefore = now - 120_000;

  const centres: [string, number, number, number][] = [
    ['Nairobi', -1.2921, 36.8219, 0.2],
    ['antimeridian', 0.5, 179.99, 0.3],
    ['antimeridian west', -16.5, -179.95, 0.3],
    ['north pole', 89.97, 10, 0.2],
    ['south pole', -89.99, -120, 0.2],
    ['high latitude', 78.2, 15.6, 0.5],
  ];

  for (const [name, lat, lng, spread] of centres) {
    test(`random drivers and queries near ${name}`, () => {
      const r = rng(Math.abs(Math.round(lat * 1000 + lng)));
      const index = new DriverIndex();
      const ids = scatter(index, r, 1500, lat, lng, spread, now);
      let nonEmpty = 0;
      for (let i = 0; i < 200; i++) {
        let qLng = lng + (r() - 0.5) * 2 * spread;
        qLng = ((((qLng + 180) % 360) + 360) % 360) - 180;
        const q: NearestQuery = {
          lat: Math.max(-90, Math.min(90, lat + (r() - 0.5) * 2 * spread)),
          lng: qLng,
          radiusMeters: [500, 2000, 5000, 20_000, 50_000][i % 5],
          limit: [1, 5, 10, 50][i % 4],
          vehicleType: VEHICLES[i % 2],
          orderType: i % 3 === 0 ? 'RIDE' : 'PACKAGE_DELIVERY',
          countryId: i % 4 === 0 ? 'c1' : undefined,
          staleBefore,
        };
        if (compare(index, ids, q).length > 0) nonEmpty += 1;
      }
      assert.ok(nonEmpty > 50, `the queries found drivers (${nonEmpty})`);
    });
  }

  test('a query across the antimeridian finds drivers on the other side', () => {
    const index = new DriverIndex();
    const base = {
      firstName: 'A',
      vehicleType: 'CAR' as const,
      vehiclePlate: 'X',
      rating: null,
      countryId: 'c1',
      serviceTypes: ['RIDE' as const],
      active: true,
      online: true,
      busy: false,
    };
    index.upsert({ ...base, id: 'east' }, { lat: 0, lng: 179.999, heading: null, speed: null, at: now });
    index.upsert({ ...base, id: 'west' }, { lat: 0, lng: -179.998, heading: null, speed: null, at: now });
    const found = index.nearest({
      lat: 0,
      lng: -179.9995,
      radiusMeters: 1000,
      limit: 10,
      vehicleType: 'CAR',
      orderType: 'RIDE',
      staleBefore,
    });
    assert.deepEqual(
      found.map((f) => f.driver.id),
      ['west', 'east'],
    );
    assert.ok(found[1].distanceMeters < 200, 'the distance is measured across the line, not around the globe');
  });

  test('at the pole every longitude is close', () => {
    const index = new DriverIndex();
    const base = {
      firstName: 'A',
      vehicleType: 'BIKE' as const,
      vehiclePlate: 'X',
      rating: null,
      countryId: null,
      serviceTypes: ['RIDE' as const],
      active: true,
      online: true,
      busy: false,
    };
    for (const lng of [-170, -90, 0, 90, 179])
      index.upsert({ ...base, id: `p${lng}` }, { lat: 89.99, lng, heading: null, speed: null, at: now });
    const found = index.nearest({
      lat: 90,
      lng: 0,
      radiusMeters: 2000,
      limit: 10,
      vehicleType: 'BIKE',
      orderType: 'RIDE',
      staleBefore,
    });
    assert.equal(found.length, 5);
    for (const f of found) assert.ok(Math.abs(f.distanceMeters - 1112) < 2);
  });

  test('drivers moving between cells, changing state, vehicle and leaving stay consistent', () => {
    const r = rng(42);
    const index = new DriverIndex();
    const ids = scatter(index, r, 800, 51.5, -0.12, 0.1, now);
    for (let step = 0; step < 3000; step++) {
      const id = ids[Math.floor(r() * ids.length)];
      const action = r();
      if (action < 0.6) {
        const rec = index.get(id);
        if (!rec) continue;
        const p = rec.position ?? { lat: 51.5, lng: -0.12, heading: null, speed: null, at: now };
        // Moves of up to ~3 km cross cell edges often.
        index.setPosition(id, {
          lat: p.lat + (r() - 0.5) * 0.05,
          lng: p.lng + (r() - 0.5) * 0.05,
          heading: 90,
          speed: 10,
          at: p.at + 1,
        });
      } else if (action < 0.7) index.setOnline(id, r() > 0.3);
      else if (action < 0.8) index.setBusy(id, r() < 0.3);
      else if (action < 0.85) index.setActive(id, r() > 0.2);
      else if (action < 0.9) index.upsert({ ...attrs(id, r), vehicleType: VEHICLES[Math.floor(r() * 2)] });
      else if (action < 0.92) index.remove(id);
      if (step % 50 === 0) {
        // Every filter in turn: a driver moved into a freed slot must take all its values along.
        const q: NearestQuery = {
          lat: 51.5 + (r() - 0.5) * 0.2,
          lng: -0.12 + (r() - 0.5) * 0.2,
          radiusMeters: 3000,
          limit: 10,
          vehicleType: VEHICLES[step % 2],
          orderType: step % 100 === 0 ? 'RIDE' : 'PACKAGE_DELIVERY',
          countryId: [undefined, 'c1', 'c2'][(step / 50) % 3],
          staleBefore,
        };
        compare(index, ids, q);
      }
    }
    const online = ids.map((id) => index.get(id)).filter((rec) => rec && rec.active && rec.online).length;
    assert.equal(index.onlineCount, online);
  });

  test('an older position is ignored; a stale one is not matched', () => {
    const index = new DriverIndex();
    const base = {
      id: 'd',
      firstName: 'A',
      vehicleType: 'VAN' as const,
      vehiclePlate: 'X',
      rating: 4.5,
      countryId: 'c1',
      serviceTypes: ['PACKAGE_DELIVERY' as const],
      active: true,
      online: true,
      busy: false,
    };
    index.upsert(base, { lat: 1, lng: 1, heading: null, speed: null, at: now });
    assert.equal(index.setPosition('d', { lat: 2, lng: 2, heading: null, speed: null, at: now - 1 }), false);
    assert.equal(index.get('d')!.position!.lat, 1);
    const q: NearestQuery = {
      lat: 1,
      lng: 1,
      radiusMeters: 100,
      limit: 5,
      vehicleType: 'VAN',
      orderType: 'PACKAGE_DELIVERY',
      staleBefore: now - 1,
    };
    assert.equal(index.nearest(q).length, 1);
    assert.equal(index.nearest({ ...q, staleBefore: now }).length, 0);
    assert.equal(index.nearest({ ...q, orderType: 'RIDE' }).length, 0);
    assert.equal(index.nearest({ ...q, vehicleType: 'CAR' }).length, 0);
    assert.equal(index.nearest({ ...q, countryId: 'c2' }).length, 0);
  });

  test('stale drivers leave the grid and come back with their next position; answers do not change', () => {
    const r = rng(7);
    const index = new DriverIndex();
    const ids = scatter(index, r, 2000, -1.2921, 36.8219, 0.2, now);
    const queries: NearestQuery[] = Array.from({ length: 100 }, (_, i) => ({
      lat: -1.2921 + (r() - 0.5) * 0.4,
      lng: 36.8219 + (r() - 0.5) * 0.4,
      radiusMeters: [2000, 5000, 20_000][i % 3],
      limit: [5, 10, 50][i % 3],
      vehicleType: VEHICLES[i % 2],
      orderType: i % 2 ? 'RIDE' : 'PACKAGE_DELIVERY',
      staleBefore,
    }));
    const before = queries.map((q) => compare(index, ids, q));
    const stale = ids.filter((id) => {
      const rec = index.get(id)!;
      return rec.cell >= 0 && rec.position!.at <= staleBefore;
    });
    assert.ok(stale.length > 100, `some placed drivers are stale (${stale.length})`);
    assert.equal(index.evictStale(staleBefore), stale.length);
    assert.ok(
      stale.every((id) => index.get(id)!.cell === -1),
      'out of the grid, still known',
    );
    assert.deepEqual(
      queries.map((q) => compare(index, ids, q)),
      before,
    );
    assert.equal(index.evictStale(staleBefore), 0);

    // A stale driver that reports again is matched again.
    const back = stale.find((id) => index.get(id)!.active && index.get(id)!.online && !index.get(id)!.busy)!;
    const rec = index.get(back)!;
    index.setPosition(back, { lat: 5, lng: 5, heading: null, speed: null, at: now });
    const found = index.nearest({
      lat: 5,
      lng: 5,
      radiusMeters: 10,
      limit: 1,
      vehicleType: rec.vehicleType,
      orderType: rec.serviceTypes[0],
      staleBefore,
    });
    assert.deepEqual(
      found.map((f) => f.driver.id),
      [back],
    );
  });
});

test('records share one service list per set of services, in a fixed order, and follow a change', () => {
  const index = new DriverIndex();
  const base = {
    firstName: 'A',
    vehicleType: 'CAR' as const,
    vehiclePlate: 'X',
    rating: null,
    countryId: 'c1',
    active: true,
    online: true,
    busy: false,
  };
  const a = index.upsert({ ...base, id: 'a', serviceTypes: ['PACKAGE_DELIVERY', 'RIDE'] });
  const b = index.upsert({ ...base, id: 'b', serviceTypes: ['RIDE', 'PACKAGE_DELIVERY'] });
  assert.deepEqual(a.serviceTypes, ['RIDE', 'PACKAGE_DELIVERY']);
  assert.equal(a.serviceTypes, b.serviceTypes, 'one shared list');
  assert.ok(Object.isFrozen(a.serviceTypes), 'shared, so nobody may change it');
  index.upsert({ ...base, id: 'a', serviceTypes: ['PACKAGE_DELIVERY'] });
  assert.deepEqual(index.get('a')!.serviceTypes, ['PACKAGE_DELIVERY']);
  assert.deepEqual(index.get('b')!.serviceTypes, ['RIDE', 'PACKAGE_DELIVERY']);
  assert.equal(index.get('a')!.countryId, 'c1');
});

test('distanceMeters: known distances', () => {
  // Nairobi to Mombasa ≈ 441 km; one degree of latitude ≈ 111.2 km.
  assert.ok(Math.abs(distanceMeters(-1.2921, 36.8219, -4.0435, 39.6682) - 441_000) < 3000);
  assert.ok(Math.abs(distanceMeters(0, 0, 1, 0) - 111_195) < 5);
  assert.ok(Math.abs(distanceMeters(0, 179.5, 0, -179.5) - 111_195) < 5);
});

test('newerPosition: the newer of the live position and the stored copy', () => {
  const live = { lat: 1, lng: 1, heading: 90, speed: 5, at: 2_000 };
  const stored = { last_lat: 2, last_lng: 2, last_heading: null, last_speed: null, last_location_at: new Date(1_000) };
  const none = { last_lat: null, last_lng: null, last_heading: null, last_speed: null, last_location_at: null };
  assert.equal(newerPosition(live, stored), live);
  assert.deepEqual(newerPosition({ ...live, at: 500 }, stored), {
    lat: 2,
    lng: 2,
    heading: null,
    speed: null,
    at: 1_000,
  });
  assert.deepEqual(newerPosition(undefined, { ...stored, last_location_at: '1970-01-01T00:00:01.000Z' }), {
    lat: 2,
    lng: 2,
    heading: null,
    speed: null,
    at: 1_000,
  });
  assert.equal(newerPosition(live, none), live);
  assert.equal(newerPosition(null, none), null);
});
