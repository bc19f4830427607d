// Live tracking (contract section 14) through HTTP on a listening server, with a real SSE client.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { TrackingTokens } from '../src/modules/tracking/tracking-tokens.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { SseClient } from './helpers/sse-client.js';
import { get, packageBody, post, rideBody } from './packages-helpers.js';

const INTERVAL_MS = 400;

describe('live tracking', () => {
  let t: TestApp;
  let base: string;
  let business: TestUser;
  let other: TestUser;

  before(async () => {
    t = await buildTestApp({
      env: {
        DISPATCH_MODE: 'off',
        TRACKING_INTERVAL: `${INTERVAL_MS}ms`,
        PUBLIC_BASE_URL: 'https://track.example.com/',
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    business = await createUser(t, { role: 'BUSINESS' });
    other = await createUser(t, { role: 'BUSINESS' });
  });
  after(async () => t.close());

  const onlineDriver = () => createUser(t, { role: 'DRIVER', firstName: 'Kamau', driver: { availability: 'ONLINE' } });
  const tokenOf = (trackingUrl: string) => trackingUrl.split('/t/')[1]!;
  const createPackage = async (overrides: Record<string, unknown> = {}) => {
    const res = await post(t, '/api/packages', business.headers, packageBody(business.countryId, overrides));
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const report = async (driver: TestUser, lat: number, lng: number) => {
    t.clock.advance(10);
    const res = await post(t, '/api/drivers/me/location', driver.headers, { lat, lng });
    assert.equal(res.statusCode, 204, res.body);
  };

  test('the whole lifecycle over SSE: statuses with ids, positions at most every interval, ETA, the end after DELIVERED; the public view has nothing personal', async () => {
    const driver = await onlineDriver();
    const pkg = await createPackage({ requireDeliveryCode: true, notifyRecipient: true });
    assert.match(pkg.trackingUrl, /^https:\/\/track\.example\.com\/t\/[A-Za-z0-9_-]{43}$/);
    const token = tokenOf(pkg.trackingUrl);
    // Shown again on every read, the same link.
    assert.equal((await get(t, `/api/packages/${pkg.id}`, business.headers)).json().trackingUrl, pkg.trackingUrl);
    // Only its hash is stored.
    const stored = await t.db.selectFrom('packages').selectAll().where('id', '=', pkg.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(token));

    const viaToken = await SseClient.open(`${base}/api/tracking/${token}/stream`);
    const viaBearer = await SseClient.open(`${base}/api/packages/${pkg.id}/track?access_token=${business.token}`);
    assert.equal(viaToken.status, 200);
    assert.equal(viaBearer.status, 200);
    assert.match(viaBearer.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(viaBearer.headers.get('x-accel-buffering'), 'no');
    await viaBearer.until((c) => c.of('status').length === 1);
    assert.deepEqual(viaBearer.json('status')[0], {
      jobType: 'PACKAGE',
      jobId: pkg.id,
      status: 'PENDING',
      at: pkg.createdAt,
    });
    assert.ok(viaBearer.of('status')[0]!.id);

    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
    await viaToken.until((c) => c.json('status').some((s) => s.status === 'ASSIGNED'));

    // Ten positions within about one interval: at most two location events (the first, then the newest).
    const started = Date.now();
    for (let i = 0; i < 10; i += 1) await report(driver, -1.28 + i * 0.001, 36.81);
    await viaToken.until((c) => c.of('location').length >= 1);
    await new Promise((r) => setTimeout(r, INTERVAL_MS * 1.5));
    const elapsed = Date.now() - started;
    const locations = viaToken.json<{ location: { lat: number; lng: number }; at: string }>('location');
    assert.ok(
      locations.length >= 1 && locations.length <= Math.ceil(elapsed / INTERVAL_MS) + 1,
      `${locations.length} location events in ${elapsed} ms`,
    );
    // The newest position is the one that arrives last.
    assert.deepEqual(locations.at(-1)!.location, { lat: -1.28 + 9 * 0.001, lng: 36.81 });
    const etas = viaToken.json<{ etaSeconds: number; to: string }>('eta');
    assert.equal(etas.at(-1)!.to, 'PICKUP');
    assert.ok(Number.isInteger(etas.at(-1)!.etaSeconds));

    // The public view while a driver is on the job.
    const view = await t.app.inject({ url: `/api/tracking/${token}` });
    assert.equal(view.statusCode, 200);
    const body = view.json();
    assert.equal(body.status, 'ASSIGNED');
    assert.deepEqual(body.driver.location, { lat: -1.28 + 9 * 0.001, lng: 36.81 });
    assert.equal(body.driver.firstName, 'Kamau');
    assert.ok(Number.isInteger(body.etaSeconds));
    assert.deepEqual(Object.keys(body).sort(), [
      'driver',
      'dropoff',
      'dropoffWindow',
      'etaSeconds',
      'pickup',
      'pickupWindow',
      'scheduledAt',
      'status',
      'statusHistory',
      'timeZone',
      'updatedAt',
    ]);
    for (const secret of [
      '+254712345678',
      '+254722000111',
      'Wanjiru',
      'Otieno',
      'Moi Avenue',
      'Gate B',
      driver.id,
      business.id,
      driver.phone,
      pkg.id,
      pkg.deliveryCode,
    ]) {
      assert.ok(!view.body.includes(secret), `public view shows ${secret}`);
    }

    assert.equal((await post(t, `/api/packages/${pkg.id}/pickup`, driver.headers)).statusCode, 200);
    assert.equal((await post(t, `/api/packages/${pkg.id}/start`, driver.headers)).statusCode, 200);
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/deliver`, driver.headers, { deliveryCode: pkg.deliveryCode })).statusCode,
      200,
    );
    await Promise.all([viaToken.until((c) => c.ended), viaBearer.until((c) => c.ended)]);
    for (const c of [viaToken, viaBearer]) {
      assert.deepEqual(
        c.json('status').map((s) => s.status),
        ['PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT', 'DELIVERED'],
      );
      assert.equal(new Set(c.of('status').map((e) => e.id)).size, 5);
      assert.ok(c.ended);
    }

    // The drop-off contact got the link on creation and when the package left.
    const sms = t.logLines
      .map((l) => JSON.parse(l))
      .filter((l) => l.sms?.to === '+254722000111')
      .map((l) => l.sms.text as string);
    assert.equal(sms.length, 2);
    assert.ok(sms.every((text) => text.includes(pkg.trackingUrl)));
    // Neither the access token nor the tracking token is in any other log line.
    const others = t.logLines.filter((l) => !l.includes('"sms"')).join('\n');
    assert.ok(!others.includes(business.token));
    assert.ok(!others.includes(token));
  });

  test('Last-Event-ID: the missed status events are replayed; an id that cannot be replayed gets resync first', async () => {
    const driver = await onlineDriver();
    const pkg = await createPackage();
    const first = await SseClient.open(`${base}/api/packages/${pkg.id}/track`, business.headers);
    await first.until((c) => c.of('status').length === 1);
    first.close();
    const lastId = first.of('status')[0]!.id!;
    await post(t, `/api/packages/${pkg.id}/accept`, driver.headers);
    await post(t, `/api/packages/${pkg.id}/pickup`, driver.headers);

    const again = await SseClient.open(`${base}/api/packages/${pkg.id}/track`, {
      ...business.headers,
      'last-event-id': lastId,
    });
    await again.until((c) => c.of('status').length === 2);
    assert.deepEqual(
      again.json('status').map((s) => s.status),
      ['ASSIGNED', 'PICKED_UP'],
    );
    assert.equal(again.events[0]!.event, 'status');
    again.close();

    for (const stale of ['garbage', Buffer.from(`${randomId()}.1`).toString('base64url')]) {
      const resynced = await SseClient.open(`${base}/api/packages/${pkg.id}/track`, {
        ...business.headers,
        'last-event-id': stale,
      });
      await resynced.until((c) => c.events.length >= 1);
      assert.equal(resynced.events[0]!.event, 'resync');
      const state = JSON.parse(resynced.events[0]!.data);
      assert.equal(state.status, 'PICKED_UP');
      assert.deepEqual(
        state.statusHistory.map((h: { status: string }) => h.status),
        ['PENDING', 'ASSIGNED', 'PICKED_UP'],
      );
      assert.ok(resynced.events[0]!.id);
      resynced.close();
    }
    await post(t, `/api/packages/${pkg.id}/fail`, driver.headers, { reason: 'Road closed' });
  });

  test('revocation and expiry: a rotated link is 404 at once and its open stream ends; a link is 404 24 h after a final status', async () => {
    const pkg = await createPackage();
    const oldToken = tokenOf(pkg.trackingUrl);
    const stream = await SseClient.open(`${base}/api/tracking/${oldToken}/stream`);
    await stream.until((c) => c.of('status').length === 1);
    // Someone who can read the package but did not create it may not rotate it; a stranger gets 404.
    assert.equal((await post(t, `/api/packages/${pkg.id}/tracking/rotate`, other.headers)).statusCode, 404);
    const rotated = await post(t, `/api/packages/${pkg.id}/tracking/rotate`, business.headers);
    assert.equal(rotated.statusCode, 200);
    const newUrl = rotated.json().trackingUrl as string;
    assert.notEqual(newUrl, pkg.trackingUrl);
    await stream.until((c) => c.ended);
    assert.deepEqual((await t.app.inject({ url: `/api/tracking/${oldToken}` })).json(), {
      statusCode: 404,
      message: 'Tracking link not found',
      error: 'Not Found',
      code: 'TRACKING_NOT_FOUND',
    });
    assert.equal((await t.app.inject({ url: `/api/tracking/${oldToken}/stream` })).statusCode, 404);
    assert.equal((await get(t, `/api/packages/${pkg.id}`, business.headers)).json().trackingUrl, newUrl);
    const newToken = tokenOf(newUrl);
    assert.equal((await t.app.inject({ url: `/api/tracking/${newToken}` })).statusCode, 200);

    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
    assert.equal((await t.app.inject({ url: `/api/tracking/${newToken}` })).json().status, 'CANCELLED');
    t.clock.advance(24 * 3600_000 - 1000);
    assert.equal((await t.app.inject({ url: `/api/tracking/${newToken}` })).statusCode, 200);
    t.clock.advance(1000);
    assert.equal((await t.app.inject({ url: `/api/tracking/${newToken}` })).statusCode, 404);
    assert.equal((await t.app.inject({ url: '/api/tracking/not-a-token' })).statusCode, 404);
    // Back, so that the other tests' access tokens are valid again.
    t.clock.advance(-24 * 3600_000);
  });

  test("the streams have the visibility of the object: someone else's package or ride is 404, no token is 401", async () => {
    const pkg = await createPackage();
    const stranger = await SseClient.open(`${base}/api/packages/${pkg.id}/track`, other.headers);
    assert.equal(stranger.status, 404);
    assert.deepEqual(JSON.parse(stranger.body), {
      statusCode: 404,
      message: 'Package not found',
      error: 'Not Found',
      code: 'PACKAGE_NOT_FOUND',
    });
    assert.equal((await SseClient.open(`${base}/api/packages/${pkg.id}/track`)).status, 401);
    assert.equal(
      (await SseClient.open(`${base}/api/packages/${pkg.id}/track?access_token=nonsense-secret`)).status,
      401,
    );
    // The request is logged, its access_token not.
    assert.ok(t.logLines.some((l) => l.includes(`/api/packages/${pkg.id}/track?access_token=[redacted]`)));
    assert.ok(!t.logLines.some((l) => l.includes('nonsense-secret')));

    const customer = await createUser(t, { role: 'CUSTOMER' });
    const stranger2 = await createUser(t, { role: 'CUSTOMER' });
    const ride = (await post(t, '/api/rides', customer.headers, rideBody(customer.countryId))).json();
    assert.equal((await SseClient.open(`${base}/api/rides/${ride.id}/track`, stranger2.headers)).status, 404);
    const mine = await SseClient.open(`${base}/api/rides/${ride.id}/track?access_token=${customer.token}`);
    await mine.until((c) => c.of('status').length === 1);
    assert.equal(mine.json('status')[0]!.status, 'REQUESTED');
    await post(t, `/api/rides/${ride.id}/cancel`, customer.headers, { reason: 'Changed my mind' });
    await mine.until((c) => c.ended);
    assert.deepEqual(mine.json('status').at(-1), {
      jobType: 'RIDE',
      jobId: ride.id,
      status: 'CANCELLED',
      at: mine.json('status').at(-1)!.at,
      reason: 'Changed my mind',
    });
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });

  test('the account stream: status events of what the caller may read over one connection; missed ones replayed from Last-Event-ID', async () => {
    // (The test clock stands still: the other tests' events must be older than this one's.)
    t.clock.advance(5000);
    const stream = await SseClient.open(`${base}/api/events/stream?access_token=${business.token}`);
    assert.equal(stream.status, 200);
    const mine = await createPackage();
    const theirs = (await post(t, '/api/packages', other.headers, packageBody(other.countryId))).json();
    await post(t, `/api/packages/${theirs.id}/cancel`, other.headers);
    await post(t, `/api/packages/${mine.id}/cancel`, business.headers, { reason: 'Not needed' });
    await stream.until((c) => c.of('status').length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      stream.json('status').map((s) => [s.jobId, s.status, s.reason]),
      [[mine.id, 'CANCELLED', 'Not needed']],
    );
    stream.close();
    const lastId = stream.of('status')[0]!.id!;

    // Missed while away: a new package of mine and its cancellation, and a change of someone else's.
    t.clock.advance(1000);
    const second = await createPackage();
    t.clock.advance(1000);
    await post(t, `/api/packages/${second.id}/cancel`, business.headers);
    const theirs2 = (await post(t, '/api/packages', other.headers, packageBody(other.countryId))).json();
    await post(t, `/api/packages/${theirs2.id}/cancel`, other.headers);
    const again = await SseClient.open(`${base}/api/events/stream`, { ...business.headers, 'last-event-id': lastId });
    await again.until((c) => c.of('status').length >= 2);
    assert.deepEqual(
      again.json('status').map((s) => [s.jobId, s.status]),
      [
        [second.id, 'PENDING'],
        [second.id, 'CANCELLED'],
      ],
    );
    // Then live, on the same connection.
    const third = await createPackage();
    await post(t, `/api/packages/${third.id}/cancel`, business.headers);
    await again.until((c) => c.of('status').length === 3);
    assert.deepEqual(again.json('status')[2]!.jobId, third.id);
    again.close();

    for (const [id, later] of [
      ['garbage', false],
      [lastId, true],
    ] as const) {
      let authorization = business.headers.authorization;
      if (later) {
        // An hour and more after the last event seen (with an access token of that time).
        t.clock.advance(61 * 60_000);
        authorization = `Bearer ${(await t.tokens.signAccess({ userId: business.id, role: 'BUSINESS', sessionId: business.sessionId })).token}`;
      }
      const resynced = await SseClient.open(`${base}/api/events/stream`, { authorization, 'last-event-id': id });
      await resynced.until((c) => c.events.length >= 1);
      assert.equal(resynced.events[0]!.event, 'resync');
      assert.deepEqual(JSON.parse(resynced.events[0]!.data), { reason: 'CANNOT_REPLAY' });
      resynced.close();
    }
    t.clock.advance(-61 * 60_000);
  });

  test('the live map: bbox validated, answered from the live index, at most 5,000 drivers, streamed as a snapshot then changes', async () => {
    const admin = await createUser(t, { role: 'ADMIN' });
    const url = (bbox: string) => `/api/admin/drivers/live?bbox=${encodeURIComponent(bbox)}`;
    for (const [bbox, message] of [
      ['1,2,3', 'bbox must be minLng,minLat,maxLng,maxLat (four decimal numbers)'],
      ['a,b,c,d', 'bbox must be minLng,minLat,maxLng,maxLat (four decimal numbers)'],
      ['36,-1,37,-2', 'bbox minimums must be below its maximums'],
      ['36,-91,37,-1', 'bbox longitudes must be within -180..180 and latitudes within -90..90'],
      ['0,-40,40,0', 'bbox may span at most 30 degrees of latitude and of longitude'],
    ]) {
      const res = await get(t, url(bbox), admin.headers);
      assert.equal(res.statusCode, 400, bbox);
      assert.equal(res.json().message, message);
    }
    assert.equal((await get(t, '/api/admin/drivers/live', admin.headers)).statusCode, 400);
    assert.equal((await get(t, url('36,-2,37,-1'), business.headers)).statusCode, 403);

    const company = await createUser(t, { role: 'COMPANY' });
    const fleetDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', companyId: company.id },
    });
    const freelance = await onlineDriver();
    await report(fleetDriver, 10.5, 20.5);
    await report(freelance, 10.6, 20.6);
    const box = url('20,10,21,11');
    const listed = (await get(t, box, admin.headers)).json();
    assert.equal(listed.truncated, false);
    assert.deepEqual(
      listed.drivers.map((d: { driverId: string }) => d.driverId).sort(),
      [fleetDriver.id, freelance.id].sort(),
    );
    // The same box as a browser computes and sends it (floating-point digits, an exponent, a `+` encoded).
    const computed = (await get(t, url(`${0.1 * 3 + 19.6},9.999999999999998,2.1E+1,1.1e1`), admin.headers)).json();
    assert.deepEqual(
      computed.drivers.map((d: { driverId: string }) => d.driverId).sort(),
      [fleetDriver.id, freelance.id].sort(),
    );
    const fleet = (await get(t, '/api/companies/me/drivers/live', company.headers)).json();
    assert.deepEqual(
      fleet.drivers.map((d: { driverId: string; availability: string; onJob: boolean }) => [
        d.driverId,
        d.availability,
        d.onJob,
      ]),
      [[fleetDriver.id, 'ONLINE', false]],
    );

    const stream = await SseClient.open(`${base}${box}&access_token=${admin.token}`.replace('/live?', '/live/stream?'));
    assert.equal(stream.status, 200);
    await stream.until((c) => c.of('snapshot').length === 1);
    assert.equal(stream.json<{ drivers: unknown[] }>('snapshot')[0]!.drivers.length, 2);
    await report(freelance, 10.61, 20.61);
    await stream.until((c) => c.of('positions').length === 1, INTERVAL_MS * 4);
    const moved = stream.json<{ drivers: { driverId: string; location: unknown }[]; removed: string[] }>(
      'positions',
    )[0]!;
    assert.deepEqual(
      moved.drivers.map((d) => [d.driverId, d.location]),
      [[freelance.id, { lat: 10.61, lng: 20.61 }]],
    );
    assert.deepEqual(moved.removed, []);
    // A revoked session's stream ends (the company's token stays good).
    const companyStream = await SseClient.open(`${base}/api/companies/me/drivers/live/stream`, company.headers);
    await companyStream.until((c) => c.of('snapshot').length === 1);
    await t.db
      .updateTable('auth_sessions')
      .set({ revoked_at: t.clock.now() })
      .where('id', '=', admin.sessionId)
      .execute();
    t.deps.bus.publish('session.revoked', { sessionId: admin.sessionId });
    await stream.until((c) => c.ended);
    assert.equal(companyStream.ended, false);
    companyStream.close();

    // More drivers in the box than a map may show: 5,000 of them and `truncated`.
    const index = t.services.live.index;
    for (let i = 0; i < 5100; i += 1) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      index.upsert(
        {
          id,
          firstName: 'Bulk',
          vehicleType: 'CAR',
          vehiclePlate: 'X',
          rating: null,
          countryId: null,
          serviceTypes: ['RIDE'],
          active: true,
          online: true,
          busy: false,
        },
        { lat: -5.5, lng: 30.5, heading: null, speed: null, at: t.clock.nowMs() },
      );
    }
    const admin2 = await createUser(t, { role: 'ADMIN' });
    const crowded = (await get(t, url('30,-6,31,-5'), admin2.headers)).json();
    assert.equal(crowded.drivers.length, 5000);
    assert.equal(crowded.truncated, true);
  });
});

test('shutting down ends the open streams instead of waiting for them', async () => {
  const t = await buildTestApp({ env: { DISPATCH_MODE: 'off' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  const business = await createUser(t, { role: 'BUSINESS' });
  const pkg = (await post(t, '/api/packages', business.headers, packageBody(business.countryId))).json();
  const stream = await SseClient.open(`http://127.0.0.1:${port}/api/packages/${pkg.id}/track`, business.headers);
  await stream.until((c) => c.of('status').length === 1);
  const started = Date.now();
  await t.close();
  await stream.until((c) => c.ended);
  assert.ok(Date.now() - started < 5000);
});

function randomId(): string {
  return '11111111-2222-4333-8444-555555555555';
}

test(
  'packages stored without a tracking hash (older versions) get theirs in batches, and their links then work',
  { timeout: 120_000 },
  async () => {
    const t = await buildTestApp({ env: { DISPATCH_MODE: 'off' } });
    try {
      const business = await createUser(t, { role: 'BUSINESS' });
      const res = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
      assert.equal(res.statusCode, 201, res.body);
      const pkg = res.json();
      const token = pkg.trackingUrl.split('/t/')[1]!;
      // One with its hash already (written by this version, or rotated meanwhile): left as it is.
      const kept = (await post(t, '/api/packages', business.headers, packageBody(business.countryId))).json();
      const keptHash = (
        await t.db
          .selectFrom('packages')
          .select('tracking_token_hash')
          .where('id', '=', kept.id)
          .executeTakeFirstOrThrow()
      ).tracking_token_hash;
      await t.db
        .updateTable('packages')
        .set({ tracking_nonce: 'rotated', tracking_token_hash: keptHash })
        .where('id', '=', kept.id)
        .execute();
      // 1,100 more as an older version wrote them (no hash), over three batches of the backfill.
      await sql`
      insert into packages (id, status, vehicle_type, country_id, created_by, business_id, pickup, dropoff, parcel, pickup_lat, pickup_lng, created_at, updated_at)
      select gen_random_uuid(), p.status, p.vehicle_type, p.country_id, p.created_by, p.business_id, p.pickup, p.dropoff, p.parcel, p.pickup_lat, p.pickup_lng, p.created_at, p.updated_at
      from packages p, generate_series(1, 1100) where p.id = ${pkg.id}`.execute(t.db);
      await t.db.updateTable('packages').set({ tracking_token_hash: null }).where('id', '=', pkg.id).execute();
      assert.equal((await t.app.inject({ url: `/api/tracking/${token}` })).statusCode, 404);

      assert.equal(await t.services.tracking.backfillTokens(), 1101);
      const rows = await t.db
        .selectFrom('packages')
        .select(['id', 'tracking_nonce', 'tracking_token_hash'])
        .where('business_id', '=', business.id)
        .execute();
      assert.equal(rows.length, 1102);
      const links = new TrackingTokens(t.deps.config.auth.jwtSecret, 'https://x.example/');
      for (const row of rows) {
        if (row.id === kept.id) assert.equal(row.tracking_token_hash, keptHash);
        else assert.equal(row.tracking_token_hash, links.hashFor(row.id, row.tracking_nonce), row.id);
      }
      assert.equal((await t.app.inject({ url: `/api/tracking/${token}` })).statusCode, 200);
      assert.equal(await t.services.tracking.backfillTokens(), 0);
    } finally {
      await t.close();
    }
  },
);
