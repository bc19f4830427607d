import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { RideService } from '../src/modules/rides/rides.service.js';
import { createUsers, get, notFoundBody, post, rideBody } from './packages-helpers.js';

describe('rides', () => {
  let t: TestApp;
  let customer: TestUser;
  let otherCustomer: TestUser;
  let driver: TestUser;
  let otherDriver: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let business: TestUser;
  let admin: TestUser;
  let rides: RideService;

  before(async () => {
    // The lifecycle as before dispatch: nearby pushes, no offers (test/dispatch.test.ts covers offers).
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    [customer, otherCustomer, company, otherCompany] = await createUsers(t, [
      'CUSTOMER',
      'CUSTOMER',
      'COMPANY',
      'COMPANY',
    ]);
    driver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'CAR', companyId: company.id },
    });
    otherDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'CAR', companyId: otherCompany.id },
    });
    [business, admin] = await createUsers(t, ['BUSINESS', 'ADMIN']);
    rides = t.services.rides;
  });
  after(async () => t.close());

  const request = async (
    by: TestUser = customer,
    overrides: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) => post(t, '/api/rides', { ...by.headers, ...headers }, rideBody(by.countryId, overrides));
  const activeJob = async (driverId: string) =>
    (
      await t.db
        .selectFrom('driver_profiles')
        .select('active_job_id')
        .where('user_id', '=', driverId)
        .executeTakeFirstOrThrow()
    ).active_job_id;

  test('full ride: requested, accepted, arrived, in progress, completed; polls show each step', async () => {
    const created = await request();
    assert.equal(created.statusCode, 201);
    const ride = created.json();
    assert.deepEqual(Object.keys(ride).sort(), [
      'cancellationFee',
      'cancellationFeeNow',
      'countryId',
      'createdAt',
      'customerId',
      'destinationLocation',
      'dispatch',
      'driver',
      'fare',
      'id',
      'orderType',
      'paymentMethod',
      'pickupLocation',
      'price',
      'scheduledAt',
      'sla',
      'status',
      'statusHistory',
      'timeZone',
      'tip',
      'updatedAt',
      'vehicleType',
    ]);
    assert.equal(ride.status, 'REQUESTED');
    assert.equal(ride.orderType, 'RIDE');
    assert.equal(ride.customerId, customer.id);
    assert.deepEqual(ride.pickupLocation, { lat: -1.2864, lng: 36.8172 });
    assert.equal(ride.driver, null);
    const start = Date.parse(ride.createdAt);
    const steps: [string, string][] = [
      ['accept', 'ACCEPTED'],
      ['arrive', 'ARRIVED'],
      ['start', 'IN_PROGRESS'],
      ['complete', 'COMPLETED'],
    ];
    for (const [step, status] of steps) {
      t.clock.advance(1000);
      const res = await post(t, `/api/rides/${ride.id}/${step}`, driver.headers);
      assert.equal(res.statusCode, 200, res.body);
      const poll = await get(t, `/api/rides/${ride.id}`, customer.headers);
      assert.equal(poll.json().status, status);
      assert.equal(poll.json().driver.id, driver.id);
      if (status !== 'COMPLETED') assert.equal(await activeJob(driver.id), ride.id);
    }
    const final = (await get(t, `/api/rides/${ride.id}`, company.headers)).json();
    assert.deepEqual(
      final.statusHistory,
      ['REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS', 'COMPLETED'].map((status, i) => ({
        status,
        at: new Date(start + i * 1000).toISOString(),
      })),
    );
    assert.equal(await activeJob(driver.id), null);
    const again = await post(t, `/api/rides/${ride.id}/cancel`, customer.headers);
    assert.deepEqual(again.json(), {
      statusCode: 409,
      message: 'Ride is COMPLETED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
  });

  test('cancellation: by the customer, by the driver (frees it), not once in progress', async () => {
    const a = (await request()).json();
    const byCustomer = await post(t, `/api/rides/${a.id}/cancel`, customer.headers, { reason: 'Plans changed' });
    assert.equal(byCustomer.statusCode, 200);
    assert.deepEqual(byCustomer.json().statusHistory.at(-1), {
      status: 'CANCELLED',
      at: byCustomer.json().updatedAt,
      reason: 'Plans changed',
    });

    const b = (await request()).json();
    await post(t, `/api/rides/${b.id}/accept`, driver.headers);
    await post(t, `/api/rides/${b.id}/arrive`, driver.headers);
    const byDriver = await post(t, `/api/rides/${b.id}/cancel`, driver.headers);
    assert.equal(byDriver.json().status, 'CANCELLED');
    assert.equal(await activeJob(driver.id), null);

    const c = (await request()).json();
    await post(t, `/api/rides/${c.id}/accept`, driver.headers);
    await post(t, `/api/rides/${c.id}/arrive`, driver.headers);
    await post(t, `/api/rides/${c.id}/start`, driver.headers);
    const late = await post(t, `/api/rides/${c.id}/cancel`, customer.headers);
    assert.deepEqual(late.json(), {
      statusCode: 409,
      message: 'Ride is IN_PROGRESS',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    const byAdmin = await post(t, `/api/rides/${c.id}/cancel`, admin.headers);
    assert.equal(byAdmin.statusCode, 409);
    assert.equal((await post(t, `/api/rides/${c.id}/complete`, driver.headers)).statusCode, 200);
    // Steps out of order.
    const d = (await request()).json();
    const skip = await post(t, `/api/rides/${d.id}/arrive`, driver.headers);
    assert.deepEqual(skip.json(), notFoundBody('Ride'));
    await post(t, `/api/rides/${d.id}/accept`, driver.headers);
    const skip2 = await post(t, `/api/rides/${d.id}/complete`, driver.headers);
    assert.deepEqual(skip2.json(), {
      statusCode: 409,
      message: 'Ride is ACCEPTED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    await post(t, `/api/rides/${d.id}/cancel`, admin.headers);
  });

  test('a driver on a job cannot accept a ride; 20 concurrent accepts: one wins', async () => {
    const pkgDriver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    const first = (await request()).json();
    const second = (await request()).json();
    assert.equal((await post(t, `/api/rides/${first.id}/accept`, pkgDriver.headers)).statusCode, 200);
    const busy = await post(t, `/api/rides/${second.id}/accept`, pkgDriver.headers);
    assert.deepEqual(busy.json(), {
      statusCode: 409,
      message: 'Driver already has an active job',
      error: 'Conflict',
      code: 'DRIVER_BUSY',
    });
    await post(t, `/api/rides/${first.id}/cancel`, customer.headers);

    const drivers = await Promise.all(
      Array.from({ length: 20 }, () =>
        createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } }),
      ),
    );
    const results = await Promise.all(drivers.map((d) => post(t, `/api/rides/${second.id}/accept`, d.headers)));
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1);
    assert.equal(results.filter((r) => r.statusCode === 409).length, 19);
    const busyDrivers = await t.db
      .selectFrom('driver_profiles')
      .select('user_id')
      .where('active_job_id', '=', second.id)
      .execute();
    assert.equal(busyDrivers.length, 1);
    await post(t, `/api/rides/${second.id}/cancel`, customer.headers);
  });

  test('a ride past its five minutes cannot be accepted, even before the sweep marks it', async () => {
    const ride = (await request()).json();
    t.clock.advance(5 * 60_000 + 1);
    for (const u of [customer, driver])
      u.headers.authorization = `Bearer ${(await t.tokens.signAccess({ userId: u.id, role: u.role, sessionId: u.sessionId })).token}`;
    const late = await post(t, `/api/rides/${ride.id}/accept`, driver.headers);
    assert.deepEqual(late.json(), {
      statusCode: 409,
      message: 'Ride is EXPIRED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    assert.deepEqual(await rides.expireStale(), [ride.id]);
  });

  test('a REQUESTED ride expires after 5 minutes, once, even with two sweeps at once', async () => {
    const old = (await request()).json();
    t.clock.advance(4 * 60_000);
    const young = (await request()).json();
    assert.deepEqual(await rides.expireStale(), []);
    t.clock.advance(60_000 + 1);
    const [a, b] = await Promise.all([rides.expireStale(), rides.expireStale()]);
    assert.deepEqual([...a, ...b], [old.id]);
    const seen = (await get(t, `/api/rides/${old.id}`, customer.headers)).json();
    assert.equal(seen.status, 'EXPIRED');
    assert.deepEqual(
      seen.statusHistory.map((h: { status: string }) => h.status),
      ['REQUESTED', 'EXPIRED'],
    );
    assert.equal(seen.statusHistory[1].reason, 'No driver accepted within 5 minutes');
    assert.equal((await get(t, `/api/rides/${young.id}`, customer.headers)).json().status, 'REQUESTED');
    const tooLate = await post(t, `/api/rides/${old.id}/accept`, driver.headers);
    assert.deepEqual(tooLate.json(), {
      statusCode: 409,
      message: 'Ride is EXPIRED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    // An accepted ride never expires.
    await post(t, `/api/rides/${young.id}/accept`, driver.headers);
    t.clock.advance(10 * 60_000);
    for (const u of [customer, driver])
      u.headers.authorization = `Bearer ${(await t.tokens.signAccess({ userId: u.id, role: u.role, sessionId: u.sessionId })).token}`;
    assert.deepEqual(await rides.expireStale(), []);
    await post(t, `/api/rides/${young.id}/cancel`, customer.headers);
  });

  test('object-level authorization and roles', async () => {
    for (const u of [customer, otherCustomer, driver, otherDriver, company, otherCompany, business, admin]) {
      u.headers.authorization = `Bearer ${(await t.tokens.signAccess({ userId: u.id, role: u.role, sessionId: u.sessionId })).token}`;
    }
    const requested = (await request()).json();
    const accepted = (await request()).json();
    await post(t, `/api/rides/${accepted.id}/accept`, driver.headers);
    const nf = notFoundBody('Ride');
    for (const who of [otherCustomer, otherDriver, otherCompany]) {
      for (const id of [requested.id, accepted.id, randomUUID()])
        assert.deepEqual((await get(t, `/api/rides/${id}`, who.headers)).json(), nf, `${who.role} GET`);
      const list = (await get(t, '/api/rides?limit=100', who.headers)).json();
      assert.ok(!list.items.some((r: { id: string }) => r.id === requested.id || r.id === accepted.id));
    }
    assert.deepEqual((await get(t, `/api/rides/${accepted.id}`, company.headers)).json().id, accepted.id);
    assert.deepEqual((await get(t, `/api/rides/${requested.id}`, company.headers)).json(), nf);
    for (const step of ['arrive', 'start', 'complete', 'cancel']) {
      assert.deepEqual((await post(t, `/api/rides/${accepted.id}/${step}`, otherDriver.headers)).json(), nf, step);
    }
    assert.deepEqual((await post(t, `/api/rides/${accepted.id}/cancel`, otherCustomer.headers)).json(), nf);
    assert.deepEqual((await post(t, `/api/rides/${requested.id}/cancel`, otherCustomer.headers)).json(), nf);
    assert.deepEqual((await post(t, `/api/rides/${randomUUID()}/accept`, otherDriver.headers)).json(), nf);

    const wrongRole = (roles: string) => ({
      statusCode: 403,
      message: `This action requires role ${roles}`,
      error: 'Forbidden',
      code: 'WRONG_ROLE',
    });
    for (const who of [driver, business, company, admin])
      assert.deepEqual((await request(who)).json(), wrongRole('CUSTOMER'));
    for (const step of ['accept', 'arrive', 'start', 'complete']) {
      for (const who of [customer, business, company, admin])
        assert.deepEqual((await post(t, `/api/rides/${accepted.id}/${step}`, who.headers)).json(), wrongRole('DRIVER'));
    }
    for (const who of [business, company])
      assert.deepEqual(
        (await post(t, `/api/rides/${accepted.id}/cancel`, who.headers)).json(),
        wrongRole('CUSTOMER or DRIVER or ADMIN'),
      );
    assert.deepEqual(
      (await get(t, `/api/rides/${accepted.id}`, business.headers)).json(),
      wrongRole('CUSTOMER or DRIVER or COMPANY or ADMIN'),
    );
    assert.deepEqual(
      (await get(t, '/api/rides', business.headers)).json(),
      wrongRole('CUSTOMER or DRIVER or COMPANY or ADMIN'),
    );
    assert.equal((await get(t, `/api/rides/${requested.id}`, admin.headers)).statusCode, 200);
    await post(t, `/api/rides/${requested.id}/cancel`, admin.headers);
    await post(t, `/api/rides/${accepted.id}/cancel`, admin.headers);
  });

  test('validation, idempotency and the list', async () => {
    const v = (message: string) => ({ statusCode: 400, message, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    assert.deepEqual(
      (await request(customer, { pickupLocation: { lat: -91, lng: 0 } })).json(),
      v('body.pickupLocation.lat must be >= -90'),
    );
    assert.deepEqual(
      (await request(customer, { destinationLocation: undefined })).json(),
      v('body.destinationLocation is required'),
    );
    assert.deepEqual(
      (await request(customer, { customerId: otherCustomer.id })).json(),
      v('body has an unknown property "customerId"'),
    );
    assert.deepEqual((await request(customer, { countryId: randomUUID() })).json(), {
      statusCode: 404,
      message: 'Country not found',
      error: 'Not Found',
      code: 'COUNTRY_NOT_FOUND',
    });

    const lister = await createUser(t, { role: 'CUSTOMER' });
    const first = await request(lister, {}, { 'idempotency-key': 'ride-1' });
    const replay = await request(lister, {}, { 'idempotency-key': 'ride-1' });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    const other = await request(lister, { vehicleType: 'VAN' }, { 'idempotency-key': 'ride-1' });
    assert.equal(other.statusCode, 422);
    t.clock.advance(10);
    const second = (await request(lister, { vehicleType: 'BIKE' })).json();
    await post(t, `/api/rides/${second.id}/cancel`, lister.headers);
    const list = (await get(t, '/api/rides?limit=1', lister.headers)).json();
    assert.deepEqual(
      list.items.map((r: { id: string }) => r.id),
      [second.id],
    );
    const next = (await get(t, `/api/rides?limit=1&cursor=${list.nextCursor}`, lister.headers)).json();
    assert.deepEqual(next, { items: [first.json()], nextCursor: null });
    const filtered = (await get(t, '/api/rides?status=REQUESTED', lister.headers)).json();
    assert.deepEqual(
      filtered.items.map((r: { id: string }) => r.id),
      [first.json().id],
    );
    await post(t, `/api/rides/${first.json().id}/cancel`, lister.headers);
  });
});
