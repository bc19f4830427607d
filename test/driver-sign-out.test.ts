// Signing out of the driver app (contract 19, issue 39): POST /auth/logout with the refresh token and,
// optionally, the push endpoint of the phone. A driver's live session revoked sets the driver OFFLINE
// (even on a job: the phone no longer sends positions) and deletes that push subscription of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { startPushReceiver, type PushReceiver } from './helpers/push-receiver.js';
import { get, packageBody, post } from './packages-helpers.js';
import { generateVapidKeys } from '../src/modules/push/vapid-keys.js';

const vapid = generateVapidKeys();

describe('driver sign-out: logout sets the driver OFFLINE and deletes the named push subscription', () => {
  let t: TestApp;
  let receiver: PushReceiver;
  let business: TestUser;

  before(async () => {
    t = await buildTestApp({
      env: {
        VAPID_PUBLIC_KEY: vapid.publicKey,
        VAPID_PRIVATE_KEY: vapid.privateKey,
        VAPID_SUBJECT: 'mailto:ops@example.com',
        PUSH_ALLOW_HTTP: 'true',
        PUSH_ALLOW_PRIVATE_TARGETS: 'true',
      },
    });
    receiver = await startPushReceiver(vapid.publicKey);
    business = await createUser(t, { role: 'BUSINESS' });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const signIn = async (user: TestUser) => {
    const tokens = await t.services.sessions.create(user.id, 'DRIVER', true);
    return { ...tokens, headers: { authorization: `Bearer ${tokens.accessToken}` } };
  };
  const availability = async (id: string) =>
    (
      await t.db
        .selectFrom('driver_profiles')
        .select('availability')
        .where('user_id', '=', id)
        .executeTakeFirstOrThrow()
    ).availability;
  const endpoints = async (id: string) =>
    (await t.db.selectFrom('push_subscriptions').select('endpoint').where('user_id', '=', id).execute()).map(
      (r) => r.endpoint,
    );

  test('a driver on a job signs out: OFFLINE, session revoked, that subscription deleted (another of its own stays)', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const phone = await signIn(driver);
    const pkg = (await post(t, '/api/packages', business.headers, packageBody(business.countryId))).json() as {
      id: string;
    };
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, phone.headers)).statusCode, 200);
    const here = receiver.subscription().json;
    const tablet = receiver.subscription().json;
    for (const s of [here, tablet])
      assert.equal((await post(t, '/api/push/subscriptions', phone.headers, s)).statusCode, 201);

    const res = await post(
      t,
      '/api/auth/logout',
      {},
      { refreshToken: phone.refreshToken, pushEndpoint: here.endpoint },
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { success: true, message: 'Logged out' });
    assert.equal(await availability(driver.id), 'OFFLINE');
    assert.deepEqual(await endpoints(driver.id), [tablet.endpoint]);
    assert.equal((await get(t, '/api/auth/me', phone.headers)).statusCode, 401);
    // The job stays the driver's (an admin or the driver, signed in again, releases it).
    const job = await t.db
      .selectFrom('packages')
      .select(['status', 'driver_id'])
      .where('id', '=', pkg.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(job, { status: 'ASSIGNED', driver_id: driver.id });
  });

  test('the endpoint of someone else is not deleted, and a token that is not live changes nothing (a late sign-out cannot take a driver signed in elsewhere OFFLINE)', async () => {
    const a = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const b = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const aPhone = await signIn(a);
    const bPhone = await signIn(b);
    const bs = receiver.subscription().json;
    assert.equal((await post(t, '/api/push/subscriptions', bPhone.headers, bs)).statusCode, 201);
    assert.equal(
      (await post(t, '/api/auth/logout', {}, { refreshToken: aPhone.refreshToken, pushEndpoint: bs.endpoint }))
        .statusCode,
      200,
    );
    assert.deepEqual(await endpoints(b.id), [bs.endpoint]);
    assert.equal(await availability(a.id), 'OFFLINE');

    // A signs in again elsewhere and goes online; the old phone's sign-out arrives late: nothing changes.
    const elsewhere = await signIn(a);
    assert.equal(
      (await post(t, '/api/drivers/me/availability', elsewhere.headers, { status: 'ONLINE' })).statusCode,
      200,
    );
    assert.equal((await post(t, '/api/auth/logout', {}, { refreshToken: aPhone.refreshToken })).statusCode, 200);
    assert.equal(await availability(a.id), 'ONLINE');
    assert.equal((await get(t, '/api/auth/me', elsewhere.headers)).statusCode, 200);
  });

  test('pushEndpoint is validated like the subscription endpoint: 400 in the error shape, never a 500', async () => {
    const res = await post(t, '/api/auth/logout', {}, { refreshToken: 'x', pushEndpoint: 'a'.repeat(3000) });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'Bad Request');
    const unknown = await post(
      t,
      '/api/auth/logout',
      {},
      { refreshToken: 'not-a-token', pushEndpoint: 'https://push.example.com/x' },
    );
    assert.equal(unknown.statusCode, 200);
  });
});
