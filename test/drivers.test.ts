import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { countryId, createUser, type CreateUserOptions, type TestUser } from './helpers/factories.js';

const NAIROBI = { lat: -1.2921, lng: 36.8219 };
/** A point `meters` north of p. */
const north = (p: { lat: number; lng: number }, meters: number) => ({ lat: p.lat + meters / 111_195, lng: p.lng });

async function driver(t: TestApp, options: CreateUserOptions['driver'] = {}, extra: CreateUserOptions = {}) {
  return createUser(t, { role: 'DRIVER', ...extra, driver: options });
}

async function online(t: TestApp, user: TestUser, at?: { lat: number; lng: number }) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/drivers/me/availability',
    headers: user.headers,
    payload: { status: 'ONLINE' },
  });
  assert.equal(res.statusCode, 200, res.body);
  if (at) await report(t, user, at);
}

async function report(t: TestApp, user: TestUser, body: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/drivers/me/location',
    headers: user.headers,
    payload: body,
  });
  assert.equal(res.statusCode, 204, res.body);
  // No content: no body and no content headers.
  assert.equal(res.body, '');
  assert.equal(res.headers['content-type'], undefined);
  assert.equal(res.headers['content-length'], undefined);
}

async function find(t: TestApp, user: TestUser, body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/api/matching/find-drivers', headers: user.headers, payload: body });
}

describe('drivers', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  test('GET /drivers/me returns the driver object; other roles get 403, no token 401', async () => {
    const d = await driver(
      t,
      { vehicleType: 'CAR', vehiclePlate: 'KCA 123A', serviceTypes: ['RIDE'] },
      { firstName: 'Wanjiru', lastName: 'Kamau' },
    );
    const res = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(typeof body.createdAt, 'string');
    assert.deepEqual(
      { ...body, createdAt: undefined },
      {
        id: d.id,
        firstName: 'Wanjiru',
        lastName: 'Kamau',
        phone: d.phone,
        vehicleType: 'CAR',
        vehiclePlate: 'KCA 123A',
        serviceTypes: ['RIDE'],
        companyId: null,
        availability: 'OFFLINE',
        location: null,
        rating: null,
        createdAt: undefined,
      },
    );
    const customer = await createUser(t, { role: 'CUSTOMER' });
    const wrong = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: customer.headers });
    assert.equal(wrong.statusCode, 403);
    assert.deepEqual(wrong.json(), {
      statusCode: 403,
      message: 'This action requires role DRIVER',
      error: 'Forbidden',
      code: 'WRONG_ROLE',
    });
    const none = await t.app.inject({ method: 'GET', url: '/api/drivers/me' });
    assert.deepEqual(none.json(), {
      statusCode: 401,
      message: 'Missing bearer token',
      error: 'Unauthorized',
      code: 'MISSING_TOKEN',
    });
  });

  test('PATCH /drivers/me changes vehicle, plate and service types, and rejects anything else', async () => {
    const d = await driver(t);
    const res = await t.app.inject({
      method: 'PATCH',
      url: '/api/drivers/me',
      headers: d.headers,
      payload: { vehicleType: 'VAN', vehiclePlate: 'KDD 555Z', serviceTypes: ['PACKAGE_DELIVERY'] },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().vehicleType, 'VAN');
    assert.equal(res.json().vehiclePlate, 'KDD 555Z');
    assert.deepEqual(res.json().serviceTypes, ['PACKAGE_DELIVERY']);
    const again = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.equal(again.json().vehicleType, 'VAN');

    const cases: [unknown, string][] = [
      [{ availability: 'ONLINE' }, 'body has an unknown property "availability"'],
      [{ rating: 5 }, 'body has an unknown property "rating"'],
      [{}, 'body must NOT have fewer than 1 properties'],
      [{ vehicleType: 'PLANE' }, 'body.vehicleType must be one of BIKE, CAR, VAN, TRUCK'],
      [{ serviceTypes: [] }, 'body.serviceTypes must NOT have fewer than 1 items'],
      [
        { serviceTypes: ['RIDE', 'RIDE'] },
        'body.serviceTypes must NOT have duplicate items (items ## 0 and 1 are identical)',
      ],
      [{ vehiclePlate: '' }, 'body.vehiclePlate must NOT have fewer than 1 characters'],
    ];
    for (const [payload, message] of cases) {
      const bad = await t.app.inject({
        method: 'PATCH',
        url: '/api/drivers/me',
        headers: d.headers,
        payload: payload as object,
      });
      assert.equal(bad.statusCode, 400, JSON.stringify(payload));
      assert.deepEqual(bad.json(), { statusCode: 400, message, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    }
  });

  test('availability: a pending driver cannot go online; a company driver needs an ACTIVE company; no going offline during a job', async () => {
    const pending = await driver(t, {}, { status: 'PENDING_APPROVAL' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/availability',
      headers: pending.headers,
      payload: { status: 'ONLINE' },
    });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), {
      statusCode: 403,
      message: 'Account is pending approval',
      error: 'Forbidden',
      code: 'ACCOUNT_PENDING_APPROVAL',
    });

    const company = await createUser(t, { role: 'COMPANY', status: 'SUSPENDED' });
    const fleet = await driver(t, { companyId: company.id });
    const blocked = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/availability',
      headers: fleet.headers,
      payload: { status: 'ONLINE' },
    });
    assert.equal(blocked.statusCode, 409);
    assert.deepEqual(blocked.json(), {
      statusCode: 409,
      message: 'Your company account is not active',
      error: 'Conflict',
      code: 'COMPANY_NOT_ACTIVE',
    });
    await t.db.updateTable('users').set({ status: 'ACTIVE' }).where('id', '=', company.id).execute();
    await online(t, fleet);

    const d = await driver(t);
    await online(t, d);
    const me = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.equal(me.json().availability, 'ONLINE');
    await t.db
      .updateTable('driver_profiles')
      .set({ active_job_type: 'PACKAGE', active_job_id: randomUUID() })
      .where('user_id', '=', d.id)
      .execute();
    const busy = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/availability',
      headers: d.headers,
      payload: { status: 'OFFLINE' },
    });
    assert.equal(busy.statusCode, 409);
    assert.deepEqual(busy.json(), {
      statusCode: 409,
      message: 'Cannot go offline during an active job',
      error: 'Conflict',
      code: 'DRIVER_HAS_ACTIVE_JOB',
    });
    await t.db
      .updateTable('driver_profiles')
      .set({ active_job_type: null, active_job_id: null })
      .where('user_id', '=', d.id)
      .execute();
    const off = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/availability',
      headers: d.headers,
      payload: { status: 'OFFLINE' },
    });
    assert.equal(off.json().availability, 'OFFLINE');

    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/availability',
      headers: d.headers,
      payload: { status: 'AWAY' },
    });
    assert.deepEqual(bad.json(), {
      statusCode: 400,
      message: 'body.status must be one of ONLINE, OFFLINE',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });
  });

  test('location: validated, shown on the driver, and an older update is ignored', async () => {
    const d = await driver(t);
    const now = t.clock.now();
    await report(t, d, { lat: 1.5, lng: 36.5, heading: 90, speed: 12.5, accuracy: 8 });
    const me = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.deepEqual(me.json().location, {
      lat: 1.5,
      lng: 36.5,
      heading: 90,
      speed: 12.5,
      updatedAt: now.toISOString(),
    });

    await report(t, d, { lat: 2, lng: 37, recordedAt: new Date(now.getTime() - 60_000).toISOString() });
    const still = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.equal(still.json().location.lat, 1.5, 'the older update was ignored');

    t.clock.advance(1000);
    await report(t, d, { lat: 3, lng: 38, recordedAt: new Date(now.getTime() + 3_600_000).toISOString() });
    const future = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.deepEqual(
      future.json().location,
      { lat: 3, lng: 38, heading: null, speed: null, updatedAt: t.clock.now().toISOString() },
      'a future time counts as now',
    );

    const cases: [unknown, string][] = [
      [{ lat: 91, lng: 0 }, 'body.lat must be <= 90'],
      [{ lat: -90.5, lng: 0 }, 'body.lat must be >= -90'],
      [{ lat: 0, lng: 180.01 }, 'body.lng must be <= 180'],
      [{ lat: 0 }, 'body.lng is required'],
      [{ lat: '1', lng: 2 }, 'body.lat must be number'],
      [{ lat: 0, lng: 0, heading: 400 }, 'body.heading must be <= 360'],
      [{ lat: 0, lng: 0, speed: -1 }, 'body.speed must be >= 0'],
      [{ lat: 0, lng: 0, recordedAt: 'yesterday' }, 'body.recordedAt must be a valid date-time'],
      [{ lat: 0, lng: 0, driverId: d.id }, 'body has an unknown property "driverId"'],
    ];
    for (const [payload, message] of cases) {
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/drivers/me/location',
        headers: d.headers,
        payload: payload as object,
      });
      assert.deepEqual(
        bad.json(),
        { statusCode: 400, message, error: 'Bad Request', code: 'VALIDATION_FAILED' },
        JSON.stringify(payload),
      );
    }
  });

  test('find-drivers returns eligible drivers nearest first, with distance and ETA', async () => {
    const centre = { lat: 10.5, lng: 20.5 };
    const far = await driver(t, { vehicleType: 'BIKE', vehiclePlate: 'FAR 1' }, { firstName: 'Far' });
    const near = await driver(t, { vehicleType: 'BIKE', vehiclePlate: 'NEAR 1' }, { firstName: 'Near' });
    await online(t, far, north(centre, 2000));
    await online(t, near, north(centre, 500));
    await t.db.updateTable('driver_profiles').set({ rating: 4.8 }).where('user_id', '=', near.id).execute();
    t.deps.bus.publish('driver.changed', { driverId: near.id });
    await new Promise((r) => setTimeout(r, 50));
    const customer = await createUser(t, { role: 'CUSTOMER' });
    const res = await find(t, customer, { pickupLocation: centre, vehicleType: 'BIKE', orderType: 'PACKAGE_DELIVERY' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), {
      drivers: [
        {
          driverId: near.id,
          firstName: 'Near',
          vehicleType: 'BIKE',
          vehiclePlate: 'NEAR 1',
          rating: 4.8,
          location: north(centre, 500),
          distanceMeters: 500,
          etaSeconds: 72,
        },
        {
          driverId: far.id,
          firstName: 'Far',
          vehicleType: 'BIKE',
          vehiclePlate: 'FAR 1',
          rating: null,
          location: north(centre, 2000),
          distanceMeters: 2000,
          etaSeconds: 288,
        },
      ],
      radiusMeters: 5000,
    });
    const limited = await find(t, customer, {
      pickupLocation: centre,
      vehicleType: 'BIKE',
      orderType: 'RIDE',
      limit: 1,
      radiusMeters: 1000,
    });
    assert.deepEqual(
      limited.json().drivers.map((x: { driverId: string }) => x.driverId),
      [near.id],
    );
    assert.equal(limited.json().radiusMeters, 1000);
    const small = await find(t, customer, {
      pickupLocation: centre,
      vehicleType: 'BIKE',
      orderType: 'RIDE',
      radiusMeters: 499,
    });
    assert.deepEqual(small.json(), { drivers: [], radiusMeters: 499 });
  });

  test('find-drivers applies every eligibility rule', async () => {
    const centre = { lat: -20.5, lng: 50.5 };
    const customer = await createUser(t, { role: 'CUSTOMER' });
    const ids = async () =>
      (await find(t, customer, { pickupLocation: centre, vehicleType: 'CAR', orderType: 'RIDE' }))
        .json()
        .drivers.map((x: { driverId: string }) => x.driverId);

    const ok = await driver(t, { vehicleType: 'CAR' });
    await online(t, ok, north(centre, 100));
    const offline = await driver(t, { vehicleType: 'CAR' });
    await report(t, offline, north(centre, 150));
    const van = await driver(t, { vehicleType: 'VAN' });
    await online(t, van, north(centre, 200));
    const parcelsOnly = await driver(t, { vehicleType: 'CAR', serviceTypes: ['PACKAGE_DELIVERY'] });
    await online(t, parcelsOnly, north(centre, 250));
    const busy = await driver(t, { vehicleType: 'CAR' });
    await online(t, busy, north(centre, 300));
    const suspended = await driver(t, { vehicleType: 'CAR' });
    await online(t, suspended, north(centre, 350));
    const ghana = await driver(t, { vehicleType: 'CAR' }, { countryCode: 'GH' });
    await online(t, ghana, north(centre, 400));
    const outside = await driver(t, { vehicleType: 'CAR' });
    await online(t, outside, north(centre, 5100));

    assert.deepEqual(await ids(), [ok.id, busy.id, suspended.id, ghana.id]);

    // The packages/rides services publish driver.job after accept/assign and after a job ends.
    await t.db
      .updateTable('driver_profiles')
      .set({ active_job_type: 'RIDE', active_job_id: randomUUID() })
      .where('user_id', '=', busy.id)
      .execute();
    t.deps.bus.publish('driver.job', { driverId: busy.id, busy: true, jobId: randomUUID(), jobType: 'RIDE' });
    await t.db.updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', suspended.id).execute();
    t.deps.bus.publish('user.changed', { userId: suspended.id, status: 'SUSPENDED' });
    assert.deepEqual(await ids(), [ok.id, ghana.id]);

    const kenya = await countryId(t, 'KE');
    const inKenya = await find(t, customer, {
      pickupLocation: centre,
      vehicleType: 'CAR',
      orderType: 'RIDE',
      countryId: kenya,
    });
    assert.deepEqual(
      inKenya.json().drivers.map((x: { driverId: string }) => x.driverId),
      [ok.id],
    );

    t.deps.bus.publish('driver.job', { driverId: busy.id, busy: false, jobId: randomUUID(), jobType: 'RIDE' });
    assert.deepEqual(await ids(), [ok.id, busy.id, ghana.id]);

    // Positions older than DRIVER_LOCATION_TTL (2m) are not matched; a new report brings the driver back.
    t.clock.advance(121_000);
    assert.deepEqual(await ids(), []);
    await report(t, ok, north(centre, 100));
    assert.deepEqual(await ids(), [ok.id]);
  });

  test('find-drivers errors: validation, unknown country or customer, another customer', async () => {
    const customer = await createUser(t, { role: 'CUSTOMER' });
    const other = await createUser(t, { role: 'CUSTOMER' });
    const business = await createUser(t, { role: 'BUSINESS' });
    const d = await driver(t);
    const base = { pickupLocation: NAIROBI, vehicleType: 'BIKE', orderType: 'PACKAGE_DELIVERY' };
    const expect = async (
      user: TestUser,
      payload: Record<string, unknown>,
      statusCode: number,
      message: string,
      code: string,
    ) => {
      const res = await find(t, user, payload);
      const error = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found' }[statusCode as 400 | 403 | 404];
      assert.deepEqual(res.json(), { statusCode, message, error, code }, JSON.stringify(payload));
      assert.equal(res.statusCode, statusCode);
    };
    await expect(customer, { ...base, countryId: randomUUID() }, 404, 'Country not found', 'COUNTRY_NOT_FOUND');
    await expect(business, { ...base, customerId: randomUUID() }, 404, 'Customer not found', 'CUSTOMER_NOT_FOUND');
    await expect(business, { ...base, customerId: d.id }, 404, 'Customer not found', 'CUSTOMER_NOT_FOUND');
    await expect(
      customer,
      { ...base, customerId: other.id },
      403,
      'A customer may only find drivers for itself',
      'CUSTOMER_MISMATCH',
    );
    await expect(
      customer,
      { ...base, pickupLocation: { lat: 95, lng: 0 } },
      400,
      'body.pickupLocation.lat must be <= 90',
      'VALIDATION_FAILED',
    );
    await expect(
      customer,
      { ...base, pickupLocation: { lat: 0, lng: -181 } },
      400,
      'body.pickupLocation.lng must be >= -180',
      'VALIDATION_FAILED',
    );
    await expect(
      customer,
      { ...base, destinationLocation: { lat: 0 } },
      400,
      'body.destinationLocation.lng is required',
      'VALIDATION_FAILED',
    );
    await expect(
      customer,
      { vehicleType: 'BIKE', orderType: 'RIDE' },
      400,
      'body.pickupLocation is required',
      'VALIDATION_FAILED',
    );
    await expect(
      customer,
      { pickupLocation: NAIROBI, orderType: 'RIDE' },
      400,
      'body.vehicleType is required',
      'VALIDATION_FAILED',
    );
    await expect(
      customer,
      { pickupLocation: NAIROBI, vehicleType: 'BIKE' },
      400,
      'body.orderType is required',
      'VALIDATION_FAILED',
    );
    await expect(
      customer,
      { ...base, orderType: 'FOOD' },
      400,
      'body.orderType must be one of RIDE, PACKAGE_DELIVERY',
      'VALIDATION_FAILED',
    );
    await expect(
      customer,
      { ...base, radiusMeters: 50_001 },
      400,
      'body.radiusMeters must be <= 50000',
      'VALIDATION_FAILED',
    );
    await expect(customer, { ...base, limit: 51 }, 400, 'body.limit must be <= 50', 'VALIDATION_FAILED');
    await expect(
      customer,
      { ...base, countryId: 'KE' },
      400,
      'body.countryId must be a valid uuid',
      'VALIDATION_FAILED',
    );
    await expect(customer, { ...base, role: 'ADMIN' }, 400, 'body has an unknown property "role"', 'VALIDATION_FAILED');

    // Allowed: a customer passing its own id, a business passing any customer, a valid country.
    for (const [user, payload] of [
      [customer, { ...base, customerId: customer.id }],
      [business, { ...base, customerId: other.id, countryId: await countryId(t, 'KE') }],
      [d, base],
    ] as const) {
      const res = await find(t, user, payload);
      assert.equal(res.statusCode, 200, res.body);
    }
    const none = await t.app.inject({ method: 'POST', url: '/api/matching/find-drivers', payload: base });
    assert.equal(none.statusCode, 401);
  });

  test('the online drivers gauge is on /metrics', async () => {
    const d = await driver(t);
    await online(t, d);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    const match = /^drivers_online (\d+)$/m.exec(metrics.body);
    assert.ok(match, 'drivers_online is exported');
    const before = Number(match[1]);
    assert.ok(before >= 1);
    await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/availability',
      headers: d.headers,
      payload: { status: 'OFFLINE' },
    });
    const after = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(Number(/^drivers_online (\d+)$/m.exec(after.body)![1]), before - 1);
  });

  test('applied positions are counted on /metrics; an older one is not', async () => {
    const d = await driver(t);
    await online(t, d);
    const count = async () =>
      Number(
        /^driver_positions_total (\d+)$/m.exec((await t.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1],
      );
    const before = await count();
    assert.ok(before >= 0);
    await report(t, d, { lat: 10, lng: 10 });
    await report(t, d, { lat: 10.001, lng: 10 });
    await report(t, d, { lat: 10.002, lng: 10, recordedAt: new Date(t.clock.now().getTime() - 60_000).toISOString() });
    assert.equal(await count(), before + 2);
  });
});

describe('write-behind positions', () => {
  test('positions reach PostgreSQL in batches and survive a restart', async () => {
    const database = await createTestDatabase();
    try {
      const first = await buildTestApp({ database });
      const drivers: TestUser[] = [];
      for (let i = 0; i < 5; i++)
        drivers.push(
          await createUser(first, { role: 'DRIVER', driver: { vehicleType: 'TRUCK', availability: 'ONLINE' } }),
        );
      const batches: number[] = [];
      first.services.live.onFlush = (stats) => batches.push(stats.rows);
      for (let step = 0; step < 10; step++) {
        for (const [i, d] of drivers.entries())
          await report(first, d, { lat: 40 + i / 1000, lng: -3.7, heading: 45 + step });
        first.clock.advance(1);
      }
      const clock = first.clock;
      const lastReportAt = new Date(clock.now().getTime() - 1);
      await first.close();
      // 50 reports, written as at most a few multi-row batches of at most one row per driver.
      assert.ok(batches.length >= 1 && batches.length <= 3, `batches: ${batches}`);
      assert.ok(batches.every((rows) => rows <= 5));

      const rows = await database.db
        .selectFrom('driver_profiles')
        .select(['user_id', 'last_lat', 'last_lng', 'last_heading', 'last_speed', 'last_location_at'])
        .where('vehicle_type', '=', 'TRUCK')
        .execute();
      assert.equal(rows.filter((r) => r.last_lat !== null && r.last_heading === 54).length, 5);
      const third = rows.find((r) => r.user_id === drivers[2].id)!;
      // Exactly as reported: no speed was sent (null, not 0), the time to the millisecond.
      assert.deepEqual([third.last_lat, third.last_lng, third.last_speed], [40.002, -3.7, null]);
      assert.equal(new Date(third.last_location_at!).toISOString(), lastReportAt.toISOString());

      const second = await buildTestApp({ database, clock });
      try {
        const me = await second.app.inject({ method: 'GET', url: '/api/drivers/me', headers: drivers[2].headers });
        assert.equal(me.json().location.lat, 40.002);
        const res = await find(second, drivers[0], {
          pickupLocation: { lat: 40, lng: -3.7 },
          vehicleType: 'TRUCK',
          orderType: 'RIDE',
        });
        assert.deepEqual(
          res.json().drivers.map((x: { driverId: string }) => x.driverId),
          drivers.map((d) => d.id),
          'the restarted instance matches the drivers at their last known positions',
        );
      } finally {
        await second.close();
      }
    } finally {
      await database.close();
    }
  });

  test('a batch larger than one statement is written whole, by a flush and when stopping', async () => {
    const database = await createTestDatabase();
    try {
      const n = 1_201; // three statements of at most 500 rows
      await sql`
        insert into users (id, email, phone, password_hash, first_name, last_name, role, status)
        select gen_random_uuid(), 'many-' || g || '@example.com', '+2547' || lpad(g::text, 8, '0'), 'x', 'Driver' || g, 'Many', 'DRIVER', 'ACTIVE'
        from generate_series(1, ${n}::int) g`.execute(database.db);
      await sql`
        insert into driver_profiles (user_id, vehicle_type, vehicle_plate, availability)
        select id, 'CAR', 'KB ' || email, 'ONLINE' from users where email like 'many-%'`.execute(database.db);
      const ids = (await database.db.selectFrom('users').select('id').where('email', 'like', 'many-%').execute()).map(
        (r) => r.id,
      );
      const stored = async () =>
        database.db
          .selectFrom('driver_profiles')
          .select(['last_lat', 'last_lng'])
          .where('user_id', 'in', ids)
          .execute();

      const t = await buildTestApp({ database });
      const live = t.services.live;
      const batches: number[] = [];
      live.onFlush = (stats) => batches.push(stats.rows);
      ids.forEach((id, i) => assert.ok(live.report(id, { lat: 1 + i / 10_000, lng: 2 })));
      await live.flush();
      assert.deepEqual(batches, [n]);
      const first = await stored();
      assert.equal(first.length, n);
      assert.deepEqual(new Set(first.map((r) => r.last_lat)), new Set(ids.map((_, i) => 1 + i / 10_000)));

      // Stopping writes what is pending before the app is gone.
      t.clock.advance(1_000);
      ids.forEach((id) => assert.ok(live.report(id, { lat: 3, lng: 4 })));
      await t.close();
      assert.deepEqual(batches, [n, n]);
      assert.ok((await stored()).every((r) => r.last_lat === 3 && r.last_lng === 4));
    } finally {
      await database.close();
    }
  });
});
