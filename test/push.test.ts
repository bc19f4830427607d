// Web Push (contract sections 19 and 20): subscriptions through the API, offers and a customer's ride
// pushed to a local push service that checks the VAPID JWT and decrypts the payload.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { startPushReceiver, type PushReceiver } from './helpers/push-receiver.js';
import { get, packageBody, post, rideBody, setDriverPosition, stop } from './packages-helpers.js';
import { generateVapidKeys } from '../src/modules/push/vapid-keys.js';

const vapid = generateVapidKeys();
const VAPID_ENV = {
  VAPID_PUBLIC_KEY: vapid.publicKey,
  VAPID_PRIVATE_KEY: vapid.privateKey,
  VAPID_SUBJECT: 'mailto:ops@example.com',
};

const del = (t: TestApp, headers: Record<string, string>, payload: unknown) =>
  t.app.inject({ method: 'DELETE', url: '/api/push/subscriptions', headers, payload: payload as object });
const subscriptionsOf = async (t: TestApp, userId: string) =>
  await t.db
    .selectFrom('push_subscriptions')
    .select(['endpoint', 'last_success_at'])
    .where('user_id', '=', userId)
    .execute();

describe('web push', () => {
  let t: TestApp;
  let receiver: PushReceiver;
  let business: TestUser;
  let area = 0;
  // Each test in its own area, a degree apart (beyond DISPATCH_MAX_RADIUS), in Kenya.
  const nextArea = () => {
    area += 1;
    return { lat: -4 + area, lng: 38 };
  };

  before(async () => {
    t = await buildTestApp({ env: { ...VAPID_ENV, PUSH_ALLOW_HTTP: 'true', PUSH_ALLOW_PRIVATE_TARGETS: 'true' } });
    receiver = await startPushReceiver(vapid.publicKey);
    business = await createUser(t, { role: 'BUSINESS' });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const idle = async () => {
    await t.services.dispatch.idle();
    await t.services.push.idle();
  };

  test('GET /push/vapid-public-key gives the configured key, without signing in', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/push/vapid-public-key' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { publicKey: vapid.publicKey });
  });

  test('an offer reaches every subscription of its driver, encrypted and signed, with TTL = the time to its deadline and urgency high', async () => {
    const at = nextArea();
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    await setDriverPosition(t, driver.id, at.lat + 0.003, at.lng);
    const phone = receiver.subscription();
    const tablet = receiver.subscription();
    for (const s of [phone, tablet]) {
      const res = await post(t, '/api/push/subscriptions', driver.headers, s.json);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().endpoint, s.json.endpoint);
    }
    // No WebSocket is open: the push goes out anyway.
    const created = await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(at.lat, at.lng), dropoff: stop(at.lat + 0.02, at.lng) }),
    );
    assert.equal(created.statusCode, 201);
    await idle();
    const [offer] = (await get(t, '/api/drivers/me/offers', driver.headers)).json().offers;
    assert.equal(offer.jobId, created.json().id);

    for (const s of [phone, tablet]) {
      const push = await receiver.next(s.id);
      const priceText = `KES ${(offer.price.amount / 100).toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
      assert.deepEqual(push.payload, {
        // Title and body in the driver's language (section 27): English here.
        title: 'New offer',
        body: `Pickup: Moi Avenue 1, Nairobi · ${priceText}`,
        type: 'offer',
        offerId: offer.id,
        jobType: 'PACKAGE',
        jobId: offer.jobId,
        deadline: offer.expiresAt,
        pickupArea: 'Moi Avenue 1, Nairobi',
        price: offer.price,
        // Formatted by the server (ISO 4217's decimals), so the service worker shows it as it is.
        priceText,
      });
      assert.equal(push.ttl, '20', 'DISPATCH_OFFER_TTL from the offer');
      assert.equal(push.urgency, 'high');
      assert.equal(push.contentEncoding, 'aes128gcm');
      assert.ok(!JSON.stringify(push.payload).includes('+2547'), 'no contact details');
    }
    assert.deepEqual(receiver.rejected, []);
    const rows = await subscriptionsOf(t, driver.id);
    assert.equal(rows.length, 2);
    assert.ok(
      rows.every((r) => r.last_success_at !== null),
      'successes recorded',
    );
  });

  test('a push service answering 410 (or 404) deletes the subscription; a 500 is logged without the endpoint or keys and counted', async () => {
    const at = nextArea();
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    await setDriverPosition(t, driver.id, at.lat + 0.003, at.lng);
    const gone = receiver.subscription();
    const broken = receiver.subscription();
    const missing = receiver.subscription();
    for (const s of [gone, broken, missing])
      assert.equal((await post(t, '/api/push/subscriptions', driver.headers, s.json)).statusCode, 201);
    receiver.answer(gone.id, 410);
    receiver.answer(broken.id, 500);
    receiver.answer(missing.id, 404);
    const logged = t.logLines.length;
    await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(at.lat, at.lng), dropoff: stop(at.lat + 0.02, at.lng) }),
    );
    await idle();
    assert.deepEqual(
      (await subscriptionsOf(t, driver.id)).map((r) => r.endpoint),
      [broken.json.endpoint],
    );
    const lines = t.logLines.slice(logged).join('\n');
    assert.match(lines, /push refused by the push service/);
    for (const secret of [broken.id, broken.json.keys.p256dh, broken.json.keys.auth, 'Moi Avenue'])
      assert.ok(!lines.includes(secret), `log leaks ${secret}`);
    const metrics = await t.deps.metrics.registry.getSingleMetricAsString('push_sends_total');
    assert.match(metrics, /push_sends_total\{kind="offer",outcome="gone"\} 2/);
    assert.match(metrics, /push_sends_total\{kind="offer",outcome="failed"\} 1/);
  });

  test('a customer hears when a driver accepts the ride, arrives and completes it', async () => {
    const at = nextArea();
    const customer = await createUser(t, { role: 'CUSTOMER' });
    const sub = receiver.subscription();
    assert.equal((await post(t, '/api/push/subscriptions', customer.headers, sub.json)).statusCode, 201);
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    await setDriverPosition(t, driver.id, at.lat + 0.002, at.lng);
    const ride = await post(
      t,
      '/api/rides',
      customer.headers,
      rideBody(customer.countryId, {
        pickupLocation: { lat: at.lat, lng: at.lng },
        destinationLocation: { lat: at.lat + 0.02, lng: at.lng },
      }),
    );
    assert.equal(ride.statusCode, 201, ride.body);
    const rideId = ride.json().id;
    await idle();
    const [offer] = (await get(t, '/api/drivers/me/offers', driver.headers)).json().offers;
    assert.equal((await post(t, `/api/offers/${offer.id}/accept`, driver.headers)).statusCode, 200);
    let push = await receiver.next(sub.id);
    assert.deepEqual(push.payload, {
      title: 'Your ride',
      body: 'A driver accepted your ride.',
      type: 'job',
      jobType: 'RIDE',
      jobId: rideId,
      status: 'ACCEPTED',
    });
    assert.equal(push.urgency, 'high');
    assert.equal((await post(t, `/api/rides/${rideId}/arrive`, driver.headers)).statusCode, 200);
    push = await receiver.next(sub.id);
    assert.equal(push.payload.status, 'ARRIVED');
    assert.equal((await post(t, `/api/rides/${rideId}/start`, driver.headers)).statusCode, 200);
    assert.equal((await post(t, `/api/rides/${rideId}/complete`, driver.headers)).statusCode, 200);
    push = await receiver.next(sub.id);
    assert.equal(push.payload.status, 'COMPLETED', 'the start is not pushed; the completion is');
    await idle();
    assert.deepEqual(
      receiver.received.filter((p) => p.subscriptionId === sub.id),
      [],
    );
  });

  test('subscription bodies are validated: key lengths, points, unknown fields', async () => {
    const user = await createUser(t, { role: 'CUSTOMER' });
    const good = receiver.subscription().json;
    const cases: [unknown, RegExp][] = [
      [{ ...good, keys: { ...good.keys, p256dh: good.keys.p256dh.slice(0, 60) } }, /p256dh/],
      [{ ...good, keys: { ...good.keys, auth: good.keys.auth.slice(0, 10) } }, /auth/],
      [{ ...good, keys: { ...good.keys, auth: Buffer.alloc(20).toString('base64url') } }, /auth/],
      // 65 bytes starting with 4, but not a point of the curve.
      [
        {
          ...good,
          keys: { ...good.keys, p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url') },
        },
        /p256dh/,
      ],
      [{ ...good, keys: { ...good.keys, p256dh: good.keys.p256dh.replace(/.$/, '*') } }, /p256dh/],
      [{ ...good, role: 'ADMIN' }, /./],
      [{ endpoint: good.endpoint }, /keys/],
      [{ ...good, endpoint: 'not a url' }, /endpoint must be an absolute URL/],
    ];
    for (const [body, message] of cases) {
      const res = await post(t, '/api/push/subscriptions', user.headers, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().error, 'Bad Request');
      assert.match(res.json().message, message);
    }
    assert.equal((await subscriptionsOf(t, user.id)).length, 0);
    assert.equal((await post(t, '/api/push/subscriptions', {}, good)).statusCode, 401);
  });

  test('at most 10 subscriptions per account: the oldest is replaced', async () => {
    const user = await createUser(t, { role: 'CUSTOMER' });
    const subs = Array.from({ length: 11 }, () => receiver.subscription().json);
    for (const s of subs) {
      assert.equal((await post(t, '/api/push/subscriptions', user.headers, s)).statusCode, 201);
      t.clock.advance(1000);
    }
    const endpoints = (await subscriptionsOf(t, user.id)).map((r) => r.endpoint).sort();
    assert.deepEqual(
      endpoints,
      subs
        .slice(1)
        .map((s) => s.endpoint)
        .sort(),
    );
  });

  test("DELETE /push/subscriptions removes only the caller's own: someone else's endpoint is a 404 and stays", async () => {
    const owner = await createUser(t, { role: 'DRIVER' });
    const other = await createUser(t, { role: 'CUSTOMER' });
    const s = receiver.subscription().json;
    assert.equal((await post(t, '/api/push/subscriptions', owner.headers, s)).statusCode, 201);
    const foreign = await del(t, other.headers, { endpoint: s.endpoint });
    assert.deepEqual(foreign.json(), {
      statusCode: 404,
      message: 'Push subscription not found',
      error: 'Not Found',
      code: 'PUSH_SUBSCRIPTION_NOT_FOUND',
    });
    assert.equal((await subscriptionsOf(t, owner.id)).length, 1);
    const own = await del(t, owner.headers, { endpoint: s.endpoint });
    assert.equal(own.statusCode, 204);
    assert.equal(own.body, '');
    assert.equal((await subscriptionsOf(t, owner.id)).length, 0);
    assert.equal((await del(t, owner.headers, { endpoint: s.endpoint })).statusCode, 404);
  });
  test('an endpoint belongs to one account: another account posting it gets 409 PUSH_ENDPOINT_TAKEN and the owner keeps it', async () => {
    const owner = await createUser(t, { role: 'DRIVER' });
    const other = await createUser(t, { role: 'DRIVER' });
    const s = receiver.subscription().json;
    assert.equal((await post(t, '/api/push/subscriptions', owner.headers, s)).statusCode, 201);
    const taken = await post(t, '/api/push/subscriptions', other.headers, s);
    assert.deepEqual(taken.json(), {
      statusCode: 409,
      message: 'This push endpoint is registered to another account',
      error: 'Conflict',
      code: 'PUSH_ENDPOINT_TAKEN',
    });
    assert.deepEqual(
      (await subscriptionsOf(t, owner.id)).map((r) => r.endpoint),
      [s.endpoint],
    );
    assert.equal((await subscriptionsOf(t, other.id)).length, 0);
    // The owner posting it again (new keys after a re-subscribe, say) still works.
    assert.equal((await post(t, '/api/push/subscriptions', owner.headers, s)).statusCode, 201);
    assert.equal((await subscriptionsOf(t, owner.id)).length, 1);
  });
});

describe('web push: endpoint rules and push off', () => {
  test('without PUSH_ALLOW_HTTP / PUSH_ALLOW_PRIVATE_TARGETS: http endpoints and private addresses are refused with 400', async () => {
    const t = await buildTestApp({ env: VAPID_ENV });
    try {
      const user = await createUser(t, { role: 'CUSTOMER' });
      const keys = (await startPushReceiverKeys()).keys;
      const cases: [string, string][] = [
        ['http://push.example.com/send/abc', 'endpoint must use https'],
        ['https://127.0.0.1/push/abc', 'endpoint must point to a public address'],
        ['https://10.1.2.3/push/abc', 'endpoint must point to a public address'],
        ['https://[::1]/push/abc', 'endpoint must point to a public address'],
        ['https://localhost/push/abc', 'endpoint must point to a public address'],
        ['https://user:pw@push.example.com/x', 'endpoint must not contain credentials'],
      ];
      for (const [endpoint, message] of cases) {
        const res = await post(t, '/api/push/subscriptions', user.headers, { endpoint, keys });
        assert.deepEqual(
          res.json(),
          { statusCode: 400, message, error: 'Bad Request', code: 'INVALID_PUSH_ENDPOINT' },
          endpoint,
        );
      }
      // A public https endpoint (an address literal: no DNS needed) is fine.
      assert.equal(
        (await post(t, '/api/push/subscriptions', user.headers, { endpoint: 'https://8.8.8.8/push/abc', keys }))
          .statusCode,
        201,
      );
    } finally {
      await t.close();
    }
  });

  test('without VAPID keys off the embedded default, push is off: the public key and subscribing answer 404', async () => {
    // DATABASE_URL set (the test database is passed in anyway): not the embedded default, so no generated keys.
    const t = await buildTestApp({ env: { DATABASE_URL: 'postgres://unused.invalid/db' } });
    try {
      const user = await createUser(t, { role: 'DRIVER' });
      const off = {
        statusCode: 404,
        message: 'Push notifications are not configured on this server',
        error: 'Not Found',
        code: 'PUSH_NOT_CONFIGURED',
      };
      assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/push/vapid-public-key' })).json(), off);
      const keys = (await startPushReceiverKeys()).keys;
      assert.deepEqual(
        (await post(t, '/api/push/subscriptions', user.headers, { endpoint: 'https://8.8.8.8/push/abc', keys })).json(),
        off,
      );
    } finally {
      await t.close();
    }
  });

  test('on the embedded default without keys, a key pair is generated once and kept in DATA_DIR (mode 0600)', async () => {
    const { mkdtemp, stat, readFile, rm } = await import('node:fs/promises');
    const dir = await mkdtemp('/tmp/rd-push-');
    try {
      const first = await buildTestApp({ env: { DATA_DIR: dir } });
      const key = (await first.app.inject({ method: 'GET', url: '/api/push/vapid-public-key' })).json().publicKey;
      await first.close();
      assert.equal(Buffer.from(key, 'base64url').length, 65);
      assert.equal((await stat(`${dir}/vapid-keys.json`)).mode & 0o777, 0o600);
      assert.equal(JSON.parse(await readFile(`${dir}/vapid-keys.json`, 'utf8')).publicKey, key);
      const second = await buildTestApp({ env: { DATA_DIR: dir } });
      assert.equal(
        (await second.app.inject({ method: 'GET', url: '/api/push/vapid-public-key' })).json().publicKey,
        key,
        'the same key after a restart',
      );
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** A browser's keys, without a receiver behind them. */
async function startPushReceiverKeys() {
  const { createECDH, randomBytes } = await import('node:crypto');
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } };
}

describe('web push across two instances (PostgreSQL and Redis)', { skip: redisSkipReason }, () => {
  test('an offer made on one instance and a ride accepted on the other are each pushed once', async () => {
    const prefix = `test:${randomBytes(6).toString('hex')}:`;
    const env = { ...VAPID_ENV, PUSH_ALLOW_HTTP: 'true', PUSH_ALLOW_PRIVATE_TARGETS: 'true' };
    const a = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env });
    const b = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env, database: a.database, clock: a.clock });
    const receiver = await startPushReceiver(vapid.publicKey);
    try {
      const at = { lat: 0.9, lng: 37.2 };
      const customer = await createUser(a, { role: 'CUSTOMER' });
      const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
      await setDriverPosition(a, driver.id, at.lat + 0.002, at.lng);
      await b.services.live.reload(driver.id);
      const driverSub = receiver.subscription();
      const customerSub = receiver.subscription();
      assert.equal((await post(a, '/api/push/subscriptions', driver.headers, driverSub.json)).statusCode, 201);
      assert.equal((await post(b, '/api/push/subscriptions', customer.headers, customerSub.json)).statusCode, 201);
      const ride = (
        await post(
          a,
          '/api/rides',
          customer.headers,
          rideBody(customer.countryId, {
            pickupLocation: at,
            destinationLocation: { lat: at.lat + 0.02, lng: at.lng },
          }),
        )
      ).json();
      const offerPush = await receiver.next(driverSub.id);
      assert.equal(offerPush.payload.jobId, ride.id);
      assert.equal((await post(b, `/api/offers/${offerPush.payload.offerId}/accept`, driver.headers)).statusCode, 200);
      assert.equal((await receiver.next(customerSub.id)).payload.status, 'ACCEPTED');
      // Both instances heard of both (the bus): neither sends a second copy.
      await new Promise((r) => setTimeout(r, 500));
      for (const t of [a, b]) {
        await t.services.dispatch.idle();
        await t.services.push.idle();
      }
      assert.deepEqual(
        receiver.received.map((p) => p.payload.type),
        [],
      );
    } finally {
      await receiver.close();
      await b.close();
      await a.close();
      await deleteRedisKeys(prefix);
    }
  });
});
