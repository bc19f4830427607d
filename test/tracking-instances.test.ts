// Tracking across two instances on one database and one Redis: whatever instance a change or a
// position is written on, the subscriber's instance pushes it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { SseClient } from './helpers/sse-client.js';
import { packageBody, post } from './packages-helpers.js';

describe('tracking across two instances (Redis)', { skip: redisSkipReason }, () => {
  let a: TestApp;
  let b: TestApp;
  let baseB: string;
  let business: TestUser;
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const env = { DISPATCH_MODE: 'off', TRACKING_INTERVAL: '200ms' };

  before(async () => {
    a = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env });
    b = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env, database: a.database, clock: a.clock });
    await b.app.listen({ port: 0, host: '127.0.0.1' });
    const address = b.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    baseB = `http://127.0.0.1:${address.port}`;
    business = await createUser(a, { role: 'BUSINESS' });
  });
  after(async () => {
    await b.close();
    await a.close();
    await deleteRedisKeys(prefix);
  });

  test('a subscriber on B sees the statuses and a position written on A', async () => {
    const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const pkg = (await post(a, '/api/packages', business.headers, packageBody(business.countryId))).json();
    const stream = await SseClient.open(`${baseB}/api/tracking/${pkg.trackingUrl.split('/t/')[1]}/stream`);
    await stream.until((c) => c.of('status').length === 1);
    assert.equal((await post(a, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
    await stream.until((c) => c.json('status').some((s) => s.status === 'ASSIGNED'));
    a.clock.advance(10);
    assert.equal(
      (await post(a, '/api/drivers/me/location', driver.headers, { lat: -1.25, lng: 36.85 })).statusCode,
      204,
    );
    await stream.until((c) => c.of('location').length === 1, 2000);
    assert.deepEqual(stream.json('location')[0]!.location, { lat: -1.25, lng: 36.85 });
    assert.equal(stream.json('eta')[0]!.to, 'PICKUP');
    await post(a, `/api/packages/${pkg.id}/cancel`, business.headers);
    await stream.until((c) => c.ended);
  });

  test('a stream held open on B while its package is cancelled on A ends, after the CANCELLED event', async () => {
    const pkg = (await post(a, '/api/packages', business.headers, packageBody(business.countryId))).json();
    const stream = await SseClient.open(`${baseB}/api/packages/${pkg.id}/track`, business.headers);
    await stream.until((c) => c.of('status').length === 1);
    assert.equal(
      (await post(a, `/api/packages/${pkg.id}/cancel`, business.headers, { reason: 'Wrong address' })).statusCode,
      200,
    );
    await stream.until((c) => c.ended);
    assert.deepEqual(
      stream.json('status').map((s) => [s.status, s.reason]),
      [
        ['PENDING', undefined],
        ['CANCELLED', 'Wrong address'],
      ],
    );
    assert.ok(stream.ended);
  });

  test('a link rotated on A ends its stream on B', async () => {
    const pkg = (await post(a, '/api/packages', business.headers, packageBody(business.countryId))).json();
    const stream = await SseClient.open(`${baseB}/api/tracking/${pkg.trackingUrl.split('/t/')[1]}/stream`);
    await stream.until((c) => c.of('status').length === 1);
    assert.equal((await post(a, `/api/packages/${pkg.id}/tracking/rotate`, business.headers)).statusCode, 200);
    await stream.until((c) => c.ended);
    await post(a, `/api/packages/${pkg.id}/cancel`, business.headers);
  });
});
