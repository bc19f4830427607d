// Routes (contract section 24): maxActiveJobs, capacities, a driver's route and its reorder.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody, setDriverPosition, stop } from './packages-helpers.js';

describe('routes', () => {
  let t: TestApp;
  let business: TestUser;
  let customer: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let admin: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    company = await createUser(t, { role: 'COMPANY' });
    otherCompany = await createUser(t, { role: 'COMPANY' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  const patch = (url: string, headers: Record<string, string>, payload: unknown) =>
    t.app.inject({ method: 'PATCH', url, headers, payload: payload as object });
  const put = (url: string, headers: Record<string, string>, payload: unknown) =>
    t.app.inject({ method: 'PUT', url, headers, payload: payload as object });

  async function courier(max: number, vehicleType = 'BIKE', serviceTypes?: ('RIDE' | 'PACKAGE_DELIVERY')[]) {
    const d = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', companyId: company.id, vehicleType: vehicleType as 'BIKE', serviceTypes },
    });
    await setDriverPosition(t, d.id, -1.2864, 36.8172);
    if (max !== 1)
      assert.equal((await patch(`/api/admin/drivers/${d.id}`, admin.headers, { maxActiveJobs: max })).statusCode, 200);
    return d;
  }

  const createPackage = async (overrides: Record<string, unknown> = {}) => {
    const res = await post(t, '/api/packages', business.headers, packageBody(business.countryId, overrides));
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string };
  };
  const accept = (id: string, d: TestUser) => post(t, `/api/packages/${id}/accept`, d.headers);

  test("maxActiveJobs: admin and the driver's company set it; 1–20; another company's driver is 404", async () => {
    const d = await courier(1);
    const byAdmin = await patch(`/api/admin/drivers/${d.id}`, admin.headers, { maxActiveJobs: 4 });
    assert.equal(byAdmin.statusCode, 200);
    assert.equal(byAdmin.json().maxActiveJobs, 4);
    assert.equal(byAdmin.json().id, d.id);
    const byCompany = await patch(`/api/companies/me/drivers/${d.id}`, company.headers, { maxActiveJobs: 5 });
    assert.equal(byCompany.statusCode, 200);
    assert.equal(byCompany.json().maxActiveJobs, 5);
    const other = await patch(`/api/companies/me/drivers/${d.id}`, otherCompany.headers, { maxActiveJobs: 2 });
    assert.deepEqual(other.json(), {
      statusCode: 404,
      message: 'Driver not found',
      error: 'Not Found',
      code: 'DRIVER_NOT_FOUND',
    });
    for (const bad of [0, 21, 2.5, '3'])
      assert.equal((await patch(`/api/admin/drivers/${d.id}`, admin.headers, { maxActiveJobs: bad })).statusCode, 400);
    assert.equal(
      (await patch(`/api/admin/drivers/${d.id}`, admin.headers, { maxActiveJobs: 3, role: 'ADMIN' })).statusCode,
      400,
    );
    assert.equal((await patch(`/api/admin/drivers/${d.id}`, customer.headers, { maxActiveJobs: 3 })).statusCode, 403);
    assert.equal(
      (await patch(`/api/admin/drivers/${randomUUID()}`, admin.headers, { maxActiveJobs: 3 })).statusCode,
      404,
    );
    const row = await t.db
      .selectFrom('driver_profiles')
      .select('max_active_jobs')
      .where('user_id', '=', d.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.max_active_jobs, 5, 'the other company changed nothing');
  });

  test('default 1: a second package is refused as before', async () => {
    const d = await courier(1);
    const a = await createPackage();
    const b = await createPackage();
    assert.equal((await accept(a.id, d)).statusCode, 200);
    assert.deepEqual((await accept(b.id, d)).json(), {
      statusCode: 409,
      message: 'Driver already has an active job',
      error: 'Conflict',
      code: 'DRIVER_BUSY',
    });
  });

  test('a courier holds up to maxActiveJobs packages, takes no ride meanwhile, and is free again when they end', async () => {
    const d = await courier(2, 'CAR', ['RIDE', 'PACKAGE_DELIVERY']);
    const a = await createPackage({ vehicleType: 'CAR' });
    const b = await createPackage({ vehicleType: 'CAR' });
    const c = await createPackage({ vehicleType: 'CAR' });
    assert.equal((await accept(a.id, d)).statusCode, 200);
    assert.equal((await accept(b.id, d)).statusCode, 200);
    assert.deepEqual((await accept(c.id, d)).json(), {
      statusCode: 409,
      message: 'Driver already holds 2 jobs, its maximum',
      error: 'Conflict',
      code: 'DRIVER_BUSY',
    });
    const ride = await post(t, '/api/rides', customer.headers, rideBody(customer.countryId));
    assert.equal(ride.statusCode, 201);
    await post(t, `/api/packages/${b.id}/release`, d.headers, { reason: 'flat tyre' });
    // One package held, room for one more: still no ride (a driver on a route is offered no ride).
    assert.equal((await post(t, `/api/rides/${ride.json().id}/accept`, d.headers)).json().code, 'DRIVER_BUSY');
    // The live index: the driver is a candidate for packages, not for rides.
    const find = async (orderType: string) =>
      (
        await post(t, '/api/matching/find-drivers', admin.headers, {
          pickupLocation: { lat: -1.2864, lng: 36.8172 },
          vehicleType: 'CAR',
          orderType,
        })
      )
        .json()
        .drivers.map((x: { driverId: string }) => x.driverId);
    assert.ok((await find('PACKAGE_DELIVERY')).includes(d.id));
    assert.ok(!(await find('RIDE')).includes(d.id));
    assert.equal((await accept(c.id, d)).statusCode, 200);
    assert.ok(!(await find('PACKAGE_DELIVERY')).includes(d.id), 'full: no longer a candidate');
    for (const id of [a.id, c.id]) {
      assert.equal((await post(t, `/api/packages/${id}/cancel`, business.headers, {})).statusCode, 200);
    }
    const row = await t.db
      .selectFrom('driver_profiles')
      .select(['active_jobs', 'active_job_id'])
      .where('user_id', '=', d.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { active_jobs: 0, active_job_id: null });
    assert.equal((await post(t, `/api/rides/${ride.json().id}/accept`, d.headers)).statusCode, 200);
    // On a ride: no package.
    const e = await createPackage({ vehicleType: 'CAR' });
    assert.equal((await accept(e.id, d)).json().code, 'DRIVER_BUSY');
  });

  test('capacity: parcels and kg of the vehicle type (admin-set), weight by size when none is given', async () => {
    const list = await get(t, '/api/admin/vehicle-capacities', admin.headers);
    assert.deepEqual(
      list
        .json()
        .items.map((c: { vehicleType: string; parcels: number; kg: number }) => [c.vehicleType, c.parcels, c.kg]),
      [
        ['BIKE', 6, 20],
        ['CAR', 20, 200],
        ['TRUCK', 200, 5000],
        ['VAN', 60, 800],
      ],
    );
    assert.equal(
      (await put('/api/admin/vehicle-capacities/VAN', admin.headers, { parcels: 0, kg: 5 })).statusCode,
      400,
    );
    assert.equal(
      (await put('/api/admin/vehicle-capacities/VAN', company.headers, { parcels: 2, kg: 5 })).statusCode,
      403,
    );
    const set = await put('/api/admin/vehicle-capacities/VAN', admin.headers, { parcels: 2, kg: 30 });
    assert.equal(set.statusCode, 200);
    assert.deepEqual(
      { ...(set.json() as object), updatedAt: undefined },
      { vehicleType: 'VAN', parcels: 2, kg: 30, updatedAt: undefined },
    );
    const d = await courier(5, 'VAN');
    const heavy = await createPackage({ vehicleType: 'VAN', parcel: { description: 'Tiles', weightKg: 20 } });
    // LARGE with no weight: 15 kg; 20 + 15 > 30.
    const large = await createPackage({ vehicleType: 'VAN', parcel: { description: 'Box', size: 'LARGE' } });
    const medium = await createPackage({ vehicleType: 'VAN', parcel: { description: 'Box', size: 'MEDIUM' } });
    const small = await createPackage({ vehicleType: 'VAN', parcel: { description: 'Letter', size: 'SMALL' } });
    assert.equal((await accept(heavy.id, d)).statusCode, 200);
    assert.deepEqual((await accept(large.id, d)).json(), {
      statusCode: 409,
      message: 'This package would put the vehicle over its capacity (2 parcels, 30 kg)',
      error: 'Conflict',
      code: 'OVER_CAPACITY',
    });
    assert.equal((await accept(medium.id, d)).statusCode, 200);
    // Two parcels: the third is refused whatever its weight.
    assert.equal((await accept(small.id, d)).json().code, 'OVER_CAPACITY');
    const pkg = await get(t, `/api/packages/${small.id}`, business.headers);
    assert.equal(pkg.json().status, 'PENDING', 'the refused accept changed nothing');
    const row = await t.db
      .selectFrom('driver_profiles')
      .select('active_jobs')
      .where('user_id', '=', d.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.active_jobs, 2);
  });

  test('the route: stops of the active jobs with ETAs, versioned; reorder with its 409s; who may read it', async () => {
    const d = await courier(3);
    const empty = await get(t, '/api/drivers/me/route', d.headers);
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(
      { ...(empty.json() as object), version: 0 },
      { id: d.id, version: 0, stops: [], distanceMeters: 0, durationSeconds: 0 },
    );

    const a = await createPackage({ pickup: stop(-1.2864, 36.8172), dropoff: stop(-1.3, 36.8) });
    const b = await createPackage({ pickup: stop(-1.287, 36.818), dropoff: stop(-1.31, 36.79) });
    assert.equal((await accept(a.id, d)).statusCode, 200);
    assert.equal((await accept(b.id, d)).statusCode, 200);
    const route = (await get(t, '/api/drivers/me/route', d.headers)).json();
    assert.equal(route.stops.length, 4);
    assert.ok(route.stops.every((s: { status: string }) => s.status === 'PENDING'));
    const etas = route.stops.map((s: { eta: string }) => Date.parse(s.eta));
    assert.deepEqual(
      [...etas].sort((x, y) => x - y),
      etas,
      'ETAs in route order',
    );
    assert.ok(route.durationSeconds > 0 && route.distanceMeters > 0);
    const kinds = (r: { stops: { jobId: string; kind: string }[] }) =>
      r.stops.map((s) => `${s.jobId === a.id ? 'a' : 'b'}${s.kind[0]}`);
    for (const job of ['a', 'b']) {
      const order = kinds(route);
      assert.ok(order.indexOf(`${job}P`) < order.indexOf(`${job}D`), 'each pickup before its drop-off');
    }

    // Reorder: b's pickup first, then a's, then the drop-offs.
    const id = (job: { id: string }, kind: string) =>
      route.stops.find((s: { jobId: string; kind: string }) => s.jobId === job.id && s.kind === kind).id;
    const wanted = [id(b, 'PICKUP'), id(a, 'PICKUP'), id(a, 'DROPOFF'), id(b, 'DROPOFF')];
    const stale = await put('/api/drivers/me/route/order', d.headers, { version: route.version - 1, stopIds: wanted });
    assert.deepEqual(stale.json(), {
      statusCode: 409,
      message: `The route changed (it is at version ${route.version}): read it again`,
      error: 'Conflict',
      code: 'ROUTE_CHANGED',
    });
    const backwards = await put('/api/drivers/me/route/order', d.headers, {
      version: route.version,
      stopIds: [id(a, 'DROPOFF'), id(a, 'PICKUP'), id(b, 'PICKUP'), id(b, 'DROPOFF')],
    });
    assert.deepEqual(backwards.json(), {
      statusCode: 409,
      message: `Stop ${id(a, 'DROPOFF')} (the drop-off of job ${a.id}) would come before its pickup`,
      error: 'Conflict',
      code: 'PICKUP_AFTER_DROPOFF',
    });
    const missing = await put('/api/drivers/me/route/order', d.headers, {
      version: route.version,
      stopIds: wanted.slice(1),
    });
    assert.equal(missing.statusCode, 400);
    const ok = await put('/api/drivers/me/route/order', d.headers, { version: route.version, stopIds: wanted });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().version, route.version + 1);
    assert.deepEqual(
      ok.json().stops.map((s: { id: string }) => s.id),
      wanted,
    );
    const again = (await get(t, '/api/drivers/me/route', d.headers)).json();
    assert.deepEqual(
      again.stops.map((s: { id: string }) => s.id),
      wanted,
      'the order is stored',
    );
    assert.equal(again.version, route.version + 1);

    // A step done bumps the version and marks the stop DONE.
    assert.equal((await post(t, `/api/packages/${b.id}/pickup`, d.headers)).statusCode, 200);
    const picked = (await get(t, '/api/drivers/me/route', d.headers)).json();
    assert.equal(picked.version, again.version + 1);
    assert.deepEqual(
      picked.stops.map((s: { id: string; status: string; eta: string | null }) => [s.id, s.status, s.eta === null]),
      [
        [id(b, 'PICKUP'), 'DONE', true],
        [id(a, 'PICKUP'), 'PENDING', false],
        [id(a, 'DROPOFF'), 'PENDING', false],
        [id(b, 'DROPOFF'), 'PENDING', false],
      ],
    );

    // Who reads /drivers/:id/route: admins, the driver's company, the driver; anyone else 404.
    assert.equal((await get(t, `/api/drivers/${d.id}/route`, admin.headers)).json().version, picked.version);
    assert.equal((await get(t, `/api/drivers/${d.id}/route`, company.headers)).statusCode, 200);
    for (const who of [otherCompany, business, customer])
      assert.deepEqual((await get(t, `/api/drivers/${d.id}/route`, who.headers)).json(), {
        statusCode: 404,
        message: 'Driver not found',
        error: 'Not Found',
        code: 'DRIVER_NOT_FOUND',
      });
    assert.equal((await get(t, '/api/drivers/not-a-uuid/route', admin.headers)).statusCode, 400);
  });

  test('reorder: a promised window that would break is refused, naming the stop', async () => {
    const d = await courier(3);
    const now = t.clock.nowMs();
    const window = (fromMin: number, toMin: number) => ({
      start: new Date(now + fromMin * 60_000).toISOString(),
      end: new Date(now + toMin * 60_000).toISOString(),
    });
    // a's drop-off is near and due within 40 minutes; b's drop-off is far (about 25 km away).
    const a = await createPackage({
      pickup: stop(-1.2864, 36.8172),
      dropoff: stop(-1.29, 36.82),
      dropoffWindow: window(-5, 40),
    });
    const b = await createPackage({ pickup: stop(-1.2864, 36.8172), dropoff: stop(-1.5, 36.9) });
    assert.equal((await accept(a.id, d)).statusCode, 200);
    assert.equal((await accept(b.id, d)).statusCode, 200);
    const route = (await get(t, '/api/drivers/me/route', d.headers)).json();
    const id = (job: { id: string }, kind: string) =>
      route.stops.find((s: { jobId: string; kind: string }) => s.jobId === job.id && s.kind === kind).id;
    const late = await put('/api/drivers/me/route/order', d.headers, {
      version: route.version,
      stopIds: [id(a, 'PICKUP'), id(b, 'PICKUP'), id(b, 'DROPOFF'), id(a, 'DROPOFF')],
    });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'WINDOW_BROKEN');
    assert.match(
      late.json().message,
      new RegExp(
        `^Stop ${id(a, 'DROPOFF')} \\(the drop-off of job ${a.id}\\) would be reached at .+, after its window ends at ${window(-5, 40).end}$`,
      ),
    );
  });
});
