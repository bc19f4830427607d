// Surge (contract section 18): the target from open jobs and idle drivers over a cell and its 8
// neighbours, one step of 0.1 per SURGE_INTERVAL, the same on every instance through Redis.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DriverIndex } from '../src/modules/matching/driver-index.js';
import { stepSurge, SurgeGrid, targetTenths, type IdleCounter, type OpenJob } from '../src/modules/pricing/surge.js';
import { loadConfig } from '../src/config.js';
import { buildTestApp, deleteRedisKeys, redisSkipReason, TEST_ENV, type TestApp } from './helpers/app.js';
import { countryId, createUser, type TestUser } from './helpers/factories.js';
import { packageBody, post, setDriverPosition, stop } from './packages-helpers.js';

const NAIROBI = { lat: -1.2864, lng: 36.8172 };
const MINUTE = 60_000;

describe('surge arithmetic', () => {
  test('target = clamp(1 + 0.25 × (jobs ÷ max(1, drivers) − 1), 1, max), rounded to a tenth', () => {
    assert.equal(targetTenths(0, 0, 20), 10);
    assert.equal(targetTenths(4, 4, 20), 10);
    assert.equal(targetTenths(8, 4, 20), 13); // 1.25 → 1.3
    assert.equal(targetTenths(4, 1, 20), 18); // 1.75 → 1.8
    assert.equal(targetTenths(4, 0, 20), 18); // no idle driver counts as one
    assert.equal(targetTenths(100, 1, 20), 20);
    assert.equal(targetTenths(100, 1, 35), 35);
  });

  test('a cell and its 8 neighbours: 3 × 3 cells of SURGE_CELL metres, square on the ground', () => {
    const grid = new SurgeGrid(2000);
    const [row, col] = grid.cellOf(51.5, -0.12);
    const rows = grid.block(row, col);
    assert.equal(rows.length, 3);
    for (const [r, lo, hi] of rows) {
      assert.equal(hi - lo, 2);
      const [south, west, north, east] = grid.box(r, lo, hi);
      const heightKm = (north - south) * 111.195;
      const widthKm = (east - west) * 111.195 * Math.cos(((south + north) / 2) * (Math.PI / 180));
      assert.ok(Math.abs(heightKm - 2) < 0.01 && Math.abs(widthKm - 6) < 0.01, `${heightKm} × ${widthKm}`);
    }
    // The point is inside its cell's box.
    const [south, west, north, east] = grid.box(row, col, col);
    assert.ok(51.5 >= south && 51.5 < north && -0.12 >= west && -0.12 < east);
  });

  test('rises one step per interval while drivers are missing, falls back one step per interval', () => {
    const grid = new SurgeGrid(2000);
    const index = new DriverIndex();
    const jobs: OpenJob[] = Array.from({ length: 4 }, (_, i) => ({
      vehicleType: 'CAR',
      accountId: `a${i}`,
      lat: NAIROBI.lat + i * 0.001,
      lng: NAIROBI.lng,
    }));
    for (let i = 0; i < 4; i++) {
      index.upsert(
        {
          id: `d${i}`,
          firstName: 'D',
          vehicleType: 'CAR',
          vehiclePlate: 'P',
          rating: null,
          countryId: null,
          serviceTypes: ['RIDE'],
          active: true,
          online: true,
          busy: false,
        },
        { lat: NAIROBI.lat, lng: NAIROBI.lng + i * 0.002, heading: null, speed: null, at: 1000 },
      );
    }
    const count: IdleCounter = (type, s, w, n, e) => index.countIdle(type, s, w, n, e, 0);
    const [row, col] = grid.cellOf(NAIROBI.lat, NAIROBI.lng);
    const key = `CAR:${row}:${col}`;
    let state = stepSurge(new Map(), grid, jobs, count, 20, 3);
    assert.equal(state.size, 0, 'as many idle drivers as jobs: 1.0');
    for (let i = 0; i < 4; i++) index.setOnline(`d${i}`, false);
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) {
      state = stepSurge(state, grid, jobs, count, 20, 3);
      seen.push(state.get(key) ?? 10);
    }
    assert.deepEqual(seen, [11, 12, 13, 14, 15, 16, 17, 18, 18, 18]);
    // Other vehicle types do not surge.
    assert.ok([...state.keys()].every((k) => k.startsWith('CAR:')));
    for (let i = 0; i < 4; i++) index.setOnline(`d${i}`, true);
    const falling: number[] = [];
    for (let i = 0; i < 9; i++) {
      state = stepSurge(state, grid, jobs, count, 20, 3);
      falling.push(state.get(key) ?? 10);
    }
    assert.deepEqual(falling, [17, 16, 15, 14, 13, 12, 11, 10, 10]);
    assert.equal(state.size, 0);
  });

  test("one account counts at most the cap in a block's demand, its jobs spread over the 9 cells or not", () => {
    const grid = new SurgeGrid(2000);
    const noDriver: IdleCounter = () => 0;
    const [row, col] = grid.cellOf(NAIROBI.lat, NAIROBI.lng);
    const key = `CAR:${row}:${col}`;
    // 90 jobs of one account, 10 in each cell of the block around Nairobi's cell.
    const jobs: OpenJob[] = [];
    for (const [r, lo, hi] of grid.block(row, col)) {
      for (let c = lo; c <= hi; c++) {
        const [south, west, north, east] = grid.box(r, c, c);
        for (let i = 0; i < 10; i++)
          jobs.push({ vehicleType: 'CAR', accountId: 'flooder', lat: (south + north) / 2, lng: (west + east) / 2 });
      }
    }
    const steps = (cap: number, extra: OpenJob[] = []) => {
      let state = new Map<string, number>();
      for (let i = 0; i < 12; i++) state = stepSurge(state, grid, [...jobs, ...extra], noDriver, 20, cap);
      return state.get(key) ?? 10;
    };
    assert.equal(steps(3), 15, 'demand 3: 1 + 0.25 × 2');
    assert.equal(steps(1), 10, 'demand 1: no surge');
    assert.equal(steps(1000), 20, 'uncapped: SURGE_MAX');
    // Two more accounts with one job each in the cell: 3 + 1 + 1.
    assert.equal(
      steps(3, [
        { vehicleType: 'CAR', accountId: 'b', ...NAIROBI },
        { vehicleType: 'CAR', accountId: 'c', ...NAIROBI },
      ]),
      20,
    );
  });

  test('countIdle counts only idle, fresh, eligible drivers of the type inside the box', () => {
    const index = new DriverIndex();
    const add = (
      id: string,
      lat: number,
      lng: number,
      extra: { busy?: boolean; vehicleType?: 'CAR' | 'BIKE'; at?: number } = {},
    ) =>
      index.upsert(
        {
          id,
          firstName: 'D',
          vehicleType: extra.vehicleType ?? 'CAR',
          vehiclePlate: 'P',
          rating: null,
          countryId: null,
          serviceTypes: ['RIDE'],
          active: true,
          online: true,
          busy: extra.busy ?? false,
        },
        { lat, lng, heading: null, speed: null, at: extra.at ?? 1000 },
      );
    add('in', -1.0, 36.5);
    add('edge-south', -1.1, 36.5);
    add('out-north', -0.9, 36.5);
    add('busy', -1.0, 36.5, { busy: true });
    add('bike', -1.0, 36.5, { vehicleType: 'BIKE' });
    add('stale', -1.0, 36.5, { at: 10 });
    assert.equal(index.countIdle('CAR', -1.1, 36.4, -0.9, 36.6, 100), 2);
  });
});

describe('surge through quotes', () => {
  let t: TestApp;
  let ke: string;
  let customer: TestUser;
  const drivers: TestUser[] = [];

  before(async () => {
    t = await buildTestApp();
    ke = await countryId(t, 'KE');
    customer = await createUser(t, { role: 'CUSTOMER' });
    for (let i = 0; i < 4; i++) {
      const driver = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
      await setDriverPosition(t, driver.id, NAIROBI.lat + 0.003, NAIROBI.lng + i * 0.002);
      drivers.push(driver);
    }
    for (let i = 0; i < 4; i++) {
      const res = await post(
        t,
        '/api/packages',
        customer.headers,
        packageBody(ke, { vehicleType: 'CAR', pickup: stop(NAIROBI.lat - i * 0.001, NAIROBI.lng) }),
      );
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => t.close());

  const quote = async () => {
    const res = await post(t, '/api/quotes', customer.headers, {
      kind: 'PACKAGE',
      pickup: { location: NAIROBI },
      dropoff: { location: { lat: -1.2676, lng: 36.8108 } },
      vehicleType: 'CAR',
      countryId: ke,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const tick = async () => {
    t.clock.advance(MINUTE);
    // Drivers' positions stay fresh as the clock moves on.
    for (const [i, d] of drivers.entries()) await setDriverPositionIfOnline(d, i);
    return t.services.pricing.surge.tick();
  };
  const online = new Set<string>();
  async function setDriverPositionIfOnline(d: TestUser, i: number) {
    if (online.has(d.id)) await setDriverPosition(t, d.id, NAIROBI.lat + 0.003, NAIROBI.lng + i * 0.002);
  }
  const availability = async (d: TestUser, status: 'ONLINE' | 'OFFLINE') => {
    const res = await post(t, '/api/drivers/me/availability', d.headers, { status });
    assert.equal(res.statusCode, 200, res.body);
    if (status === 'ONLINE') online.add(d.id);
    else online.delete(d.id);
  };

  test('drivers going offline raise the surge one step per interval; their return lowers it the same way', async () => {
    for (const d of drivers) online.add(d.id);
    assert.equal(await tick(), true);
    assert.equal((await quote()).breakdown.surge, 1);

    for (const d of drivers) await availability(d, 'OFFLINE');
    const rising: number[] = [];
    for (let i = 0; i < 3; i++) {
      await tick();
      rising.push((await quote()).breakdown.surge);
    }
    assert.deepEqual(rising, [1.1, 1.2, 1.3]);
    // No step before the interval has passed.
    assert.equal(await t.services.pricing.surge.tick(), false);
    const q = await quote();
    assert.equal(q.breakdown.surge, 1.3);
    const trip = q.breakdown.base + q.breakdown.distance + q.breakdown.time;
    assert.equal(q.breakdown.surgeAmount, Math.floor((2 * trip * 3 + 10) / 20));
    assert.equal(q.amount, trip + q.breakdown.surgeAmount + q.breakdown.minimumTopUp + q.breakdown.bookingFee);

    for (const d of drivers) await availability(d, 'ONLINE');
    const falling: number[] = [];
    for (let i = 0; i < 4; i++) {
      await tick();
      falling.push((await quote()).breakdown.surge);
    }
    assert.deepEqual(falling, [1.2, 1.1, 1, 1]);
  });
});

describe('surge demand: at most SURGE_ACCOUNT_CAP jobs per account, none in its first 60 s', () => {
  // Mombasa, away from the other blocks' cells; no idle driver here, so the target is 1 + 0.25 × (demand − 1).
  const MOMBASA = { lat: -4.0435, lng: 39.6682 };
  let t: TestApp;
  let ke: string;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'off' } });
    ke = await countryId(t, 'KE');
  });
  after(async () => t.close());

  const createPackage = async (by: TestUser, vehicleType: string, i: number) => {
    const res = await post(
      t,
      '/api/packages',
      by.headers,
      packageBody(ke, {
        vehicleType,
        pickup: stop(MOMBASA.lat + (i % 10) * 0.0005, MOMBASA.lng),
        dropoff: stop(-4.06, 39.67),
      }),
    );
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string };
  };
  const surgeAt = (vehicleType: 'CAR' | 'VAN' | 'TRUCK') =>
    t.services.pricing.surge.tenthsAt(vehicleType, MOMBASA.lat, MOMBASA.lng);
  const tick = async () => {
    t.clock.advance(MINUTE);
    await t.services.pricing.surge.tick();
  };

  test('one account with 300 pending packages in a cell raises its demand by 3 at most; another account adds its own', async () => {
    const flooder = await createUser(t, { role: 'BUSINESS' });
    for (let i = 0; i < 300; i++) await createPackage(flooder, 'TRUCK', i);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      await tick();
      seen.push(surgeAt('TRUCK'));
    }
    // Demand 3, no idle driver: target 1 + 0.25 × 2 = 1.5 (uncapped, 300 jobs would reach SURGE_MAX, 2.0).
    assert.deepEqual(seen, [11, 12, 13, 14, 15, 15, 15, 15]);

    const other = await createUser(t, { role: 'CUSTOMER' });
    await createPackage(other, 'TRUCK', 0);
    for (let i = 0; i < 4; i++) await tick();
    // Demand 4: target 1.75, rounded half up to 1.8.
    assert.equal(surgeAt('TRUCK'), 18);
  });

  test('a job cancelled within 60 s of its creation never counts; the others count from 60 s on', async () => {
    const accounts = [await createUser(t, { role: 'BUSINESS' }), await createUser(t, { role: 'CUSTOMER' })];
    const jobs: { id: string; by: TestUser }[] = [];
    // A step is due from now on (the last one is a minute old).
    t.clock.advance(MINUTE);
    for (const by of accounts) for (let i = 0; i < 2; i++) jobs.push({ ...(await createPackage(by, 'VAN', i)), by });
    // A step 30 s after the creations: none of the four counts yet.
    t.clock.advance(30_000);
    assert.equal(await t.services.pricing.surge.tick(), true);
    assert.equal(surgeAt('VAN'), 10);
    // Two of them are cancelled at 40 s: they never count.
    t.clock.advance(10_000);
    for (const { id, by } of jobs.slice(0, 2))
      assert.equal((await post(t, `/api/packages/${id}/cancel`, by.headers, {})).statusCode, 200);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      await tick();
      seen.push(surgeAt('VAN'));
    }
    // The two left: target 1 + 0.25 × 1 = 1.25 → 1.3.
    assert.deepEqual(seen, [11, 12, 13, 13, 13]);
  });

  test('SURGE_ACCOUNT_CAP is read from the environment (default 3)', () => {
    assert.equal(loadConfig({ ...TEST_ENV }).pricing.surgeAccountCap, 3);
    assert.equal(loadConfig({ ...TEST_ENV, SURGE_ACCOUNT_CAP: '1' }).pricing.surgeAccountCap, 1);
    assert.throws(() => loadConfig({ ...TEST_ENV, SURGE_ACCOUNT_CAP: '0' }), /SURGE_ACCOUNT_CAP/);
  });
});

describe('surge shared through Redis', { skip: redisSkipReason }, () => {
  let a: TestApp;
  let b: TestApp;
  const prefix = `test:${randomBytes(6).toString('hex')}:`;

  before(async () => {
    a = await buildTestApp({ redis: true, redisKeyPrefix: prefix });
    b = await buildTestApp({ redis: true, redisKeyPrefix: prefix, database: a.database, clock: a.clock });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await deleteRedisKeys(prefix);
  });

  test('one instance computes each step under the lock; every instance quotes the same multiplier', async () => {
    const ke = await countryId(a, 'KE');
    const customer = await createUser(a, { role: 'CUSTOMER' });
    for (let i = 0; i < 3; i++) {
      const res = await post(
        a,
        '/api/packages',
        customer.headers,
        packageBody(ke, { vehicleType: 'VAN', pickup: stop(NAIROBI.lat, NAIROBI.lng + i * 0.001) }),
      );
      assert.equal(res.statusCode, 201, res.body);
    }
    const quote = async (t: TestApp) =>
      (
        await post(t, '/api/quotes', customer.headers, {
          kind: 'PACKAGE',
          pickup: { location: NAIROBI },
          dropoff: { location: { lat: -1.2676, lng: 36.8108 } },
          vehicleType: 'VAN',
          countryId: ke,
        })
      ).json();

    const surgeA = a.services.pricing.surge;
    const surgeB = b.services.pricing.surge;
    a.clock.advance(MINUTE);
    assert.equal(await surgeA.tick(), true);
    // B may not step again within the interval: the lock (or the shared state's time) stops it.
    assert.equal(await surgeB.tick(), false);
    // B learns of the new state through the bus; wait for it (bounded), then compare.
    for (let i = 0; i < 100 && surgeB.snapshot().size === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(surgeB.snapshot(), surgeA.snapshot());
    assert.equal((await quote(a)).breakdown.surge, 1.1);
    assert.equal((await quote(b)).breakdown.surge, 1.1);

    // The next step, wherever it is computed, starts from the shared state.
    a.clock.advance(MINUTE);
    await deleteLock(prefix);
    assert.equal(await surgeB.tick(), true);
    await surgeA.refresh();
    assert.equal((await quote(a)).breakdown.surge, 1.2);
    assert.equal((await quote(b)).breakdown.surge, 1.2);
  });
});

describe(
  'surge demand through Redis: the same caps whichever instance computes the step',
  { skip: redisSkipReason },
  () => {
    let a: TestApp;
    let b: TestApp;
    const prefix = `test:${randomBytes(6).toString('hex')}:`;
    const KISUMU = { lat: -0.0917, lng: 34.768 };

    before(async () => {
      a = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env: { DISPATCH_MODE: 'off' } });
      b = await buildTestApp({
        redis: true,
        redisKeyPrefix: prefix,
        database: a.database,
        clock: a.clock,
        env: { DISPATCH_MODE: 'off' },
      });
    });
    after(async () => {
      await b?.close();
      await a?.close();
      await deleteRedisKeys(prefix);
    });

    test("one account's 20 packages count as 3; one cancelled within 60 s never counts", async () => {
      const ke = await countryId(a, 'KE');
      const flooder = await createUser(a, { role: 'BUSINESS' });
      const other = await createUser(a, { role: 'CUSTOMER' });
      const create = async (t: TestApp, by: TestUser, i: number) => {
        const res = await post(
          t,
          '/api/packages',
          by.headers,
          packageBody(ke, {
            vehicleType: 'TRUCK',
            pickup: stop(KISUMU.lat + i * 0.0005, KISUMU.lng),
            dropoff: stop(-0.1, 34.75),
          }),
        );
        assert.equal(res.statusCode, 201, res.body);
        return res.json() as { id: string };
      };
      for (let i = 0; i < 20; i++) await create(i % 2 ? a : b, flooder, i % 10);
      const cancelled = await create(b, other, 0);
      // A step 30 s later, computed by B: nothing counts yet.
      a.clock.advance(MINUTE / 2);
      assert.equal(await b.services.pricing.surge.tick(), true);
      assert.equal(b.services.pricing.surge.tenthsAt('TRUCK', KISUMU.lat, KISUMU.lng), 10);
      assert.equal((await post(a, `/api/packages/${cancelled.id}/cancel`, other.headers, {})).statusCode, 200);
      const seen: number[] = [];
      for (let i = 0; i < 6; i++) {
        a.clock.advance(MINUTE);
        await deleteLock(prefix);
        const [computing, other] = i % 2 ? [a, b] : [b, a];
        assert.equal(await computing.services.pricing.surge.tick(), true);
        await other.services.pricing.surge.refresh();
        seen.push(other.services.pricing.surge.tenthsAt('TRUCK', KISUMU.lat, KISUMU.lng));
      }
      // Demand 3 (the flooder's cap; the cancelled package never counted): target 1.5.
      assert.deepEqual(seen, [11, 12, 13, 14, 15, 15]);
    });
  },
);

async function deleteLock(prefix: string) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(process.env.TEST_REDIS_URL!);
  await redis.del(`${prefix}surge:lock`);
  redis.disconnect();
}
