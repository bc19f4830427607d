// Driver positions whatever carried them (contract section 19): two in the same whole second (OsmAnd
// sends seconds) keep the newer one everywhere: the live index, the live map's stream, the database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { SseClient } from './helpers/sse-client.js';

const INTERVAL_MS = 300;

async function makeKey(t: TestApp, driver: TestUser): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/drivers/me/device-keys',
    headers: driver.headers,
    payload: {},
  });
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

    const stream = await SseClient.open(
      `${base}/api/admin/drivers/live/stream?bbox=${encodeURIComponent('22,12,23,13')}&access_token=${admin.token}`,
    );
    try {
      await stream.until((c) => c.of('snapshot').length === 1);
      assert.deepEqual(
        stream.json<{ drivers: { location: unknown }[] }>('snapshot')[0]!.drivers.map((d) => d.location),
        [{ lat: 12.5, lng: 22.5 }],
      );
      // A few metres on, stamped with the same second.
      assert.equal((await osmand(key, 12.5001, 22.5001, ts)).statusCode, 200);
      assert.equal(t.services.live.index.get(driver.id)!.position!.lat, 12.5001);
      await stream.until((c) => c.of('positions').length === 1, INTERVAL_MS * 5);
      const moved = stream.json<{ drivers: { driverId: string; location: unknown }[] }>('positions')[0]!;
      assert.deepEqual(
        moved.drivers.map((d) => [d.driverId, d.location]),
        [[driver.id, { lat: 12.5001, lng: 22.5001 }]],
      );
    } finally {
      stream.close();
    }

    await t.services.live.flush();
    const row = await t.db
      .selectFrom('driver_profiles')
      .select(['last_lat', 'last_lng', 'last_location_at'])
      .where('user_id', '=', driver.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [row.last_lat, row.last_lng, new Date(row.last_location_at!).getTime()],
      [12.5001, 22.5001, ts * 1000],
    );
  });
});

describe('plausibility (MAX_PLAUSIBLE_SPEED, every source)', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'off', MAX_PLAUSIBLE_SPEED: '250' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `ws://127.0.0.1:${address.port}`;
  });
  after(async () => t.close());

  const NAIROBI = [-1.2921, 36.8219] as const;
  const LONDON = [51.5072, -0.1276] as const;
  const positionOf = (driverId: string) => {
    const p = t.services.live.index.get(driverId)?.position;
    return p && [p.lat, p.lng];
  };
  const implausible = async (source: string) => {
    const metric = await t.deps.metrics.registry.getSingleMetric('positions_implausible_total')?.get();
    return metric?.values.find((v) => v.labels.source === source)?.value ?? 0;
  };
  const osmand = (key: string, [lat, lng]: readonly [number, number], ts: number, extra = '') =>
    t.app.inject({
      method: 'GET',
      url: `/api/positions/osmand?id=${key}&lat=${lat}&lon=${lng}&timestamp=${ts}${extra}`,
    });

  test('OsmAnd: Nairobi, then (0, 0) and London within a second: answered 200, not applied, counted; three consistent positions recover', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const key = await makeKey(t, driver);
    const ts = Math.floor(t.clock.nowMs() / 1000) - 60;
    const before = await implausible('osmand');
    assert.equal((await osmand(key, NAIROBI, ts)).statusCode, 200);
    assert.equal((await osmand(key, [0, 0], ts)).statusCode, 200);
    assert.equal((await osmand(key, LONDON, ts + 1)).statusCode, 200);
    assert.deepEqual(positionOf(driver.id), [...NAIROBI]);
    assert.equal((await implausible('osmand')) - before, 2);
    // 150 m in the same second: 540 km/h; with 100 m of stated accuracy, 50 m in a second (180 km/h) is plausible.
    const near = [NAIROBI[0] + 150 / 111_195, NAIROBI[1]] as const;
    assert.equal((await osmand(key, near, ts + 2)).statusCode, 200);
    assert.deepEqual(positionOf(driver.id), [...NAIROBI]);
    assert.equal((await osmand(key, near, ts + 2, '&accuracy=100')).statusCode, 200);
    assert.deepEqual(positionOf(driver.id), [...near]);
    // The driver really is in London: the third consistent position there is accepted.
    for (const [i, applied] of [
      [0, false],
      [1, false],
      [2, true],
    ] as const) {
      const here = [LONDON[0] + i * 0.0001, LONDON[1]] as const;
      assert.equal((await osmand(key, here, ts + 10 + i)).statusCode, 200);
      assert.deepEqual(positionOf(driver.id), applied ? [...here] : [...near], `London ${i + 1}`);
    }
    assert.equal((await implausible('osmand')) - before, 5);
  });

  test('the same rule for POST /drivers/me/location and the driver WebSocket', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const http = await implausible('http');
    const post = (lat: number, lng: number) =>
      t.app.inject({ method: 'POST', url: '/api/drivers/me/location', headers: driver.headers, payload: { lat, lng } });
    assert.equal((await post(...NAIROBI)).statusCode, 204);
    t.clock.advance(1000);
    assert.equal((await post(...LONDON)).statusCode, 204);
    assert.deepEqual(positionOf(driver.id), [...NAIROBI]);
    assert.equal((await implausible('http')) - http, 1);

    const { default: WebSocket } = await import('ws');
    const ws = new WebSocket(`${base}/api/drivers/me/stream`, { headers: driver.headers });
    const inbox: unknown[] = [];
    ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
    await new Promise((resolve, reject) => (ws.on('open', resolve), ws.on('error', reject)));
    try {
      const websocket = await implausible('websocket');
      ws.send(JSON.stringify({ type: 'location', lat: 0, lng: 0 }));
      ws.send(JSON.stringify({ type: 'ping' }));
      await waitFor(() => inbox.length === 1);
      // No error: answered as accepted.
      assert.deepEqual(inbox, [{ type: 'pong' }]);
      assert.deepEqual(positionOf(driver.id), [...NAIROBI]);
      assert.equal((await implausible('websocket')) - websocket, 1);
      // A plausible step is applied.
      t.clock.advance(10_000);
      ws.send(JSON.stringify({ type: 'location', lat: NAIROBI[0] + 0.001, lng: NAIROBI[1] }));
      await waitFor(() => positionOf(driver.id)![0] === NAIROBI[0] + 0.001);
    } finally {
      ws.close();
    }
  });
});

async function waitFor(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
