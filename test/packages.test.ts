import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { canonicalJson } from '../src/http/idempotency.js';
import { rebuildPackageStatusHistory } from '../src/db/migrations/0029_failed_deliveries.js';
import { get, notFoundBody, packageBody, post } from './packages-helpers.js';
import type { BusEvents } from '../src/shared/bus.js';

describe('packages', () => {
  let t: TestApp;
  let business: TestUser;
  let otherBusiness: TestUser;
  let customer: TestUser;
  let otherCustomer: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let driver: TestUser;
  let otherDriver: TestUser;
  let admin: TestUser;
  const jobEvents: BusEvents['driver.job'][] = [];
  const pushes: BusEvents['driver.push'][] = [];

  before(async () => {
    // The lifecycle as before dispatch: nearby pushes, no offers (test/dispatch.test.ts covers offers).
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    business = await createUser(t, { role: 'BUSINESS' });
    otherBusiness = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    otherCustomer = await createUser(t, { role: 'CUSTOMER' });
    company = await createUser(t, { role: 'COMPANY' });
    otherCompany = await createUser(t, { role: 'COMPANY' });
    driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', companyId: company.id } });
    otherDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', companyId: otherCompany.id },
    });
    admin = await createUser(t, { role: 'ADMIN' });
    t.deps.bus.subscribe('driver.job', (e) => jobEvents.push(e));
    t.deps.bus.subscribe('driver.push', (e) => pushes.push(e));
  });
  after(async () => t.close());

  const create = async (
    by: TestUser = business,
    overrides: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) => post(t, '/api/packages', { ...by.headers, ...headers }, packageBody(by.countryId, overrides));

  async function activeJob(driverId: string) {
    const row = await t.db
      .selectFrom('driver_profiles')
      .select(['active_job_type', 'active_job_id'])
      .where('user_id', '=', driverId)
      .executeTakeFirstOrThrow();
    return row.active_job_id;
  }

  async function outbox(packageId: string) {
    const rows = await sql<{
      event: string;
      payload: string;
    }>`select event, payload from webhook_deliveries where delivery_id = ${packageId} order by seq`.execute(t.db);
    return rows.rows.map((r) => [r.event, JSON.parse(r.payload).status]);
  }

  test('full lifecycle: every poll of GET /packages/:id shows the status and history', async () => {
    // An endpoint of the business, so the outbox rows of each event can be counted.
    await sql`insert into webhook_endpoints (id, business_id, url, events, enabled, secret, created_at, updated_at)
      values (${randomUUID()}, ${business.id}, 'https://example.com/hook',
        array['delivery.assigned','delivery.picked_up','delivery.in_transit','delivery.delivered','delivery.failed','delivery.cancelled'],
        true, 'whsec_test', now(), now())`.execute(t.db);

    const created = await create(business, { customerId: customer.id, reference: 'ORD-1', requireDeliveryCode: true });
    assert.equal(created.statusCode, 201);
    const pkg = created.json();
    assert.match(pkg.deliveryCode, /^[0-9]{4}$/);
    assert.deepEqual(Object.keys(pkg).sort(), [
      'businessId',
      'cancellationFee',
      'cancellationFeeNow',
      'cashCollected',
      'cashOnDelivery',
      'countryId',
      'createdAt',
      'customerId',
      'deliveryCode',
      'dispatch',
      'driver',
      'dropoff',
      'dropoffWindow',
      'followUpId',
      'id',
      'orderType',
      'parcel',
      'payment',
      'paymentMethod',
      'pickup',
      'pickupWindow',
      'previousAttemptId',
      'price',
      'proof',
      'proofRequired',
      'reasonCode',
      'reference',
      'returnOf',
      'sla',
      'status',
      'statusHistory',
      'timeZone',
      'tip',
      'trackingUrl',
      'updatedAt',
      'vehicleType',
    ]);
    assert.equal(pkg.status, 'PENDING');
    assert.equal(pkg.orderType, 'PACKAGE_DELIVERY');
    assert.equal(pkg.businessId, business.id);
    assert.equal(pkg.customerId, customer.id);
    assert.equal(pkg.reference, 'ORD-1');
    assert.equal(pkg.driver, null);
    assert.deepEqual(pkg.dropoff, packageBody(business.countryId).dropoff);
    assert.deepEqual(pkg.statusHistory, [{ status: 'PENDING', at: pkg.createdAt }]);
    const code: string = pkg.deliveryCode;
    const stored = await t.db
      .selectFrom('packages')
      .select('delivery_code_hash')
      .where('id', '=', pkg.id)
      .executeTakeFirstOrThrow();
    assert.ok(stored.delivery_code_hash && !stored.delivery_code_hash.includes(code));

    const poll = async (who: TestUser = business) => {
      const res = await get(t, `/api/packages/${pkg.id}`, who.headers);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.deliveryCode, undefined);
      return body;
    };
    assert.equal((await poll(customer)).status, 'PENDING');

    t.clock.advance(1000);
    const accepted = await post(t, `/api/packages/${pkg.id}/accept`, driver.headers);
    assert.equal(accepted.statusCode, 200);
    let seen = await poll();
    assert.equal(seen.status, 'ASSIGNED');
    assert.deepEqual(seen.driver, {
      id: driver.id,
      firstName: 'Test',
      phone: driver.phone,
      vehicleType: 'BIKE',
      vehiclePlate: `KAA ${driver.id.slice(0, 4).toUpperCase()}`,
      rating: null,
      ratingCount: 0,
      location: null,
    });
    assert.equal(await activeJob(driver.id), pkg.id);
    assert.deepEqual(jobEvents.at(-1), { driverId: driver.id, busy: true, jobId: pkg.id, jobType: 'PACKAGE' });
    assert.deepEqual(pushes.at(-1), {
      driverId: driver.id,
      message: { type: 'job.assigned', jobType: 'PACKAGE', jobId: pkg.id, status: 'ASSIGNED' },
    });
    // The assigned driver and its company can now see it.
    assert.equal((await poll(driver)).status, 'ASSIGNED');
    assert.equal((await poll(company)).status, 'ASSIGNED');

    t.clock.advance(1000);
    assert.equal((await post(t, `/api/packages/${pkg.id}/pickup`, driver.headers)).statusCode, 200);
    assert.equal((await poll(customer)).status, 'PICKED_UP');
    t.clock.advance(1000);
    assert.equal((await post(t, `/api/packages/${pkg.id}/start`, driver.headers)).statusCode, 200);
    assert.equal((await poll()).status, 'IN_TRANSIT');

    const noCode = await post(t, `/api/packages/${pkg.id}/deliver`, driver.headers, {});
    assert.deepEqual(noCode.json(), {
      statusCode: 400,
      message: 'This package needs its deliveryCode to be delivered',
      error: 'Bad Request',
      code: 'DELIVERY_CODE_REQUIRED',
    });
    const wrong = String((Number(code) + 1) % 10000).padStart(4, '0');
    const wrongCode = await post(t, `/api/packages/${pkg.id}/deliver`, driver.headers, { deliveryCode: wrong });
    assert.deepEqual(wrongCode.json(), {
      statusCode: 403,
      message: 'Delivery code is incorrect',
      error: 'Forbidden',
      code: 'DELIVERY_CODE_INVALID',
    });
    assert.equal((await poll()).status, 'IN_TRANSIT');

    t.clock.advance(1000);
    const delivered = await post(t, `/api/packages/${pkg.id}/deliver`, driver.headers, {
      deliveryCode: code,
      recipientName: 'Otieno',
    });
    assert.equal(delivered.statusCode, 200);
    seen = await poll();
    assert.equal(seen.status, 'DELIVERED');
    const start = Date.parse(pkg.createdAt);
    assert.deepEqual(
      seen.statusHistory,
      ['PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT', 'DELIVERED'].map((status, i) => ({
        status,
        at: new Date(start + i * 1000).toISOString(),
      })),
    );
    assert.equal(await activeJob(driver.id), null);
    assert.deepEqual(jobEvents.at(-1), { driverId: driver.id, busy: false, jobId: pkg.id, jobType: 'PACKAGE' });
    // One outbox row per event, in order, written with the status change.
    assert.deepEqual(await outbox(pkg.id), [
      ['delivery.assigned', 'ASSIGNED'],
      ['delivery.picked_up', 'PICKED_UP'],
      ['delivery.in_transit', 'IN_TRANSIT'],
      ['delivery.delivered', 'DELIVERED'],
    ]);

    // Final: nothing moves it any more.
    const again = await post(t, `/api/packages/${pkg.id}/cancel`, business.headers, {});
    assert.deepEqual(again.json(), {
      statusCode: 409,
      message: 'Package is DELIVERED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    const fail = await post(t, `/api/packages/${pkg.id}/fail`, driver.headers, { reason: 'late' });
    assert.deepEqual(fail.json(), {
      statusCode: 409,
      message: 'Package is DELIVERED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
  });

  test('a poll returns exactly the package object of every other package response, state by state', async () => {
    // The poll's JSON is built by PostgreSQL; every other response by the service. They must agree.
    const polled = async (id: string) => {
      const res = await get(t, `/api/packages/${id}`, business.headers);
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /^application\/json; charset=utf-8$/);
      return res.json();
    };
    const listed = async (id: string) =>
      (await get(t, '/api/packages?limit=100', business.headers)).json().items.find((p: { id: string }) => p.id === id);
    // The driver's action answers as the driver sees it; the creator also sees cancellationFeeNow (section 20).
    const same = async (response: { statusCode: number; json(): any }, expectedStatus: string) => {
      assert.equal(response.statusCode, 200, JSON.stringify(response.json()));
      const fromAction = response.json();
      assert.equal(fromAction.status, expectedStatus);
      assert.deepEqual((await get(t, `/api/packages/${fromAction.id}`, driver.headers)).json(), fromAction);
      // The driver's answers carry its earnings (section 21), which the business never sees; the
      // creator's poll and list also carry cancellationFeeNow (section 20).
      const { earnings: _earnings, ...forBusiness } = fromAction;
      const { cancellationFeeNow: polledFee, ...creatorPoll } = await polled(fromAction.id);
      assert.deepEqual(creatorPoll, forBusiness);
      const { cancellationFeeNow: listedFee, ...creatorListed } = await listed(fromAction.id);
      assert.deepEqual(creatorListed, forBusiness);
      assert.deepEqual(listedFee, polledFee);
      // An admin's poll (SQL-built text plus the viewer's fields) is the driver's answer, earnings included.
      assert.deepEqual((await get(t, `/api/packages/${fromAction.id}`, admin.headers)).json(), fromAction);
    };

    // Every optional field given, odd numbers included.
    const full = await create(business, {
      customerId: customer.id,
      reference: 'ORD-"quoted"-ü',
      requireDeliveryCode: true,
      pickup: {
        location: { lat: -1.286412345678901, lng: 36.81721234 },
        address: 'Moi Avenue 1\nNairobi',
        contactName: 'Wanjiru',
        contactPhone: '+254712345678',
        notes: '',
      },
      parcel: { description: 'Glass ✓', weightKg: 2.5, size: 'LARGE' },
    });
    assert.equal(full.statusCode, 201);
    const { deliveryCode, ...created } = full.json();
    assert.match(deliveryCode, /^[0-9]{4}$/);
    assert.deepEqual(await polled(created.id), created);

    // The assigned driver with a known position, heading and speed.
    await t.db
      .updateTable('driver_profiles')
      .set({
        last_lat: -1.29234567890123,
        last_lng: 36.82,
        last_heading: 271.5,
        last_speed: 8.25,
        last_location_at: new Date(t.clock.now().getTime() - 1500),
      })
      .where('user_id', '=', driver.id)
      .execute();
    t.clock.advance(1000);
    await same(await post(t, `/api/packages/${created.id}/accept`, driver.headers), 'ASSIGNED');
    t.clock.advance(1000);
    await same(await post(t, `/api/packages/${created.id}/pickup`, driver.headers), 'PICKED_UP');
    t.clock.advance(1000);
    await same(await post(t, `/api/packages/${created.id}/start`, driver.headers), 'IN_TRANSIT');
    t.clock.advance(1000);
    // A reason in the history.
    await same(
      await post(t, `/api/packages/${created.id}/fail`, driver.headers, { reason: 'Recipient away' }),
      'FAILED',
    );

    // No optional field, no customer, a driver without a position, then cancelled with a reason.
    await t.db
      .updateTable('driver_profiles')
      .set({ last_lat: null, last_lng: null, last_heading: null, last_speed: null, last_location_at: null })
      .where('user_id', '=', driver.id)
      .execute();
    const bare = await create(business, { parcel: { description: 'Keys' } });
    assert.equal(bare.statusCode, 201);
    assert.deepEqual(await polled(bare.json().id), bare.json());
    await same(await post(t, `/api/packages/${bare.json().id}/accept`, driver.headers), 'ASSIGNED');
    await same(
      await post(t, `/api/packages/${bare.json().id}/cancel`, admin.headers, { reason: 'Duplicate order' }),
      'CANCELLED',
    );
  });

  test('the history in the package row: rebuilt by the migration as the trigger writes it, whoever inserts the history row', async () => {
    const pkg = (await create()).json();
    t.clock.advance(1000);
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
    t.clock.advance(1000);
    const failed = await post(t, `/api/packages/${pkg.id}/fail`, driver.headers, { reason: 'Address not found' });
    assert.equal(failed.statusCode, 200);
    const before = await t.db
      .selectFrom('packages')
      .select('status_history')
      .where('id', '=', pkg.id)
      .executeTakeFirstOrThrow();
    assert.equal(before.status_history.length, 3);
    await sql`update packages set status_history = '[]'::jsonb where id = ${pkg.id}`.execute(t.db);
    await rebuildPackageStatusHistory(t.db);
    const after = await t.db
      .selectFrom('packages')
      .select('status_history')
      .where('id', '=', pkg.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(after.status_history, before.status_history);
    assert.deepEqual(after.status_history.at(-1), {
      status: 'FAILED',
      at: failed.json().updatedAt,
      reason: 'Address not found',
      reasonCode: 'OTHER',
    });
    // A history row written by anything else (an instance of the previous version during a deploy)
    // reaches the column too: a trigger appends every inserted row.
    const at = new Date(t.clock.now().getTime() + 1000);
    await t.db
      .insertInto('package_status_history')
      .values({ package_id: pkg.id, status: 'CANCELLED', reason: null, actor_id: null, at })
      .execute();
    const polled = (await get(t, `/api/packages/${pkg.id}`, business.headers)).json();
    assert.deepEqual(polled.statusHistory.at(-1), { status: 'CANCELLED', at: at.toISOString() });
    assert.equal(polled.statusHistory.length, 4);
  });

  test('steps out of order get 409 naming the current status', async () => {
    const pkg = (await create()).json();
    const early = await post(t, `/api/packages/${pkg.id}/accept`, otherDriver.headers);
    assert.equal(early.statusCode, 200);
    const skip = await post(t, `/api/packages/${pkg.id}/start`, otherDriver.headers);
    assert.deepEqual(skip.json(), {
      statusCode: 409,
      message: 'Package is ASSIGNED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    const deliver = await post(t, `/api/packages/${pkg.id}/deliver`, otherDriver.headers);
    assert.deepEqual(deliver.json(), {
      statusCode: 409,
      message: 'Package is ASSIGNED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    const fail = await post(t, `/api/packages/${pkg.id}/fail`, otherDriver.headers, {
      reason: 'Recipient unreachable',
    });
    assert.equal(fail.statusCode, 200);
    assert.deepEqual(fail.json().statusHistory.at(-1), {
      status: 'FAILED',
      at: fail.json().updatedAt,
      reason: 'Recipient unreachable',
      reasonCode: 'OTHER',
    });
    assert.equal(await activeJob(otherDriver.id), null);
  });

  test('a package without a delivery code is delivered without one; no code in the 201', async () => {
    const created = await create(customer);
    assert.equal(created.json().deliveryCode, undefined);
    assert.equal(created.json().customerId, customer.id);
    assert.equal(created.json().businessId, null);
    const id = created.json().id;
    for (const step of ['accept', 'pickup', 'start', 'deliver']) {
      const res = await post(t, `/api/packages/${id}/${step}`, driver.headers);
      assert.equal(res.statusCode, 200, `${step}: ${res.body}`);
    }
    assert.equal((await get(t, `/api/packages/${id}`, customer.headers)).json().status, 'DELIVERED');
    // No business: no outbox rows.
    assert.deepEqual(await outbox(id), []);
  });

  test('cancellation by the creator (PENDING) and by an admin (ASSIGNED, which frees the driver)', async () => {
    const a = (await create()).json();
    const cancelled = await post(t, `/api/packages/${a.id}/cancel`, business.headers, {
      reason: 'Customer changed mind',
    });
    assert.equal(cancelled.statusCode, 200);
    assert.deepEqual(
      cancelled.json().statusHistory.map((h: { status: string; reason?: string }) => [h.status, h.reason]),
      [
        ['PENDING', undefined],
        ['CANCELLED', 'Customer changed mind'],
      ],
    );
    const b = (await create()).json();
    await post(t, `/api/packages/${b.id}/accept`, driver.headers);
    assert.equal(await activeJob(driver.id), b.id);
    const byAdmin = await post(t, `/api/packages/${b.id}/cancel`, admin.headers);
    assert.equal(byAdmin.statusCode, 200);
    assert.equal(byAdmin.json().status, 'CANCELLED');
    assert.equal(await activeJob(driver.id), null);
    assert.deepEqual(pushes.at(-1), {
      driverId: driver.id,
      message: { type: 'job.updated', jobType: 'PACKAGE', jobId: b.id, status: 'CANCELLED' },
    });
    // The named customer is not the creator: it may follow the package but not cancel it.
    const c = (await create(business, { customerId: customer.id })).json();
    const byCustomer = await post(t, `/api/packages/${c.id}/cancel`, customer.headers);
    assert.deepEqual(byCustomer.json(), {
      statusCode: 403,
      message: 'You may not move this package to CANCELLED',
      error: 'Forbidden',
      code: 'ACTION_NOT_ALLOWED',
    });
    // Once picked up it can no longer be cancelled.
    await post(t, `/api/packages/${c.id}/accept`, driver.headers);
    await post(t, `/api/packages/${c.id}/pickup`, driver.headers);
    const late = await post(t, `/api/packages/${c.id}/cancel`, business.headers);
    assert.deepEqual(late.json(), {
      statusCode: 409,
      message: 'Package is PICKED_UP',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    const adminFail = await post(t, `/api/packages/${c.id}/fail`, admin.headers, { reason: 'Lost' });
    assert.equal(adminFail.json().status, 'FAILED');
    assert.equal(await activeJob(driver.id), null);
  });

  test('a company lists the PENDING packages of its country, without the contacts, to assign them', async () => {
    const pending = (await create()).json();
    const foreign = await createUser(t, { role: 'COMPANY', countryCode: 'NG' });
    const listed = (await get(t, '/api/packages?status=PENDING&limit=100', company.headers)).json().items as {
      id: string;
      pickup: object;
      dropoff: object;
    }[];
    const row = listed.find((p) => p.id === pending.id);
    assert.ok(row, 'listed for the company of its country');
    // The whole reduced view is asserted in test/packages-company-view.test.ts.
    assert.deepEqual(Object.keys(row.pickup), ['location', 'address']);
    assert.deepEqual(Object.keys(row.dropoff), ['location', 'address']);
    const abroad = (await get(t, '/api/packages?status=PENDING&limit=100', foreign.headers)).json().items as {
      id: string;
    }[];
    assert.equal(
      abroad.some((p) => p.id === pending.id),
      false,
      'not for a company of another country',
    );
    await post(t, `/api/packages/${pending.id}/cancel`, business.headers);
  });

  test('assignment by an admin, and by a company for its own drivers only', async () => {
    const a = (await create()).json();
    const byAdmin = await post(t, `/api/packages/${a.id}/assign`, admin.headers, { driverId: driver.id });
    assert.equal(byAdmin.statusCode, 200);
    assert.equal(byAdmin.json().driver.id, driver.id);
    await post(t, `/api/packages/${a.id}/cancel`, admin.headers);

    const b = (await create()).json();
    const notOurs = await post(t, `/api/packages/${b.id}/assign`, company.headers, { driverId: otherDriver.id });
    assert.deepEqual(notOurs.json(), {
      statusCode: 404,
      message: 'Driver not found',
      error: 'Not Found',
      code: 'DRIVER_NOT_FOUND',
    });
    const unknown = await post(t, `/api/packages/${b.id}/assign`, admin.headers, { driverId: customer.id });
    assert.deepEqual(unknown.json(), {
      statusCode: 404,
      message: 'Driver not found',
      error: 'Not Found',
      code: 'DRIVER_NOT_FOUND',
    });
    const ours = await post(t, `/api/packages/${b.id}/assign`, company.headers, { driverId: driver.id });
    assert.equal(ours.statusCode, 200);
    assert.equal(ours.json().status, 'ASSIGNED');
    const twice = await post(t, `/api/packages/${b.id}/assign`, admin.headers, { driverId: otherDriver.id });
    assert.deepEqual(twice.json(), {
      statusCode: 409,
      message: 'Package is ASSIGNED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    await post(t, `/api/packages/${b.id}/cancel`, business.headers);
  });

  test('a driver with an active job, offline, or with another vehicle cannot take a package', async () => {
    const first = (await create()).json();
    const second = (await create()).json();
    assert.equal((await post(t, `/api/packages/${first.id}/accept`, driver.headers)).statusCode, 200);
    const busy = await post(t, `/api/packages/${second.id}/accept`, driver.headers);
    assert.deepEqual(busy.json(), {
      statusCode: 409,
      message: 'Driver already has an active job',
      error: 'Conflict',
      code: 'DRIVER_BUSY',
    });
    assert.equal((await get(t, `/api/packages/${second.id}`, business.headers)).json().status, 'PENDING');
    await post(t, `/api/packages/${first.id}/cancel`, business.headers);

    const offline = await createUser(t, { role: 'DRIVER', driver: { availability: 'OFFLINE' } });
    const res = await post(t, `/api/packages/${second.id}/accept`, offline.headers);
    assert.deepEqual(res.json(), {
      statusCode: 409,
      message: 'Driver is offline',
      error: 'Conflict',
      code: 'DRIVER_OFFLINE',
    });
    const car = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    const wrongVehicle = await post(t, `/api/packages/${second.id}/accept`, car.headers);
    assert.deepEqual(wrongVehicle.json(), {
      statusCode: 409,
      message: 'This job needs a BIKE',
      error: 'Conflict',
      code: 'VEHICLE_TYPE_MISMATCH',
    });
    const ridesOnly = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', serviceTypes: ['RIDE'] },
    });
    const wrongService = await post(t, `/api/packages/${second.id}/accept`, ridesOnly.headers);
    assert.deepEqual(wrongService.json(), {
      statusCode: 409,
      message: 'Driver does not serve PACKAGE_DELIVERY',
      error: 'Conflict',
      code: 'SERVICE_TYPE_MISMATCH',
    });
    assert.equal((await get(t, `/api/packages/${second.id}`, business.headers)).json().status, 'PENDING');
    await post(t, `/api/packages/${second.id}/cancel`, business.headers);
  });

  test('20 drivers accept the same package at once: exactly one wins, 19 get 409', async () => {
    const drivers = await Promise.all(
      Array.from({ length: 20 }, () => createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } })),
    );
    const pkg = (await create()).json();
    const results = await Promise.all(drivers.map((d) => post(t, `/api/packages/${pkg.id}/accept`, d.headers)));
    const winners = results.filter((r) => r.statusCode === 200);
    const losers = results.filter((r) => r.statusCode === 409);
    assert.equal(winners.length, 1);
    assert.equal(losers.length, 19);
    for (const r of losers)
      assert.deepEqual(r.json(), {
        statusCode: 409,
        message: 'Package is ASSIGNED',
        error: 'Conflict',
        code: 'INVALID_STATUS_TRANSITION',
      });
    const winner = winners[0].json().driver.id;
    const busy = await t.db
      .selectFrom('driver_profiles')
      .select('user_id')
      .where('active_job_id', '=', pkg.id)
      .execute();
    assert.deepEqual(
      busy.map((r) => r.user_id),
      [winner],
    );
    const history = await t.db
      .selectFrom('package_status_history')
      .select('status')
      .where('package_id', '=', pkg.id)
      .execute();
    assert.deepEqual(
      history.map((h) => h.status),
      ['PENDING', 'ASSIGNED'],
    );
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });

  test("object-level authorization: someone else's package is 404 on every route", async () => {
    const pending = (await create(business, { customerId: customer.id })).json();
    const assigned = (await create(business, { customerId: customer.id })).json();
    await post(t, `/api/packages/${assigned.id}/accept`, driver.headers);
    const missing = randomUUID();
    const nf = notFoundBody('Package');

    // Reading: anyone who is not creator, named customer, assigned driver, its company or admin.
    for (const who of [otherBusiness, otherCustomer, otherDriver, otherCompany]) {
      for (const id of [pending.id, assigned.id, missing]) {
        const res = await get(t, `/api/packages/${id}`, who.headers);
        assert.deepEqual(res.json(), nf, `${who.role} GET ${id}`);
      }
      const list = await get(t, '/api/packages?limit=100', who.headers);
      // A company of the package's country lists a PENDING one to assign it, without the contacts (section 9).
      const leaked = list
        .json()
        .items.filter(
          (p: { id: string; pickup: { contactPhone?: string } }) =>
            p.id === assigned.id ||
            (p.id === pending.id && (who.role !== 'COMPANY' || p.pickup.contactPhone !== undefined)),
        );
      assert.deepEqual(leaked, [], `${who.role} list`);
    }
    // Even the eligible but unassigned driver and the company cannot read a PENDING package's contacts.
    assert.deepEqual((await get(t, `/api/packages/${pending.id}`, company.headers)).json(), nf);
    // Changing: the assigned driver's steps by another driver; cancel by other creators.
    for (const step of ['pickup', 'start', 'deliver']) {
      assert.deepEqual(
        (await post(t, `/api/packages/${assigned.id}/${step}`, otherDriver.headers, {})).json(),
        nf,
        step,
      );
      assert.deepEqual((await post(t, `/api/packages/${missing}/${step}`, driver.headers, {})).json(), nf, step);
    }
    assert.deepEqual(
      (await post(t, `/api/packages/${assigned.id}/fail`, otherDriver.headers, { reason: 'x' })).json(),
      nf,
    );
    for (const who of [otherBusiness, otherCustomer]) {
      for (const id of [pending.id, assigned.id])
        assert.deepEqual((await post(t, `/api/packages/${id}/cancel`, who.headers, {})).json(), nf);
    }
    assert.deepEqual((await post(t, `/api/packages/${missing}/accept`, otherDriver.headers)).json(), nf);
    assert.deepEqual(
      (await post(t, `/api/packages/${missing}/assign`, admin.headers, { driverId: driver.id })).json(),
      nf,
    );
    // Another company cannot see (or reassign) a package assigned outside it.
    assert.deepEqual(
      (await post(t, `/api/packages/${assigned.id}/assign`, otherCompany.headers, { driverId: otherDriver.id })).json(),
      nf,
    );
    // A driver losing the race for a package gets 409, not 404 (it was offered to it).
    assert.deepEqual((await post(t, `/api/packages/${assigned.id}/accept`, otherDriver.headers)).json(), {
      statusCode: 409,
      message: 'Package is ASSIGNED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    // Nothing changed.
    assert.equal((await get(t, `/api/packages/${pending.id}`, admin.headers)).json().status, 'PENDING');
    assert.equal((await get(t, `/api/packages/${assigned.id}`, admin.headers)).json().status, 'ASSIGNED');
    await post(t, `/api/packages/${pending.id}/cancel`, business.headers);
    await post(t, `/api/packages/${assigned.id}/cancel`, business.headers);
  });

  test('wrong roles get 403; no token 401; malformed id 400', async () => {
    const pkg = (await create()).json();
    const wrongRole = (roles: string) => ({
      statusCode: 403,
      message: `This action requires role ${roles}`,
      error: 'Forbidden',
      code: 'WRONG_ROLE',
    });
    for (const who of [driver, company, admin]) {
      assert.deepEqual((await create(who)).json(), wrongRole('BUSINESS or CUSTOMER'), who.role);
    }
    for (const step of ['accept', 'pickup', 'start', 'deliver']) {
      for (const who of [business, customer, company, admin]) {
        assert.deepEqual(
          (await post(t, `/api/packages/${pkg.id}/${step}`, who.headers, {})).json(),
          wrongRole('DRIVER'),
          `${who.role} ${step}`,
        );
      }
    }
    for (const who of [business, customer, company]) {
      assert.deepEqual(
        (await post(t, `/api/packages/${pkg.id}/fail`, who.headers, { reason: 'x' })).json(),
        wrongRole('DRIVER or ADMIN'),
      );
    }
    for (const who of [business, customer, driver]) {
      assert.deepEqual(
        (await post(t, `/api/packages/${pkg.id}/assign`, who.headers, { driverId: driver.id })).json(),
        wrongRole('ADMIN or COMPANY'),
      );
    }
    for (const who of [driver, company]) {
      assert.deepEqual(
        (await post(t, `/api/packages/${pkg.id}/cancel`, who.headers, {})).json(),
        wrongRole('BUSINESS or CUSTOMER or ADMIN'),
      );
    }
    const pendingBusiness = await createUser(t, { role: 'BUSINESS', status: 'PENDING_APPROVAL' });
    assert.deepEqual((await create(pendingBusiness)).json(), {
      statusCode: 403,
      message: 'Account is pending approval',
      error: 'Forbidden',
      code: 'ACCOUNT_PENDING_APPROVAL',
    });
    const noToken = await t.app.inject({ method: 'GET', url: `/api/packages/${pkg.id}` });
    assert.deepEqual(noToken.json(), {
      statusCode: 401,
      message: 'Missing bearer token',
      error: 'Unauthorized',
      code: 'MISSING_TOKEN',
    });
    const malformed = await get(t, '/api/packages/not-a-uuid', business.headers);
    assert.deepEqual(malformed.json(), {
      statusCode: 400,
      message: 'params.id must be a valid uuid',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });

  test('validation errors on creation', async () => {
    const bad = async (overrides: Record<string, unknown>, by: TestUser = business) => {
      const res = await create(by, overrides);
      return res.json();
    };
    const v = (message: string) => ({ statusCode: 400, message, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    const base = packageBody(business.countryId);
    assert.deepEqual(
      await bad({ pickup: { ...base.pickup, location: { lat: 91, lng: 0 } } }),
      v('body.pickup.location.lat must be <= 90'),
    );
    assert.deepEqual(
      await bad({ dropoff: { ...base.dropoff, location: { lat: 0, lng: -181 } } }),
      v('body.dropoff.location.lng must be >= -180'),
    );
    assert.deepEqual(
      await bad({ pickup: { ...base.pickup, contactPhone: '0712345678' } }),
      v('body.pickup.contactPhone must match pattern "^\\+[1-9][0-9]{6,14}$"'),
    );
    assert.deepEqual(
      await bad({ dropoff: { ...base.dropoff, contactPhone: '+2540000000' } }),
      v('body.dropoff.contactPhone must be a valid phone number'),
    );
    assert.deepEqual(
      await bad({ parcel: { description: 'Box', size: 'HUGE' } }),
      v('body.parcel.size must be one of SMALL, MEDIUM, LARGE'),
    );
    assert.deepEqual(await bad({ parcel: { description: 'Box', weightKg: 0 } }), v('body.parcel.weightKg must be > 0'));
    assert.deepEqual(await bad({ parcel: { weightKg: 1 } }), v('body.parcel.description is required'));
    assert.deepEqual(await bad({ vehicleType: 'PLANE' }), v('body.vehicleType must be one of BIKE, CAR, VAN, TRUCK'));
    assert.deepEqual(await bad({ status: 'DELIVERED' }), v('body has an unknown property "status"'));
    assert.deepEqual(await bad({ countryId: 'KE' }), v('body.countryId must be a valid uuid'));
    assert.deepEqual(await bad({ requireDeliveryCode: 'yes' }), v('body.requireDeliveryCode must be boolean'));
    assert.deepEqual(await bad({ countryId: randomUUID() }), {
      statusCode: 404,
      message: 'Country not found',
      error: 'Not Found',
      code: 'COUNTRY_NOT_FOUND',
    });
    assert.deepEqual(await bad({ customerId: randomUUID() }), {
      statusCode: 404,
      message: 'Customer not found',
      error: 'Not Found',
      code: 'CUSTOMER_NOT_FOUND',
    });
    assert.deepEqual(await bad({ customerId: driver.id }), {
      statusCode: 404,
      message: 'Customer not found',
      error: 'Not Found',
      code: 'CUSTOMER_NOT_FOUND',
    });
    assert.deepEqual(await bad({ customerId: otherCustomer.id }, customer), {
      statusCode: 403,
      message: 'A customer may only name itself as customerId',
      error: 'Forbidden',
      code: 'CUSTOMER_MISMATCH',
    });
    const failNoReason = await post(t, `/api/packages/${randomUUID()}/fail`, driver.headers, {});
    assert.deepEqual(failNoReason.json(), v('body must have reason or reasonCode'));
    const badCode = await post(t, `/api/packages/${randomUUID()}/deliver`, driver.headers, { deliveryCode: '12a4' });
    assert.deepEqual(badCode.json(), v('body.deliveryCode must match pattern "^[0-9]{4}$"'));
    const badStatus = await get(t, '/api/packages?status=LOST', business.headers);
    assert.deepEqual(
      badStatus.json(),
      v('querystring.status must be one of PENDING, ASSIGNED, PICKED_UP, IN_TRANSIT, DELIVERED, FAILED, CANCELLED'),
    );
    const badCursor = await get(t, '/api/packages?cursor=nope', business.headers);
    assert.deepEqual(badCursor.json(), {
      statusCode: 400,
      message: 'Invalid cursor',
      error: 'Bad Request',
      code: 'INVALID_CURSOR',
    });
  });

  test('five wrong delivery codes lock the code', async () => {
    const pkg = (await create(business, { requireDeliveryCode: true })).json();
    for (const step of ['accept', 'pickup', 'start'])
      await post(t, `/api/packages/${pkg.id}/${step}`, otherDriver.headers);
    const wrong = String((Number(pkg.deliveryCode) + 5) % 10000).padStart(4, '0');
    for (let i = 0; i < 5; i += 1)
      assert.equal(
        (await post(t, `/api/packages/${pkg.id}/deliver`, otherDriver.headers, { deliveryCode: wrong })).statusCode,
        403,
      );
    const locked = await post(t, `/api/packages/${pkg.id}/deliver`, otherDriver.headers, {
      deliveryCode: pkg.deliveryCode,
    });
    assert.deepEqual(locked.json(), {
      statusCode: 403,
      message: 'Too many wrong delivery codes; contact support',
      error: 'Forbidden',
      code: 'DELIVERY_CODE_LOCKED',
    });
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/fail`, otherDriver.headers, { reason: 'Code locked' })).statusCode,
      200,
    );
  });

  test('parallel guesses cannot test more than five delivery codes', async () => {
    const pkg = (await create(business, { requireDeliveryCode: true })).json();
    for (const step of ['accept', 'pickup', 'start'])
      assert.equal((await post(t, `/api/packages/${pkg.id}/${step}`, otherDriver.headers)).statusCode, 200);
    const guesses = Array.from({ length: 20 }, (_, i) =>
      String((Number(pkg.deliveryCode) + 1 + i) % 10000).padStart(4, '0'),
    );
    const results = await Promise.all(
      guesses.map((code) => post(t, `/api/packages/${pkg.id}/deliver`, otherDriver.headers, { deliveryCode: code })),
    );
    const codes = results.map((r) => r.json().code);
    assert.equal(codes.filter((c) => c === 'DELIVERY_CODE_INVALID').length, 5);
    assert.equal(codes.filter((c) => c === 'DELIVERY_CODE_LOCKED').length, 15);
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/fail`, otherDriver.headers, { reason: 'Code locked' })).statusCode,
      200,
    );
  });

  test('GET /packages: what the caller may see, newest first, cursor pages and status filter', async () => {
    const lister = await createUser(t, { role: 'BUSINESS' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      t.clock.advance(10);
      ids.push((await create(lister)).json().id);
    }
    await post(t, `/api/packages/${ids[1]}/cancel`, lister.headers);
    const page1 = (await get(t, '/api/packages?limit=2', lister.headers)).json();
    assert.deepEqual(
      page1.items.map((p: { id: string }) => p.id),
      [ids[4], ids[3]],
    );
    const page2 = (await get(t, `/api/packages?limit=2&cursor=${page1.nextCursor}`, lister.headers)).json();
    assert.deepEqual(
      page2.items.map((p: { id: string }) => p.id),
      [ids[2], ids[1]],
    );
    const page3 = (await get(t, `/api/packages?limit=2&cursor=${page2.nextCursor}`, lister.headers)).json();
    assert.deepEqual(page3, { items: [page3.items[0]], nextCursor: null });
    assert.equal(page3.items[0].id, ids[0]);
    const cancelled = (await get(t, '/api/packages?status=CANCELLED', lister.headers)).json();
    assert.deepEqual(
      cancelled.items.map((p: { id: string }) => p.id),
      [ids[1]],
    );
    const adminView = (await get(t, '/api/packages?limit=100', admin.headers)).json();
    assert.ok(ids.every((id) => adminView.items.some((p: { id: string }) => p.id === id)));
    for (const id of ids) await post(t, `/api/packages/${id}/cancel`, lister.headers);
  });

  describe('Idempotency-Key', () => {
    test('same key and body: the stored response, replayed, nothing created', async () => {
      const count = async () =>
        (
          await t.db
            .selectFrom('packages')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('created_by', '=', business.id)
            .executeTakeFirstOrThrow()
        ).n;
      const before = await count();
      const first = await create(business, { requireDeliveryCode: true }, { 'idempotency-key': 'order-42' });
      assert.equal(first.statusCode, 201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      // Keys in another order are the same body.
      const body = packageBody(business.countryId, { requireDeliveryCode: true });
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const second = await post(t, '/api/packages', { ...business.headers, 'idempotency-key': 'order-42' }, reordered);
      assert.equal(second.statusCode, 201);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body, first.body);
      assert.equal(await count(), before + 1);
      // The stored response is not readable at rest (it holds the delivery code).
      const row = await t.db
        .selectFrom('idempotency_keys')
        .select('response_body')
        .where('key', '=', 'order-42')
        .executeTakeFirstOrThrow();
      const stored = Buffer.from(row.response_body!, 'base64').toString('latin1');
      assert.ok(!row.response_body!.includes(first.json().id));
      assert.ok(!stored.includes(first.json().id), 'the decoded bytes must not show the package id');
      assert.throws(() => JSON.parse(stored));

      const different = await create(business, { reference: 'other' }, { 'idempotency-key': 'order-42' });
      assert.deepEqual(different.json(), {
        statusCode: 422,
        message: 'Idempotency-Key was already used with a different request',
        error: 'Unprocessable Entity',
        code: 'IDEMPOTENCY_KEY_REUSED',
      });
      // Another account has its own keys.
      const other = await create(otherBusiness, {}, { 'idempotency-key': 'order-42' });
      assert.equal(other.statusCode, 201);
      assert.notEqual(other.json().id, first.json().id);
      // After 24 hours the key is free again.
      t.clock.advance(24 * 3600_000 + 1000);
      // Access tokens live 15 minutes: sign fresh ones at the new time.
      for (const u of [business, otherBusiness])
        u.headers.authorization = `Bearer ${(await t.tokens.signAccess({ userId: u.id, role: u.role, sessionId: u.sessionId })).token}`;
      const later = await post(t, '/api/packages', { ...business.headers, 'idempotency-key': 'order-42' }, body);
      assert.equal(later.statusCode, 201);
      assert.equal(later.headers['idempotent-replayed'], undefined);
      assert.notEqual(later.json().id, first.json().id);
      for (const id of [first.json().id, later.json().id])
        await post(t, `/api/packages/${id}/cancel`, business.headers);
      await post(t, `/api/packages/${other.json().id}/cancel`, otherBusiness.headers);
    });

    test('a key still in flight gets 409; a failed request frees its key', async () => {
      const body = packageBody(business.countryId);
      const hash = createHash('sha256')
        .update(`POST /packages\n${canonicalJson(body)}`)
        .digest('hex');
      await t.db
        .insertInto('idempotency_keys')
        .values({
          account_id: business.id,
          key: 'in-flight',
          request_hash: hash,
          state: 'IN_FLIGHT',
          response_status: null,
          response_body: null,
          created_at: t.clock.now(),
        })
        .execute();
      const res = await post(t, '/api/packages', { ...business.headers, 'idempotency-key': 'in-flight' }, body);
      assert.deepEqual(res.json(), {
        statusCode: 409,
        message: 'A request with this Idempotency-Key is still in progress',
        error: 'Conflict',
        code: 'IDEMPOTENCY_KEY_IN_FLIGHT',
      });

      const failing = await create(business, { countryId: randomUUID() }, { 'idempotency-key': 'retry-me' });
      assert.equal(failing.statusCode, 404);
      const fixed = await create(business, {}, { 'idempotency-key': 'retry-me' });
      assert.equal(fixed.statusCode, 201);
      await post(t, `/api/packages/${fixed.json().id}/cancel`, business.headers);
    });

    test('the key must be 1 to 255 characters', async () => {
      const v = {
        statusCode: 400,
        message: 'Idempotency-Key must be 1 to 255 characters',
        error: 'Bad Request',
        code: 'INVALID_IDEMPOTENCY_KEY',
      };
      assert.deepEqual((await create(business, {}, { 'idempotency-key': 'k'.repeat(256) })).json(), v);
      assert.deepEqual((await create(business, {}, { 'idempotency-key': '' })).json(), v);
      const ok = await create(business, {}, { 'idempotency-key': 'k'.repeat(255) });
      assert.equal(ok.statusCode, 201);
      await post(t, `/api/packages/${ok.json().id}/cancel`, business.headers);
    });
  });
});
