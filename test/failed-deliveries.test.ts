// Failed deliveries (contract section 23): the reason code, re-attempts and returns as new linked
// packages (priced, paid, tracked and announced as any package), their errors and idempotency.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, setDriverPosition, stop } from './packages-helpers.js';

/** A flat tariff: every BIKE package costs 12,000 (10,000 trip + 2,000 booking fee). */
const TARIFF = {
  base: 10_000,
  perKm: 0,
  perMinute: 0,
  minimum: 0,
  bookingFee: 2_000,
  cancellationFee: 5_000,
  commissionRate: 1500,
};

const A = { lat: -1.2864, lng: 36.8172 };
const B = { lat: -1.3, lng: 36.8 };

describe('failed deliveries', () => {
  let t: TestApp;
  let admin: TestUser;
  let business: TestUser;
  let other: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'off' } });
    admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS' });
    other = await createUser(t, { role: 'BUSINESS' });
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/tariffs/${business.countryId}/BIKE`,
      headers: admin.headers,
      payload: TARIFF,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().returnRate, 10_000);
    // One endpoint: each event of the business's packages writes one outbox row.
    const hook = await post(t, '/api/webhooks', business.headers, { url: 'https://hooks.example.com/fails' });
    assert.equal(hook.statusCode, 201, hook.body);
  });
  after(() => t.close());

  /** A package of `business` taken by a new driver and moved along `steps`. */
  const packageAt = async (steps: ('pickup' | 'start')[], extra: Record<string, unknown> = {}) => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    await setDriverPosition(t, driver.id, A.lat, A.lng);
    const created = await post(t, '/api/packages', business.headers, packageBody(business.countryId, extra));
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    for (const s of ['accept', ...steps]) {
      const res = await post(t, `/api/packages/${id}/${s}`, driver.headers);
      assert.equal(res.statusCode, 200, res.body);
    }
    return { id, driver, created: created.json() };
  };

  const failedPackage = async (steps: ('pickup' | 'start')[] = ['pickup', 'start'], extra = {}) => {
    const p = await packageAt(steps, extra);
    const res = await post(t, `/api/packages/${p.id}/fail`, p.driver.headers, { reasonCode: 'NO_ANSWER' });
    assert.equal(res.statusCode, 200, res.body);
    return p;
  };

  test('a driver fails a delivery with a reason code and text: shown on the package, its history, in one event', async () => {
    const p = await packageAt(['pickup', 'start']);
    const res = await post(t, `/api/packages/${p.id}/fail`, p.driver.headers, {
      reasonCode: 'ADDRESS_NOT_FOUND',
      reason: 'No such house number',
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'FAILED');
    assert.equal(body.reasonCode, 'ADDRESS_NOT_FOUND');
    assert.deepEqual(
      { ...body.statusHistory.at(-1), at: undefined },
      { status: 'FAILED', at: undefined, reason: 'No such house number', reasonCode: 'ADDRESS_NOT_FOUND' },
    );
    // The poll (JSON built by PostgreSQL) says the same.
    const read = (await get(t, `/api/packages/${p.id}`, business.headers)).json();
    assert.equal(read.reasonCode, 'ADDRESS_NOT_FOUND');
    assert.deepEqual(read.statusHistory, body.statusHistory);
    assert.equal(read.previousAttemptId, null);
    assert.equal(read.followUpId, null);
    const events = await t.db
      .selectFrom('webhook_deliveries')
      .select(['event', 'payload'])
      .where('delivery_id', '=', p.id)
      .where('event', '=', 'delivery.failed')
      .execute();
    // Exactly one, with section 11's four fields (the reason stays on the package: the body is fixed).
    assert.equal(events.length, 1);
    const payload = typeof events[0]!.payload === 'string' ? JSON.parse(events[0]!.payload) : events[0]!.payload;
    assert.deepEqual(Object.keys(payload).sort(), ['delivery_id', 'event', 'status', 'timestamp']);
    assert.equal(payload.status, 'FAILED');
  });

  test('text alone is OTHER; a code alone has no reason; an admin fails with a code', async () => {
    const p1 = await packageAt(['pickup']);
    const r1 = await post(t, `/api/packages/${p1.id}/fail`, p1.driver.headers, { reason: 'Dog at the gate' });
    assert.equal(r1.statusCode, 200, r1.body);
    assert.equal(r1.json().reasonCode, 'OTHER');
    assert.equal(r1.json().statusHistory.at(-1).reason, 'Dog at the gate');

    const p2 = await packageAt([]);
    const r2 = await post(t, `/api/packages/${p2.id}/fail`, p2.driver.headers, { reasonCode: 'CLOSED' });
    assert.equal(r2.statusCode, 200, r2.body);
    assert.equal(r2.json().reasonCode, 'CLOSED');
    assert.equal(r2.json().statusHistory.at(-1).reason, undefined);
    assert.equal(r2.json().statusHistory.at(-1).reasonCode, 'CLOSED');

    const p3 = await packageAt(['pickup']);
    const r3 = await post(t, `/api/packages/${p3.id}/fail`, admin.headers, { reasonCode: 'UNSAFE' });
    assert.equal(r3.statusCode, 200, r3.body);
    assert.equal(r3.json().reasonCode, 'UNSAFE');
    assert.equal((await get(t, `/api/packages/${p3.id}`, business.headers)).json().reasonCode, 'UNSAFE');
  });

  test('an unknown reason code, or neither code nor text, is 400 and changes nothing', async () => {
    const p = await packageAt(['pickup']);
    const unknown = await post(t, `/api/packages/${p.id}/fail`, p.driver.headers, { reasonCode: 'LOST' });
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().error, 'Bad Request');
    assert.match(unknown.json().message, /reasonCode/);
    const neither = await post(t, `/api/packages/${p.id}/fail`, p.driver.headers, {});
    assert.equal(neither.statusCode, 400);
    assert.deepEqual(neither.json(), {
      statusCode: 400,
      error: 'Bad Request',
      message: 'body must have reason or reasonCode',
      code: 'VALIDATION_FAILED',
    });
    assert.equal((await get(t, `/api/packages/${p.id}`, business.headers)).json().status, 'PICKED_UP');
  });

  test('a re-attempt: a new PENDING package linked both ways, its own tracking link, the same points and payer', async () => {
    const p = await failedPackage();
    const res = await post(t, `/api/packages/${p.id}/reattempt`, business.headers, {});
    assert.equal(res.statusCode, 201, res.body);
    const again = res.json();
    assert.notEqual(again.id, p.id);
    assert.equal(again.status, 'PENDING');
    assert.equal(again.previousAttemptId, p.id);
    assert.equal(again.returnOf, null);
    assert.equal(again.reasonCode, null);
    assert.deepEqual(again.pickup, p.created.pickup);
    assert.deepEqual(again.dropoff, p.created.dropoff);
    assert.deepEqual(again.parcel, p.created.parcel);
    assert.equal(again.businessId, business.id);
    assert.equal(again.paymentMethod, p.created.paymentMethod);
    assert.deepEqual(again.price, { amount: 12_000, currency: p.created.price.currency });
    assert.match(again.trackingUrl, /\/t\//);
    assert.notEqual(again.trackingUrl, p.created.trackingUrl);
    // The new link follows the new package.
    const token = new URL(again.trackingUrl).pathname.split('/').at(-1)!;
    const tracked = await t.app.inject({ method: 'GET', url: `/api/tracking/${token}` });
    assert.equal(tracked.statusCode, 200, tracked.body);
    assert.equal(tracked.json().status, 'PENDING');

    const original = (await get(t, `/api/packages/${p.id}`, business.headers)).json();
    assert.equal(original.followUpId, again.id);
    assert.equal(original.status, 'FAILED');

    // The re-attempt's own events: a driver accepts it, delivery.assigned goes out for the new id.
    const taker = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    await setDriverPosition(t, taker.id, A.lat, A.lng);
    const accepted = await post(t, `/api/packages/${again.id}/accept`, taker.headers);
    assert.equal(accepted.statusCode, 200, accepted.body);
    const rows = await t.db
      .selectFrom('webhook_deliveries')
      .select('event')
      .where('delivery_id', '=', again.id)
      .execute();
    assert.deepEqual(
      rows.map((r) => r.event),
      ['delivery.assigned'],
    );

    // Once per failed package: neither a second re-attempt nor a return.
    const twice = await post(t, `/api/packages/${p.id}/reattempt`, business.headers, {});
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json().code, 'ALREADY_FOLLOWED_UP');
    const back = await post(t, `/api/packages/${p.id}/return`, business.headers);
    assert.equal(back.statusCode, 409);
    assert.equal(back.json().code, 'ALREADY_FOLLOWED_UP');
  });

  test('a re-attempt takes new windows and another pickup; a bad window is 400', async () => {
    const p = await failedPackage();
    const start = new Date(t.clock.nowMs() + 3_600_000);
    const window = { start: start.toISOString(), end: new Date(start.getTime() + 3_600_000).toISOString() };
    const bad = await post(t, `/api/packages/${p.id}/reattempt`, business.headers, {
      pickupWindow: { start: window.end, end: window.start },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    const depot = stop(-1.29, 36.82, { address: 'Depot, Industrial Area' });
    const res = await post(t, `/api/packages/${p.id}/reattempt`, business.headers, {
      pickup: depot,
      pickupWindow: window,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().pickup, depot);
    assert.equal(res.json().pickupWindow.start, window.start);
    const unknownField = await post(t, `/api/packages/${p.id}/reattempt`, business.headers, { driverId: admin.id });
    assert.equal(unknownField.statusCode, 400);
  });

  test('errors: not failed 409, another business 404, a driver 403, the customer named 403, a malformed id 400', async () => {
    const live = await packageAt(['pickup']);
    const notFailed = await post(t, `/api/packages/${live.id}/reattempt`, business.headers, {});
    assert.equal(notFailed.statusCode, 409);
    assert.deepEqual(notFailed.json(), {
      statusCode: 409,
      error: 'Conflict',
      message: 'Package is PICKED_UP: only a FAILED package can be re-attempted',
      code: 'PACKAGE_NOT_FAILED',
    });
    const notFailedReturn = await post(t, `/api/packages/${live.id}/return`, business.headers);
    assert.equal(notFailedReturn.statusCode, 409);
    assert.equal(notFailedReturn.json().code, 'PACKAGE_NOT_FAILED');

    const customer = await createUser(t, { role: 'CUSTOMER' });
    const p = await failedPackage(['pickup'], { customerId: customer.id });
    for (const path of ['reattempt', 'return']) {
      const foreign = await post(t, `/api/packages/${p.id}/${path}`, other.headers, {});
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), {
        statusCode: 404,
        message: 'Package not found',
        error: 'Not Found',
        code: 'PACKAGE_NOT_FOUND',
      });
      const byDriver = await post(t, `/api/packages/${p.id}/${path}`, p.driver.headers, {});
      assert.equal(byDriver.statusCode, 403);
      const byCustomer = await post(t, `/api/packages/${p.id}/${path}`, customer.headers, {});
      assert.equal(byCustomer.statusCode, 403);
      assert.equal(byCustomer.json().code, 'ACTION_NOT_ALLOWED');
      const missing = await post(t, `/api/packages/00000000-0000-4000-8000-000000000000/${path}`, business.headers);
      assert.equal(missing.statusCode, 404);
      const malformed = await post(t, `/api/packages/not-a-uuid/${path}`, business.headers);
      assert.equal(malformed.statusCode, 400);
    }
    // Nothing was created by the refused requests.
    assert.equal((await get(t, `/api/packages/${p.id}`, business.headers)).json().followUpId, null);
  });

  test('Idempotency-Key: the same key and body replays the 201 and creates nothing; another body is 422', async () => {
    const p = await failedPackage();
    const headers = { ...business.headers, 'idempotency-key': `again-${p.id}` };
    const first = await post(t, `/api/packages/${p.id}/reattempt`, headers, {});
    assert.equal(first.statusCode, 201, first.body);
    const replay = await post(t, `/api/packages/${p.id}/reattempt`, headers, {});
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), first.json());
    const different = await post(t, `/api/packages/${p.id}/reattempt`, headers, {
      pickup: stop(-1.29, 36.82),
    });
    assert.equal(different.statusCode, 422);
    const count = await t.db
      .selectFrom('packages')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('previous_attempt_id', '=', p.id)
      .executeTakeFirstOrThrow();
    assert.equal(count.n, 1);
  });

  test("a return: from the drop-off back to the pickup, priced by the tariff's returnRate, paid like the original; no return of a return", async () => {
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/tariffs/${business.countryId}/BIKE`,
      headers: admin.headers,
      payload: { ...TARIFF, returnRate: 5_000 },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().returnRate, 5_000);
    const tooHigh = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/tariffs/${business.countryId}/BIKE`,
      headers: admin.headers,
      payload: { ...TARIFF, returnRate: 20_001 },
    });
    assert.equal(tooHigh.statusCode, 400);
    try {
      const p = await failedPackage(['pickup', 'start'], { paymentMethod: 'CASH' });
      // An admin may return it too; the return is the business's, paid as the original was.
      const res = await post(t, `/api/packages/${p.id}/return`, admin.headers);
      assert.equal(res.statusCode, 201, res.body);
      const back = res.json();
      assert.equal(back.returnOf, p.id);
      assert.equal(back.previousAttemptId, null);
      assert.equal(back.businessId, business.id);
      assert.equal(back.paymentMethod, 'CASH');
      assert.deepEqual(back.pickup, p.created.dropoff);
      assert.deepEqual(back.dropoff, p.created.pickup);
      // 10,000 trip × 50 % + the whole 2,000 booking fee.
      assert.equal(back.price.amount, 7_000);
      assert.notEqual(back.trackingUrl, p.created.trackingUrl);
      assert.equal((await get(t, `/api/packages/${back.id}`, business.headers)).json().returnOf, p.id);

      // The return fails too: it may be re-attempted, not returned again.
      const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
      await setDriverPosition(t, driver.id, B.lat, B.lng);
      assert.equal((await post(t, `/api/packages/${back.id}/accept`, driver.headers)).statusCode, 200);
      const failed = await post(t, `/api/packages/${back.id}/fail`, driver.headers, { reasonCode: 'CLOSED' });
      assert.equal(failed.statusCode, 200, failed.body);
      const again = await post(t, `/api/packages/${back.id}/return`, business.headers);
      assert.equal(again.statusCode, 409);
      assert.deepEqual(again.json(), {
        statusCode: 409,
        error: 'Conflict',
        message: 'This package is a return already: it cannot be returned again',
        code: 'RETURN_OF_RETURN',
      });
      const retry = await post(t, `/api/packages/${back.id}/reattempt`, business.headers, {});
      assert.equal(retry.statusCode, 201, retry.body);
      assert.equal(retry.json().previousAttemptId, back.id);
    } finally {
      await t.app.inject({
        method: 'PUT',
        url: `/api/admin/tariffs/${business.countryId}/BIKE`,
        headers: admin.headers,
        payload: { ...TARIFF, returnRate: 10_000 },
      });
    }
  });

  test('a delivered return books its price like any package: the payer charged, the ledger balanced', async () => {
    const p = await failedPackage();
    const res = await post(t, `/api/packages/${p.id}/return`, business.headers);
    assert.equal(res.statusCode, 201, res.body);
    const back = res.json();
    assert.equal(back.price.amount, 12_000);
    assert.equal(back.paymentMethod, 'ACCOUNT');
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    await setDriverPosition(t, driver.id, B.lat, B.lng);
    for (const s of ['accept', 'pickup', 'start', 'deliver']) {
      const r = await post(t, `/api/packages/${back.id}/${s}`, driver.headers, s === 'deliver' ? {} : undefined);
      assert.equal(r.statusCode, 200, r.body);
    }
    const sum = await sql<{ n: number }>`select coalesce(sum(amount), 0)::int as n from ledger_entries`.execute(t.db);
    assert.equal(sum.rows[0]!.n, 0);
    const driverAccount = await t.db
      .selectFrom('ledger_accounts')
      .select('balance')
      .where('party_id', '=', driver.id)
      .executeTakeFirstOrThrow();
    // 12,000 less the 2,000 booking fee, less 15 % commission: 8,500 earned.
    assert.equal(Number(driverAccount.balance), 8_500);
    const charged = await sql<{ n: number }>`
      select coalesce(sum(e.amount), 0)::int as n from ledger_entries e
      join ledger_accounts a on a.id = e.account_id
      join ledger_transactions tx on tx.id = e.transaction_id
      where a.party_id = ${business.id} and tx.source_key like ${`%${back.id}%`}`.execute(t.db);
    assert.equal(charged.rows[0]!.n, -12_000);
  });
});

describe('failed deliveries: offered first to the driver holding the parcel', () => {
  let t: TestApp;
  let business: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'offer' } });
    business = await createUser(t, { role: 'BUSINESS' });
  });
  after(() => t.close());

  /** A package failed by `holder` (after `steps`), with `near` online at the pickup and `holder` 3 km away. */
  const scene = async (steps: string[]) => {
    const holder = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    await setDriverPosition(t, holder.id, A.lat, A.lng);
    const created = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    await t.services.dispatch.idle();
    for (const s of ['accept', ...steps]) {
      const r = await post(t, `/api/packages/${id}/${s}`, holder.headers);
      assert.equal(r.statusCode, 200, r.body);
    }
    const failed = await post(t, `/api/packages/${id}/fail`, holder.headers, { reasonCode: 'REFUSED' });
    assert.equal(failed.statusCode, 200, failed.body);
    // The holder is at the drop-off now, farther from the pickup than a driver waiting there.
    await setDriverPosition(t, holder.id, A.lat + 0.03, A.lng);
    const near = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    await setDriverPosition(t, near.id, A.lat, A.lng);
    return { id, holder, near };
  };

  const offersOf = async (user: TestUser) =>
    (await get(t, '/api/drivers/me/offers', user.headers)).json().offers as { jobId: string }[];

  test('failed after pickup: the re-attempt is offered to that driver first, though another is nearer', async () => {
    const { id, holder, near } = await scene(['pickup']);
    const res = await post(t, `/api/packages/${id}/reattempt`, business.headers, {});
    assert.equal(res.statusCode, 201, res.body);
    await t.services.dispatch.idle();
    assert.deepEqual(
      (await offersOf(holder)).map((o) => o.jobId),
      [res.json().id],
    );
    assert.deepEqual(await offersOf(near), []);
    // Declined: the next offer goes to the nearest driver, as for any package.
    const [offer] = (await get(t, '/api/drivers/me/offers', holder.headers)).json().offers;
    const declined = await post(t, `/api/offers/${offer.id}/decline`, holder.headers);
    assert.equal(declined.statusCode, 204, declined.body);
    await t.services.dispatch.idle();
    assert.deepEqual(
      (await offersOf(near)).map((o) => o.jobId),
      [res.json().id],
    );
    await post(
      t,
      `/api/offers/${(await get(t, '/api/drivers/me/offers', near.headers)).json().offers[0].id}/decline`,
      near.headers,
    );
    await t.services.dispatch.idle();
  });

  test('a return of a parcel the driver holds goes to that driver first too', async () => {
    const { id, holder, near } = await scene(['pickup', 'start']);
    const res = await post(t, `/api/packages/${id}/return`, business.headers);
    assert.equal(res.statusCode, 201, res.body);
    await t.services.dispatch.idle();
    assert.deepEqual(
      (await offersOf(holder)).map((o) => o.jobId),
      [res.json().id],
    );
    assert.deepEqual(await offersOf(near), []);
    const [offer] = (await get(t, '/api/drivers/me/offers', holder.headers)).json().offers;
    assert.equal((await post(t, `/api/offers/${offer.id}/decline`, holder.headers)).statusCode, 204);
    await t.services.dispatch.idle();
    const [nearOffer] = (await get(t, '/api/drivers/me/offers', near.headers)).json().offers;
    if (nearOffer) await post(t, `/api/offers/${nearOffer.id}/decline`, near.headers);
    await t.services.dispatch.idle();
  });

  test('failed before pickup (the parcel never left): the re-attempt goes to the nearest driver', async () => {
    const { id, holder } = await scene([]);
    const res = await post(t, `/api/packages/${id}/reattempt`, business.headers, {});
    assert.equal(res.statusCode, 201, res.body);
    await t.services.dispatch.idle();
    assert.deepEqual(await offersOf(holder), []);
    // Offered to a driver waiting at the pickup (this test's or an earlier one's: all stand there).
    const offers = await t.db
      .selectFrom('dispatch_offers')
      .select('driver_id')
      .where('job_id', '=', res.json().id)
      .execute();
    assert.equal(offers.length, 1);
    assert.notEqual(offers[0]!.driver_id, holder.id);
  });
});
