// Driver positions whatever carried them (contract section 19): two in the same whole second (OsmAnd
// sends seconds) keep the newer one everywhere: the live index, the live map's stream, the database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { SseClient } from './helpers/sse-client.js';

const INTERVAL_MS = 300;

async function makeKey(t: TestApp, driver: TestUser): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/drivers/me/device-keys', headers: driver.headers, payload: {} });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key;
}

describe('positions in the same second', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'off', TRACKING_INTERVAL: `${INTERVAL_MS}ms` } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
  });
  after(async () => t.close());

  const osmand = (key: string, lat: number, lng: number, ts: number) =>
    t.app.inject({ method: 'GET', url: `/api/positions/osmand?id=${key}&lat=${lat}&lon=${lng}&timestamp=${ts}` });

  test('the second of two positions with the same whole-second timestamp reaches the live map stream and the database', async () => {
    const admin = await createUser(t, { role: 'ADMIN' });
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const key = await makeKey(t, driver);
    const ts = Math.floor(t.clock.nowMs() / 1000) - 2;
    assert.equal((await osmand(key, 12.5, 22.5, ts)).statusCode, 200);
    await t.services.live.flush();

    const stream = await SseClient.open(`${base}/api/admin/drivers/live/stream?bbox=${encodeURIComponent('22,12,23,13')}&access_token=${admin.token}`);
    try {
      await stream.until((c) => c.of('snapshot').length === 1);
      assert.deepEqual(stream.json<{ drivers: { location: unknown }[] }>('snapshot')[0]!.drivers.map((d) => d.location), [{ lat: 12.5, lng: 22.5 }]);
      // A few metres on, stamped with the same second.
      assert.equal((await osmand(key, 12.5001, 22.5001, ts)).statusCode, 200);
      assert.equal(t.services.live.index.get(driver.id)!.position!.lat, 12.5001);
      await stream.until((c) => c.of('positions').length === 1, INTERVAL_MS * 5);
      const moved = stream.json<{ drivers: { driverId: string; location: unknown }[] }>('positions')[0]!;
      assert.deepEqual(moved.drivers.map((d) => [d.driverId, d.location]), [[driver.id, { lat: 12.5001, lng: 22.5001 }]]);
    } finally {
      stream.close();
    }

    await t.services.live.flush();
    const row = await t.db.selectFrom('driver_profiles').select(['last_lat', 'last_lng', 'last_location_at']).where('user_id', '=', driver.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.last_lat, row.last_lng, new Date(row.last_location_at!).getTime()], [12.5001, 22.5001, ts * 1000]);
  });
});
