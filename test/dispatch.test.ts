// Dispatch (contract section 13) through HTTP and the drivers' WebSockets.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody, stop } from './packages-helpers.js';
import { onlineDriver, openSocket, wsBase } from './dispatch-helpers.js';

describe('dispatch: offers to the best driver', () => {
  let t: TestApp;
  let base: string;
  let business: TestUser;
  let customer: TestUser;
  let admin: TestUser;
  // Each test works in its own area, a degree (111 km) from the others: beyond DISPATCH_MAX_RADIUS
  // (and all in Kenya, where the jobs are priced).
  let area = 0;
  const nextArea = () => {
    area += 1;
    return { lat: -4 + area, lng: 38 };
  };

  before(async () => {
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = wsBase(t);
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  const createPackage = async (lat: number, lng: number) => {
    const res = await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(lat, lng), dropoff: stop(lat + 0.02, lng + 0.01) }),
    );
    assert.equal(res.statusCode, 201);
    return res.json();
  };
  const pkg = async (id: string) => (await get(t, `/api/packages/${id}`, admin.headers)).json();
  const openOffers = async () =>
    (
      await sql<{
        job_id: string;
        driver_id: string;
      }>`select job_id, driver_id from dispatch_offers where state = 'OPEN'`.execute(t.db)
    ).rows;

  test('the nearest driver gets the offer; a decline moves it to the next; accepting assigns the package', async () => {
    const at = nextArea();
    const near = await onlineDriver(t, base, at.lat + 0.004, at.lng);
    const far = await onlineDriver(t, base, at.lat + 0.02, at.lng);
    const created = await createPackage(at.lat, at.lng);
    assert.deepEqual(created.dispatch, { state: 'SEARCHING', attempts: 0 });

    const first = (await near.socket.next(['offer'])).offer;
    assert.equal(first.jobType, 'PACKAGE');
    assert.equal(first.jobId, created.id);
    assert.deepEqual(first.pickup, { location: { lat: at.lat, lng: at.lng }, address: 'Moi Avenue 1, Nairobi' });
    assert.deepEqual(first.dropoff, { location: created.dropoff.location });
    assert.ok(Math.abs(first.distanceMeters - 445) < 5, `distance ${first.distanceMeters}`);
    assert.equal(first.etaSeconds, Math.round(first.distanceMeters / (25 / 3.6)));
    assert.equal(Date.parse(first.expiresAt), t.clock.nowMs() + 20_000);
    assert.ok(!JSON.stringify(first).includes('+2547'), 'no contact details in an offer');
    // What the job pays: the package's own price.
    assert.equal(first.price.currency, 'KES');
    assert.ok(first.price.amount > 0);
    assert.deepEqual(first.price, created.price);
    assert.deepEqual((await get(t, '/api/drivers/me/offers', near.user.headers)).json(), { offers: [first] });
    assert.deepEqual((await pkg(created.id)).dispatch, { state: 'OFFERED', attempts: 1 });

    // Another driver's offer is a 404, a malformed id a 400.
    const foreign = await post(t, `/api/offers/${first.id}/accept`, far.user.headers);
    assert.deepEqual(foreign.json(), {
      statusCode: 404,
      message: 'Offer not found',
      error: 'Not Found',
      code: 'OFFER_NOT_FOUND',
    });
    assert.equal((await post(t, '/api/offers/not-a-uuid/decline', near.user.headers)).statusCode, 400);
    assert.equal((await post(t, `/api/offers/${created.id}/decline`, near.user.headers)).statusCode, 404);

    assert.equal((await post(t, `/api/offers/${first.id}/decline`, near.user.headers)).statusCode, 204);
    const again = await post(t, `/api/offers/${first.id}/accept`, near.user.headers);
    assert.deepEqual(again.json(), {
      statusCode: 409,
      message: 'Offer is DECLINED',
      error: 'Conflict',
      code: 'OFFER_DECLINED',
    });
    const second = (await far.socket.next(['offer'])).offer;
    assert.equal(second.jobId, created.id);
    assert.ok(!near.socket.seen.some((m) => m.type === 'job.nearby'), 'offer mode sends no job.nearby push');

    const accepted = await post(t, `/api/offers/${second.id}/accept`, far.user.headers);
    assert.equal(accepted.statusCode, 200);
    assert.equal(accepted.json().status, 'ASSIGNED');
    assert.equal(accepted.json().driver.id, far.user.id);
    assert.deepEqual(accepted.json().dispatch, { state: 'DONE', attempts: 2 });
    assert.deepEqual(await pkg(created.id), accepted.json());
    assert.deepEqual((await get(t, '/api/drivers/me/offers', far.user.headers)).json(), { offers: [] });

    const log = (await get(t, `/api/admin/dispatch/${created.id}`, admin.headers)).json();
    assert.equal(log.dispatch.state, 'DONE');
    assert.deepEqual(
      log.offers.map((o: any) => [o.driverId, o.outcome]),
      [
        [near.user.id, 'DECLINED'],
        [far.user.id, 'ACCEPTED'],
      ],
    );
    assert.deepEqual(log.offers[0].why.skipped, []);
    assert.equal(log.offers[0].why.candidates, 2);
    assert.equal(log.offers[0].why.radiusMeters, 5000);
    assert.deepEqual(log.offers[1].why.skipped, [{ driverId: near.user.id, reason: 'DECLINED' }]);
    assert.ok(log.offers[1].why.etaSeconds > log.offers[0].why.etaSeconds);
    assert.equal((await get(t, `/api/admin/dispatch/${created.id}`, business.headers)).statusCode, 403);
    assert.equal((await get(t, `/api/admin/dispatch/${near.user.id}`, admin.headers)).json().code, 'JOB_NOT_FOUND');
    near.socket.close();
    far.socket.close();
  });

  test('an unanswered offer lapses after DISPATCH_OFFER_TTL, even when the sweep comes late, and goes to the next driver', async () => {
    const at = nextArea();
    const near = await onlineDriver(t, base, at.lat + 0.001, at.lng);
    const far = await onlineDriver(t, base, at.lat + 0.01, at.lng);
    const created = await createPackage(at.lat, at.lng);
    const first = (await near.socket.next(['offer'])).offer;
    t.clock.advance(20_001);
    const late = await post(t, `/api/offers/${first.id}/accept`, near.user.headers);
    assert.deepEqual(late.json(), {
      statusCode: 409,
      message: 'Offer is LAPSED',
      error: 'Conflict',
      code: 'OFFER_LAPSED',
    });
    await t.services.dispatch.sweep();
    await t.services.dispatch.idle();
    assert.deepEqual(await near.socket.next(['offer.withdrawn']), {
      type: 'offer.withdrawn',
      offerId: first.id,
      jobType: 'PACKAGE',
      jobId: created.id,
      state: 'LAPSED',
    });
    const second = (await far.socket.next(['offer'])).offer;
    assert.equal(second.jobId, created.id);
    assert.equal((await post(t, `/api/offers/${first.id}/decline`, near.user.headers)).json().code, 'OFFER_LAPSED');
    assert.equal((await post(t, `/api/offers/${second.id}/accept`, far.user.headers)).statusCode, 200);
    near.socket.close();
    far.socket.close();
  });

  test('a direct accept still works and withdraws the open offer', async () => {
    const at = nextArea();
    const offered = await onlineDriver(t, base, at.lat + 0.001, at.lng);
    const other = await onlineDriver(t, base, at.lat + 0.002, at.lng);
    const created = await createPackage(at.lat, at.lng);
    const offer = (await offered.socket.next(['offer'])).offer;
    assert.equal((await post(t, `/api/packages/${created.id}/accept`, other.user.headers)).statusCode, 200);
    assert.deepEqual(await offered.socket.next(['offer.withdrawn']), {
      type: 'offer.withdrawn',
      offerId: offer.id,
      jobType: 'PACKAGE',
      jobId: created.id,
      state: 'WITHDRAWN',
    });
    const refused = await post(t, `/api/offers/${offer.id}/accept`, offered.user.headers);
    assert.deepEqual(refused.json(), {
      statusCode: 409,
      message: 'Offer is WITHDRAWN',
      error: 'Conflict',
      code: 'OFFER_WITHDRAWN',
    });
    assert.equal((await openOffers()).filter((o) => o.job_id === created.id).length, 0);
    offered.socket.close();
    other.socket.close();
  });

  test('one open offer per driver: a second job waits (NO_DRIVERS) and is retried after DISPATCH_RETRY_INTERVAL', async () => {
    const at = nextArea();
    const only = await onlineDriver(t, base, at.lat, at.lng);
    const a = await createPackage(at.lat + 0.001, at.lng);
    const offerA = (await only.socket.next(['offer'])).offer;
    const b = await createPackage(at.lat + 0.002, at.lng);
    await t.services.dispatch.idle();
    assert.deepEqual((await pkg(b.id)).dispatch, { state: 'NO_DRIVERS', attempts: 0 });
    assert.equal((await openOffers()).filter((o) => o.driver_id === only.user.id).length, 1);
    const log = (await get(t, `/api/admin/dispatch/${b.id}`, admin.headers)).json();
    assert.equal(log.dispatch.nextAttemptAt, new Date(t.clock.nowMs() + 30_000).toISOString());

    assert.equal((await post(t, `/api/offers/${offerA.id}/decline`, only.user.headers)).statusCode, 204);
    await t.services.dispatch.idle();
    // Declined: never offered a again; b waits for its retry.
    assert.deepEqual((await pkg(a.id)).dispatch, { state: 'NO_DRIVERS', attempts: 1 });
    await t.services.dispatch.sweep();
    assert.equal((await pkg(b.id)).dispatch.state, 'NO_DRIVERS');
    t.clock.advance(30_000);
    await t.services.dispatch.sweep();
    const offerB = (await only.socket.next(['offer'])).offer;
    assert.equal(offerB.jobId, b.id);
    assert.deepEqual((await pkg(b.id)).dispatch, { state: 'OFFERED', attempts: 1 });
    await post(t, `/api/offers/${offerB.id}/decline`, only.user.headers);
    only.socket.close();
  });

  test('NO_DRIVERS, then a driver comes online nearby: offered at once, not at the next retry', async () => {
    const at = nextArea();
    const created = await createPackage(at.lat, at.lng);
    await t.services.dispatch.idle();
    assert.equal((await pkg(created.id)).dispatch.state, 'NO_DRIVERS');
    const late = await createUser(t, { role: 'DRIVER', driver: { availability: 'OFFLINE', vehicleType: 'BIKE' } });
    const socket = await openSocket(base, late);
    assert.equal(
      (await post(t, '/api/drivers/me/location', late.headers, { lat: at.lat + 0.003, lng: at.lng })).statusCode < 300,
      true,
    );
    assert.equal((await post(t, '/api/drivers/me/availability', late.headers, { status: 'ONLINE' })).statusCode, 200);
    const offer = (await socket.next(['offer'])).offer;
    assert.equal(offer.jobId, created.id);
    assert.equal((await post(t, `/api/offers/${offer.id}/accept`, late.headers)).json().status, 'ASSIGNED');
    socket.close();
  });

  test('release: the driver hands the package back, it is offered to another driver and never again to that one', async () => {
    // An endpoint of the business, so the outbox rows of each event can be counted.
    await sql`insert into webhook_endpoints (id, business_id, url, events, enabled, secret, created_at, updated_at)
      values (${randomUUID()}, ${business.id}, 'https://example.com/hook', array['delivery.assigned','delivery.picked_up'], true, 'whsec_test', now(), now())`.execute(
      t.db,
    );
    const at = nextArea();
    const first = await onlineDriver(t, base, at.lat + 0.001, at.lng);
    const second = await onlineDriver(t, base, at.lat + 0.005, at.lng);
    const created = await createPackage(at.lat, at.lng);
    const offer = (await first.socket.next(['offer'])).offer;
    assert.equal((await post(t, `/api/offers/${offer.id}/accept`, first.user.headers)).statusCode, 200);
    assert.equal((await post(t, `/api/packages/${created.id}/release`, first.user.headers, {})).statusCode, 400);
    assert.equal(
      (await post(t, `/api/packages/${created.id}/release`, second.user.headers, { reason: 'x' })).statusCode,
      404,
    );
    const released = await post(t, `/api/packages/${created.id}/release`, first.user.headers, { reason: 'Flat tyre' });
    assert.equal(released.statusCode, 200);
    assert.equal(released.json().status, 'PENDING');
    assert.equal(released.json().driver, null);
    assert.deepEqual(released.json().statusHistory.at(-1), {
      status: 'PENDING',
      at: released.json().updatedAt,
      reason: 'Flat tyre',
    });
    const next = (await second.socket.next(['offer'])).offer;
    assert.equal(next.jobId, created.id);
    assert.equal(
      (await post(t, `/api/offers/${next.id}/accept`, second.user.headers)).json().driver.id,
      second.user.id,
    );
    // Released after pickup: refused with the status.
    await post(t, `/api/packages/${created.id}/pickup`, second.user.headers);
    const tooLate = await post(t, `/api/packages/${created.id}/release`, second.user.headers, { reason: 'no' });
    assert.deepEqual(tooLate.json(), {
      statusCode: 409,
      message: 'Package is PICKED_UP',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    // No event for the release; delivery.assigned again, naming the new driver.
    const events = await sql<{
      event: string;
      payload: string;
    }>`select event, payload from webhook_deliveries where delivery_id = ${created.id} order by seq`.execute(t.db);
    assert.deepEqual(
      events.rows.map((r) => [r.event, JSON.parse(r.payload).status]),
      [
        ['delivery.assigned', 'ASSIGNED'],
        ['delivery.assigned', 'ASSIGNED'],
        ['delivery.picked_up', 'PICKED_UP'],
      ],
    );
    const log = (await get(t, `/api/admin/dispatch/${created.id}`, admin.headers)).json();
    assert.deepEqual(
      log.releases.map((r: any) => [r.driverId, r.reason]),
      [[first.user.id, 'Flat tyre']],
    );
    assert.equal(log.offers.filter((o: any) => o.driverId === first.user.id).length, 1);
    first.socket.close();
    second.socket.close();
  });

  test('rides too: offered, accepted through the offer, released by an admin, offered to another driver', async () => {
    const at = nextArea();
    const a = await onlineDriver(t, base, at.lat + 0.001, at.lng, 'CAR');
    const b = await onlineDriver(t, base, at.lat + 0.003, at.lng, 'CAR');
    const res = await post(
      t,
      '/api/rides',
      customer.headers,
      rideBody(customer.countryId, {
        pickupLocation: { lat: at.lat, lng: at.lng },
        destinationLocation: { lat: at.lat + 0.02, lng: at.lng },
      }),
    );
    const ride = res.json();
    assert.deepEqual(ride.dispatch, { state: 'SEARCHING', attempts: 0 });
    const offer = (await a.socket.next(['offer'])).offer;
    assert.equal(offer.jobType, 'RIDE');
    assert.deepEqual(offer.pickup, { location: { lat: at.lat, lng: at.lng } });
    assert.deepEqual(offer.price, res.json().price);
    const accepted = await post(t, `/api/offers/${offer.id}/accept`, a.user.headers);
    assert.equal(accepted.json().status, 'ACCEPTED');
    assert.deepEqual(accepted.json().dispatch, { state: 'DONE', attempts: 1 });
    assert.equal(
      (await post(t, `/api/admin/jobs/RIDE/${ride.id}/release`, admin.headers, { reason: 'Driver unreachable' })).json()
        .status,
      'REQUESTED',
    );
    assert.equal(
      (await post(t, `/api/admin/jobs/TRUCK/${ride.id}/release`, admin.headers, { reason: 'x' })).statusCode,
      400,
    );
    assert.deepEqual(await a.socket.next(['job.updated']), {
      type: 'job.updated',
      jobType: 'RIDE',
      jobId: ride.id,
      status: 'REQUESTED',
    });
    const next = (await b.socket.next(['offer'])).offer;
    assert.equal(next.jobId, ride.id);
    assert.equal((await post(t, `/api/offers/${next.id}/accept`, b.user.headers)).json().driver.id, b.user.id);
    // The first driver is free again: it may take other work.
    assert.equal(t.services.live.index.get(a.user.id)?.busy, false);
    a.socket.close();
    b.socket.close();
  });

  test('offers live in the database: another instance (or this one restarted) notices the lapse and moves the job on', async () => {
    const at = nextArea();
    const first = await onlineDriver(t, base, at.lat + 0.001, at.lng);
    const second = await onlineDriver(t, base, at.lat + 0.002, at.lng);
    const created = await createPackage(at.lat, at.lng);
    const offer = (await first.socket.next(['offer'])).offer;
    // A fresh instance on the same database, which never saw the offer being made.
    const fresh = await buildTestApp({ database: t.database, clock: t.clock });
    try {
      await fresh.services.live.reload(first.user.id);
      await fresh.services.live.reload(second.user.id);
      t.clock.advance(20_000);
      assert.equal((await fresh.services.dispatch.sweep()).lapsed, 1);
      const log = (await get(t, `/api/admin/dispatch/${created.id}`, admin.headers)).json();
      assert.deepEqual(
        log.offers.map((o: any) => [o.id === offer.id, o.driverId, o.outcome]),
        [
          [true, first.user.id, 'LAPSED'],
          [false, second.user.id, 'OPEN'],
        ],
      );
    } finally {
      await fresh.close();
    }
    first.socket.close();
    second.socket.close();
  });

  test('metrics count offers by outcome and time creation to assignment; the OpenAPI document describes the routes', async () => {
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const outcome of ['SENT', 'ACCEPTED', 'DECLINED', 'LAPSED', 'WITHDRAWN']) {
      assert.match(metrics, new RegExp(`^dispatch_offers_total\\{outcome="${outcome}"\\} [1-9]\\d*$`, 'm'));
    }
    assert.match(metrics, /^dispatch_assignment_seconds_count [1-9]\d*$/m);
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const accept = doc.paths['/api/offers/{id}/accept'].post;
    assert.ok(accept.summary);
    assert.deepEqual(Object.keys(accept.responses).sort(), [
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '422',
      '429',
      '500',
    ]);
    for (const path of [
      '/api/offers/{id}/decline',
      '/api/drivers/me/offers',
      '/api/admin/dispatch/{jobId}',
      '/api/packages/{id}/release',
      '/api/rides/{id}/release',
      '/api/admin/jobs/{jobType}/{id}/release',
    ]) {
      assert.ok(doc.paths[path], path);
    }
  });
});
