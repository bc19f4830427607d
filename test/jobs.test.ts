import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import type { BusEvents } from '../src/shared/bus.js';
import { get, packageBody, post, rideBody, setDriverPosition, stop } from './packages-helpers.js';

describe('driver jobs', () => {
  let t: TestApp;
  let business: TestUser;
  let customer: TestUser;
  let driver: TestUser;
  let carDriver: TestUser;
  const pushes: BusEvents['driver.push'][] = [];

  before(async () => {
    // The lifecycle as before dispatch: nearby pushes, no offers (test/dispatch.test.ts covers offers).
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    carDriver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    t.deps.bus.subscribe('driver.push', (e) => pushes.push(e));
  });
  after(async () => t.close());

  test('nearby jobs: open jobs that fit, nearest first, pickup area and parcel size only', async () => {
    const unknown = await get(t, '/api/drivers/me/jobs/nearby', driver.headers);
    assert.deepEqual(unknown.json(), {
      statusCode: 409,
      message: 'Driver location is unknown: send a location first',
      error: 'Conflict',
      code: 'LOCATION_UNKNOWN',
    });

    await setDriverPosition(t, driver.id, -1.2864, 36.8172);
    await setDriverPosition(t, carDriver.id, -1.2864, 36.8172);
    pushes.length = 0;
    const near = (
      await post(
        t,
        '/api/packages',
        business.headers,
        packageBody(business.countryId, { pickup: stop(-1.29, 36.82), parcel: { description: 'Box', size: 'MEDIUM' } }),
      )
    ).json();
    const nearer = (
      await post(
        t,
        '/api/packages',
        business.headers,
        packageBody(business.countryId, { pickup: stop(-1.2865, 36.8173) }),
      )
    ).json();
    const far = (
      await post(t, '/api/packages', business.headers, packageBody(business.countryId, { pickup: stop(-1.5, 37.2) }))
    ).json();
    const van = (
      await post(t, '/api/packages', business.headers, packageBody(business.countryId, { vehicleType: 'VAN' }))
    ).json();
    const bikeRide = (
      await post(
        t,
        '/api/rides',
        customer.headers,
        rideBody(customer.countryId, { vehicleType: 'BIKE', pickupLocation: { lat: -1.287, lng: 36.818 } }),
      )
    ).json();
    const carRide = (await post(t, '/api/rides', customer.headers, rideBody(customer.countryId))).json();
    await new Promise((resolve) => setTimeout(resolve, 200)); // pushes are sent after the response

    const res = await get(t, '/api/drivers/me/jobs/nearby', driver.headers);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.radiusMeters, 5000);
    assert.deepEqual(
      body.items.map((j: { id: string }) => j.id),
      [nearer.id, bikeRide.id, near.id],
    );
    assert.deepEqual(body.items[2], {
      jobType: 'PACKAGE',
      id: near.id,
      orderType: 'PACKAGE_DELIVERY',
      vehicleType: 'BIKE',
      pickupArea: { lat: -1.29, lng: 36.82 },
      parcelSize: 'MEDIUM',
      distanceMeters: body.items[2].distanceMeters,
      createdAt: near.createdAt,
    });
    assert.ok(body.items[2].distanceMeters > 400 && body.items[2].distanceMeters < 600);
    assert.equal(body.items[1].parcelSize, null);
    assert.ok(!JSON.stringify(body).includes('+2547'), 'no contact details');
    assert.ok(!body.items.some((j: { id: string }) => [far.id, van.id, carRide.id].includes(j.id)));
    const wide = (await get(t, '/api/drivers/me/jobs/nearby?radiusMeters=50000', driver.headers)).json();
    assert.ok(wide.items.some((j: { id: string }) => j.id === far.id));
    const carJobs = (await get(t, '/api/drivers/me/jobs/nearby', carDriver.headers)).json();
    assert.deepEqual(
      carJobs.items.map((j: { id: string }) => j.id),
      [carRide.id],
    );
    const badRadius = await get(t, '/api/drivers/me/jobs/nearby?radiusMeters=60000', driver.headers);
    assert.deepEqual(badRadius.json(), {
      statusCode: 400,
      message: 'querystring.radiusMeters must be <= 50000',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });

    // New jobs were pushed to the fitting drivers nearby, and only to them.
    const nearbyPushes = pushes.filter((p) => p.message.type === 'job.nearby');
    assert.deepEqual(
      nearbyPushes.map((p) => [p.driverId, p.message.jobId]).sort(),
      [
        [driver.id, near.id],
        [driver.id, nearer.id],
        [driver.id, bikeRide.id],
        [carDriver.id, carRide.id],
      ].sort(),
    );
    assert.deepEqual(nearbyPushes.find((p) => p.message.jobId === near.id)!.message, {
      type: 'job.nearby',
      jobType: 'PACKAGE',
      jobId: near.id,
      orderType: 'PACKAGE_DELIVERY',
      vehicleType: 'BIKE',
      pickupArea: { lat: -1.29, lng: 36.82 },
      parcelSize: 'MEDIUM',
      distanceMeters: nearbyPushes.find((p) => p.message.jobId === near.id)!.message.distanceMeters,
    });

    // A taken job leaves the list.
    await post(t, `/api/packages/${nearer.id}/accept`, driver.headers);
    const after = (await get(t, '/api/drivers/me/jobs/nearby', carDriver.headers)).json();
    assert.deepEqual(
      after.items.map((j: { id: string }) => j.id),
      [carRide.id],
    );
    const mine = (await get(t, '/api/drivers/me/jobs/nearby', driver.headers)).json();
    assert.ok(!mine.items.some((j: { id: string }) => j.id === nearer.id));

    // A stale position gets no pushes.
    t.clock.advance(3 * 60_000);
    for (const u of [business, customer, driver, carDriver])
      u.headers.authorization = `Bearer ${(await t.tokens.signAccess({ userId: u.id, role: u.role, sessionId: u.sessionId })).token}`;
    pushes.length = 0;
    await post(t, '/api/rides', customer.headers, rideBody(customer.countryId));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(pushes, []);
  });

  test('a position just reported counts at once for nearby jobs and pushes (before it is written behind)', async () => {
    // Hold the write-behind (its timer runs on real time) so the stored copy stays empty throughout.
    const live = t.services.live;
    const flush = live.flush;
    live.flush = async () => undefined;
    try {
      const d = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'TRUCK' } });
      assert.equal((await post(t, '/api/drivers/me/availability', d.headers, { status: 'ONLINE' })).statusCode, 200);
      assert.equal((await post(t, '/api/drivers/me/location', d.headers, { lat: -0.5, lng: 35.1 })).statusCode, 204);

      pushes.length = 0;
      const pkg = (
        await post(
          t,
          '/api/packages',
          business.headers,
          packageBody(business.countryId, { vehicleType: 'TRUCK', pickup: stop(-0.501, 35.1) }),
        )
      ).json();
      const nearby = await get(t, '/api/drivers/me/jobs/nearby', d.headers);
      assert.equal(nearby.statusCode, 200);
      assert.deepEqual(
        nearby.json().items.map((j: { id: string }) => j.id),
        [pkg.id],
      );
      await new Promise((resolve) => setTimeout(resolve, 50)); // pushes are sent after the response
      assert.deepEqual(
        pushes.map((p) => [p.driverId, p.message.jobId, p.message.distanceMeters]),
        [[d.id, pkg.id, 111]],
      );
      const stored = await t.db
        .selectFrom('driver_profiles')
        .select('last_lat')
        .where('user_id', '=', d.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.last_lat, null, 'the stored copy was never written: the answers came from the live index');
    } finally {
      live.flush = flush;
    }
  });

  test('a driver on a job is not returned by find-drivers until the job ends', async () => {
    const d = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'VAN' } });
    assert.equal((await post(t, '/api/drivers/me/availability', d.headers, { status: 'ONLINE' })).statusCode, 200);
    assert.equal((await post(t, '/api/drivers/me/location', d.headers, { lat: -1.25, lng: 36.85 })).statusCode, 204);
    const search = {
      pickupLocation: { lat: -1.2501, lng: 36.8501 },
      vehicleType: 'VAN',
      orderType: 'PACKAGE_DELIVERY',
    };
    const found = async () =>
      (await post(t, '/api/matching/find-drivers', customer.headers, search))
        .json()
        .drivers.map((x: { driverId: string }) => x.driverId);
    assert.deepEqual(await found(), [d.id]);
    const pkg = (
      await post(t, '/api/packages', business.headers, packageBody(business.countryId, { vehicleType: 'VAN' }))
    ).json();
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, d.headers)).statusCode, 200);
    assert.deepEqual(await found(), []);
    assert.equal((await post(t, `/api/packages/${pkg.id}/cancel`, business.headers)).statusCode, 200);
    assert.deepEqual(await found(), [d.id]);
  });

  test('GET /drivers/me/jobs: the active job and recent ones', async () => {
    const d = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    const empty = (await get(t, '/api/drivers/me/jobs', d.headers)).json();
    assert.deepEqual(empty, { active: null, recent: [] });
    const ride = (await post(t, '/api/rides', customer.headers, rideBody(customer.countryId))).json();
    await post(t, `/api/rides/${ride.id}/accept`, d.headers);
    await post(t, `/api/rides/${ride.id}/cancel`, d.headers);
    t.clock.advance(1000);
    const pkg = (
      await post(t, '/api/packages', business.headers, packageBody(business.countryId, { vehicleType: 'CAR' }))
    ).json();
    await post(t, `/api/packages/${pkg.id}/accept`, d.headers);
    const jobs = (await get(t, '/api/drivers/me/jobs', d.headers)).json();
    assert.equal(jobs.active.id, pkg.id);
    assert.equal(jobs.active.jobType, 'PACKAGE');
    assert.equal(jobs.active.status, 'ASSIGNED');
    assert.deepEqual(jobs.active.pickupLocation, packageBody(business.countryId).pickup.location);
    assert.deepEqual(
      jobs.recent.map((j: { id: string; status: string }) => [j.id, j.status]),
      [[ride.id, 'CANCELLED']],
    );
    const wrongRole = await get(t, '/api/drivers/me/jobs', customer.headers);
    assert.deepEqual(wrongRole.json(), {
      statusCode: 403,
      message: 'This action requires role DRIVER',
      error: 'Forbidden',
      code: 'WRONG_ROLE',
    });
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });
});
