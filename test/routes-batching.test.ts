// Batching in dispatch (contract section 24): a package offered to a driver on a route when its stops
// add at most BATCH_MAX_DETOUR; the offer's `batch`; the admin log's detour against the best free driver.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, setDriverPosition, stop } from './packages-helpers.js';

describe('routes: batching in dispatch', () => {
  let t: TestApp;
  let business: TestUser;
  let admin: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'offer' } });
    business = await createUser(t, { role: 'BUSINESS' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  async function driverAt(lat: number, lng: number, max = 1) {
    const d = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    if (max !== 1)
      await t.app.inject({
        method: 'PATCH',
        url: `/api/admin/drivers/${d.id}`,
        headers: admin.headers,
        payload: { maxActiveJobs: max },
      });
    await setDriverPosition(t, d.id, lat, lng);
    return d;
  }

  async function createPackage(
    pickup: [number, number],
    dropoff: [number, number],
    extra: Record<string, unknown> = {},
  ) {
    const res = await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(...pickup), dropoff: stop(...dropoff), ...extra }),
    );
    assert.equal(res.statusCode, 201, res.body);
    await t.services.dispatch.idle();
    return res.json() as { id: string; trackingUrl: string };
  }

  const offersOf = async (d: TestUser) => (await get(t, '/api/drivers/me/offers', d.headers)).json().offers;

  test('a package near a running route is offered to its driver with batch; a far one is not', async () => {
    const shop: [number, number] = [-1.2864, 36.8172];
    const a = await driverAt(...shop, 4);
    const first = await createPackage(shop, [-1.3, 36.8]);
    const [offer1] = await offersOf(a);
    assert.equal(offer1.jobId, first.id);
    assert.equal(offer1.batch, undefined, 'a free driver: no batch');
    assert.equal((await post(t, `/api/offers/${offer1.id}/accept`, a.headers)).statusCode, 200);

    // A free driver about 3 km away: its ETA is longer than the detour of a parcel from the same shop.
    const b = await driverAt(-1.26, 36.8172);
    const second = await createPackage(shop, [-1.301, 36.801]);
    const [offer2] = await offersOf(a);
    assert.equal(offer2.jobId, second.id);
    assert.ok(offer2.batch.addedSeconds > 0 && offer2.batch.addedSeconds <= 480, JSON.stringify(offer2.batch));
    assert.ok(offer2.batch.stopsBefore >= 2 && offer2.batch.stopsBefore <= 3);
    assert.deepEqual(await offersOf(b), []);
    const log = (await get(t, `/api/admin/dispatch/${second.id}`, admin.headers)).json();
    assert.equal(log.offers[0].driverId, a.id);
    assert.equal(log.offers[0].why.batch.addedSeconds, offer2.batch.addedSeconds);
    assert.ok(log.offers[0].why.batch.bestFreeEtaSeconds > offer2.batch.addedSeconds);
    assert.equal((await post(t, `/api/offers/${offer2.id}/accept`, a.headers)).statusCode, 200);

    const route = (await get(t, '/api/drivers/me/route', a.headers)).json();
    assert.equal(route.stops.length, 4);

    // The recipient's tracking: the route's ETA for its drop-off, and the stops before it.
    for (const job of [first, second]) {
      const view = (await t.app.inject({ url: `/api/tracking/${job.trackingUrl.split('/t/')[1]}` })).json();
      const k = route.stops.findIndex(
        (s: { jobId: string; kind: string }) => s.jobId === job.id && s.kind === 'DROPOFF',
      );
      assert.equal(view.stopsBefore, k);
      const fromRoute = (Date.parse(route.stops[k].eta) - t.clock.nowMs()) / 1000;
      assert.ok(Math.abs(view.etaSeconds - fromRoute) <= 1, `${view.etaSeconds} vs ${fromRoute}`);
    }

    // A parcel to the other side of town adds far more than 8 minutes: B gets it, A is skipped.
    const far = await createPackage(shop, [-1.45, 36.95]);
    assert.deepEqual(await offersOf(a), []);
    const [offer3] = await offersOf(b);
    assert.equal(offer3.jobId, far.id);
    const farLog = (await get(t, `/api/admin/dispatch/${far.id}`, admin.headers)).json();
    assert.deepEqual(
      farLog.offers[0].why.skipped.find((s: { driverId: string }) => s.driverId === a.id),
      { driverId: a.id, reason: 'BATCH_DETOUR' },
    );
  });

  test('a route whose driver is full or whose capacity would be passed is not offered more', async () => {
    const shop: [number, number] = [-1.2, 36.9];
    const a = await driverAt(...shop, 2);
    for (let i = 0; i < 2; i++) {
      await createPackage(shop, [-1.21, 36.91]);
      const [offer] = await offersOf(a);
      assert.equal((await post(t, `/api/offers/${offer.id}/accept`, a.headers)).statusCode, 200);
    }
    const third = await createPackage(shop, [-1.21, 36.91]);
    assert.deepEqual(await offersOf(a), []);
    const log = (await get(t, `/api/admin/dispatch/${third.id}`, admin.headers)).json();
    assert.equal(log.dispatch.state, 'NO_DRIVERS');

    // Capacity: a BIKE carries 20 kg; 15 kg more on a 1.5 kg route passes with room, 19 kg does not.
    const c = await driverAt(-1.1, 36.95, 4);
    await createPackage([-1.1, 36.95], [-1.11, 36.96]);
    const [first] = await offersOf(c);
    assert.equal((await post(t, `/api/offers/${first.id}/accept`, c.headers)).statusCode, 200);
    const heavy = await createPackage([-1.1, 36.95], [-1.11, 36.96], {
      parcel: { description: 'Tiles', weightKg: 19 },
    });
    assert.deepEqual(await offersOf(c), []);
    const heavyLog = (await get(t, `/api/admin/dispatch/${heavy.id}`, admin.headers)).json();
    assert.equal(heavyLog.dispatch.state, 'NO_DRIVERS');
    await createPackage([-1.1, 36.95], [-1.11, 36.96], { parcel: { description: 'Box', weightKg: 15 } });
    const [fits] = await offersOf(c);
    assert.ok(fits.batch, 'offered on the route');
  });
});
