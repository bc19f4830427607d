// Traccar Client positions (contract section 19): device keys, and the OsmAnd route in its three
// forms, through the same checks and pipeline as the driver WebSocket's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

const KNOT = 1852 / 3600;

async function makeKey(
  t: TestApp,
  driver: TestUser,
  name?: string,
): Promise<{ id: string; key: string; name: string; createdAt: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/drivers/me/device-keys',
    headers: driver.headers,
    payload: name === undefined ? {} : { name },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const osmand = (
  t: TestApp,
  query: string,
  init: { method?: 'GET' | 'POST'; payload?: string; headers?: Record<string, string>; ip?: string } = {},
) =>
  t.app.inject({
    method: init.method ?? 'GET',
    url: `/api/positions/osmand?${query}`,
    payload: init.payload,
    headers: init.headers,
    remoteAddress: init.ip,
  });

describe('Traccar Client positions (OsmAnd)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  const positionOf = (driverId: string) => t.services.live.index.get(driverId)?.position;

  test('device keys: made (shown once, 128+ bits, stored hashed), listed without keys, at most 3, revoked only by their owner', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const made = await makeKey(t, driver, 'My phone');
    assert.equal(made.name, 'My phone');
    assert.match(made.key, /^dk_[A-Za-z0-9_-]{32}$/);
    const stored = await t.db.selectFrom('device_keys').selectAll().where('id', '=', made.id).executeTakeFirstOrThrow();
    assert.notEqual(stored.key_hash, made.key);
    assert.ok(!JSON.stringify(stored).includes(made.key));
    const second = await makeKey(t, driver);
    assert.equal(second.name, 'Traccar Client');
    await makeKey(t, driver);
    const fourth = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/device-keys',
      headers: driver.headers,
      payload: {},
    });
    assert.equal(fourth.statusCode, 409);
    assert.deepEqual(fourth.json(), {
      statusCode: 409,
      error: 'Conflict',
      code: 'DEVICE_KEY_LIMIT',
      message: 'At most 3 device keys per driver: revoke one first',
    });

    const list = await t.app.inject({ method: 'GET', url: '/api/drivers/me/device-keys', headers: driver.headers });
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().items.length, 3);
    assert.deepEqual(Object.keys(list.json().items[0]).sort(), ['createdAt', 'id', 'lastUsedAt', 'name']);
    assert.ok(!list.body.includes(made.key));

    // Another driver's key is not found; the owner revokes it and may make another.
    const other = await createUser(t, { role: 'DRIVER' });
    const foreign = await t.app.inject({
      method: 'DELETE',
      url: `/api/drivers/me/device-keys/${made.id}`,
      headers: other.headers,
    });
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().code, 'DEVICE_KEY_NOT_FOUND');
    assert.equal(
      (await t.app.inject({ method: 'DELETE', url: `/api/drivers/me/device-keys/${made.id}`, headers: driver.headers }))
        .statusCode,
      204,
    );
    assert.equal(
      (await t.app.inject({ method: 'DELETE', url: `/api/drivers/me/device-keys/${made.id}`, headers: driver.headers }))
        .statusCode,
      404,
    );
    await makeKey(t, driver);

    // Not an approved driver: refused, like going online.
    const pending = await createUser(t, { role: 'DRIVER', status: 'PENDING_APPROVAL' });
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/drivers/me/device-keys',
          headers: pending.headers,
          payload: {},
        })
      ).statusCode,
      403,
    );
    const customer = await createUser(t, { role: 'CUSTOMER' });
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/drivers/me/device-keys', headers: customer.headers })).statusCode,
      403,
    );
    const badName = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/device-keys',
      headers: driver.headers,
      payload: { name: 'x', role: 'ADMIN' },
    });
    assert.equal(badName.statusCode, 400);
  });

  test('the query-string form: 200 with an empty body, the position in the live index (speed from knots)', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { key } = await makeKey(t, driver);
    const ts = Math.floor(t.clock.nowMs() / 1000) - 5;
    const res = await osmand(
      t,
      `id=${key}&lat=-1.2921&lon=36.8219&timestamp=${ts}&speed=10&bearing=90&accuracy=12&altitude=1600&batt=80`,
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, '');
    const p = positionOf(driver.id)!;
    assert.equal(p.lat, -1.2921);
    assert.equal(p.lng, 36.8219);
    assert.equal(p.heading, 90);
    assert.ok(Math.abs(p.speed! - 10 * KNOT) < 1e-9);
    assert.equal(p.at, ts * 1000);
    // POST with the same query (Traccar Client Android) works too; `deviceid` is the other name.
    const post = await osmand(t, `deviceid=${key}&lat=-1.2922&lon=36.8220&timestamp=${ts + 1}`, { method: 'POST' });
    assert.equal(post.statusCode, 200, post.body);
    assert.equal(positionOf(driver.id)!.lat, -1.2922);
    // It shows where the driver's own position shows.
    const me = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: driver.headers });
    assert.equal(me.json().location.lat, -1.2922);
  });

  test('the form-urlencoded body and the JSON body of newer clients', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { key } = await makeKey(t, driver);
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/positions/osmand',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `id=${encodeURIComponent(key)}&lat=10.5&lon=20.5&speed=0&timestamp=${encodeURIComponent('2020-01-01 00:00:00')}`,
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.equal(positionOf(driver.id)!.lat, 10.5);

    const at = new Date(t.clock.nowMs() - 1000).toISOString();
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/positions/osmand',
      payload: {
        device_id: key,
        location: {
          timestamp: at,
          coords: { latitude: 10.6, longitude: 20.6, speed: 4.5, heading: -1, accuracy: 8, altitude: 3 },
          is_moving: true,
          battery: { level: 0.5 },
        },
      },
    });
    assert.equal(json.statusCode, 200, json.body);
    assert.equal(json.body, '');
    const p = positionOf(driver.id)!;
    assert.deepEqual([p.lat, p.lng, p.speed, p.heading, p.at], [10.6, 20.6, 4.5, null, Date.parse(at)]);
  });

  test('unknown or missing key 401, invalid values 400 (checked like the WebSocket), a revoked key 401 at once', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { id, key } = await makeKey(t, driver);
    const unknown = await osmand(t, `id=dk_${'A'.repeat(32)}&lat=1&lon=1`);
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(unknown.json(), {
      statusCode: 401,
      error: 'Unauthorized',
      code: 'INVALID_DEVICE_KEY',
      message: 'Unknown device key',
    });
    assert.equal((await osmand(t, 'id=garbage&lat=1&lon=1')).statusCode, 401);
    assert.equal((await osmand(t, 'lat=1&lon=1')).json().code, 'MISSING_DEVICE_KEY');

    for (const [query, message] of [
      [`id=${key}&lat=91&lon=1`, 'position.lat must be <= 90'],
      [`id=${key}&lat=1&lon=181`, 'position.lng must be <= 180'],
      [`id=${key}&lat=abc&lon=1`, 'lat must be a number'],
      [`id=${key}&lon=1`, 'lat and lon are required'],
      [`id=${key}&lat=1&lon=1&timestamp=yesterday`, 'timestamp must be Unix seconds, milliseconds or an ISO 8601 date'],
      [`id=${key}&lat=1&lon=1&speed=1000`, 'position.speed must be <= 150'],
    ]) {
      const res = await osmand(t, query);
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json().message, message, query);
    }
    const badJson = await t.app.inject({
      method: 'POST',
      url: '/api/positions/osmand',
      payload: { device_id: key, location: { coords: { latitude: 'x', longitude: 1 } } },
    });
    assert.equal(badJson.statusCode, 400);
    assert.equal(badJson.json().message, 'location.coords.latitude must be a number');

    assert.equal((await osmand(t, `id=${key}&lat=1&lon=1`)).statusCode, 200);
    assert.equal(
      (await t.app.inject({ method: 'DELETE', url: `/api/drivers/me/device-keys/${id}`, headers: driver.headers }))
        .statusCode,
      204,
    );
    assert.equal((await osmand(t, `id=${key}&lat=1&lon=2`)).statusCode, 401);
    assert.equal(positionOf(driver.id)!.lng, 1);

    // A suspended driver's key stops too.
    const other = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const made = await makeKey(t, other);
    assert.equal((await osmand(t, `id=${made.key}&lat=1&lon=1`)).statusCode, 200);
    await t.db.updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', other.id).execute();
    t.deps.bus.publish('user.changed', { userId: other.id, status: 'SUSPENDED' });
    assert.equal((await osmand(t, `id=${made.key}&lat=1&lon=1`)).statusCode, 403);
  });

  test('limited per key (RATE_LIMIT_OSMAND), not per IP: outside the global limit', async () => {
    const limitedApp = await buildTestApp({
      database: t.database,
      env: { RATE_LIMIT_GLOBAL: '2/1m', RATE_LIMIT_OSMAND: '5/1m' },
    });
    try {
      await limits(limitedApp);
    } finally {
      await limitedApp.close();
    }
  });

  async function limits(t: TestApp) {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    // Made from another address: the global per-IP limit of 2 counts them.
    const make = async () =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/drivers/me/device-keys',
          headers: driver.headers,
          payload: {},
          remoteAddress: '192.0.2.1',
        })
      ).json();
    const a = await make();
    const b = await make();
    const ip = '203.0.113.9';
    for (let i = 0; i < 5; i += 1) {
      const res = await osmand(t, `id=${a.key}&lat=1&lon=1`, { ip });
      assert.equal(res.statusCode, 200, `request ${i + 1}: ${res.body}`);
      assert.equal(res.headers['x-ratelimit-limit'], '5');
    }
    const limited = await osmand(t, `id=${a.key}&lat=1&lon=1`, { ip });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    // The same IP, another key: its own count (and the global per-IP limit of 2 does not apply).
    assert.equal((await osmand(t, `id=${b.key}&lat=1&lon=1`, { ip })).statusCode, 200);
    // The same key from another IP: still limited.
    assert.equal((await osmand(t, `id=${a.key}&lat=1&lon=1`, { ip: '198.51.100.7' })).statusCode, 429);
    // Made-up keys count per IP against the global limit's numbers (2 here): beyond, refused before any
    // lookup, while a key known here (b, cached) still works from that address.
    const guesser = '203.0.113.50';
    const made = (i: number) => `dk_${String(i).padStart(32, 'Z')}`;
    assert.equal((await osmand(t, `id=${made(1)}&lat=1&lon=1`, { ip: guesser })).statusCode, 401);
    assert.equal((await osmand(t, `id=nonsense&lat=1&lon=1`, { ip: guesser })).statusCode, 401);
    const refused = await osmand(t, `id=${made(2)}&lat=1&lon=1`, { ip: guesser });
    assert.equal(refused.statusCode, 429);
    assert.match(refused.json().message, /^Too many unknown device keys from this address; retry in \d+ seconds$/);
    assert.equal((await osmand(t, `id=${b.key}&lat=1&lon=1`, { ip: guesser })).statusCode, 200);
    // The global limit still holds everywhere else for that IP.
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: ip })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: ip })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: ip })).statusCode, 429);
  }

  test('one address full of made-up keys (carrier-grade NAT) does not lock out the live keys behind it', async () => {
    const limited = await buildTestApp({ database: t.database, clock: t.clock, env: { RATE_LIMIT_GLOBAL: '100/15m' } });
    try {
      const driver = await createUser(limited, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
      const used = await makeKey(limited, driver);
      const nat = '100.64.0.1';
      assert.equal((await osmand(limited, `id=${used.key}&lat=1&lon=1`, { ip: nat })).statusCode, 200);
      for (let i = 0; i < 100; i += 1) {
        const res = await osmand(limited, `id=dk_${String(i).padStart(32, 'G')}&lat=1&lon=1`, { ip: nat });
        assert.equal(res.statusCode, 401, `unknown key ${i + 1}`);
      }
      const guess = await osmand(limited, `id=dk_${'H'.repeat(32)}&lat=1&lon=1`, { ip: nat });
      assert.equal(guess.statusCode, 429);
      // Until the global limit's 15-minute window ends (counted by the limiter in real time).
      assert.ok(
        Number(guess.headers['retry-after']) > 850 && Number(guess.headers['retry-after']) <= 900,
        String(guess.headers['retry-after']),
      );
      assert.equal((await osmand(limited, `id=${used.key}&lat=1&lon=1`, { ip: nat })).statusCode, 200);
      // Its cached lookup lapses after 60 s: still served (a live key is resolved whatever its address's state).
      limited.clock.advance(65_000);
      const later = await osmand(limited, `id=${used.key}&lat=1&lon=1`, { ip: nat });
      assert.equal(later.statusCode, 200, later.body);
      // A key made now and never used from there, too; a made-up one is still refused without a lookup.
      const fresh = await makeKey(limited, driver);
      assert.equal((await osmand(limited, `id=${fresh.key}&lat=1&lon=1`, { ip: nat })).statusCode, 200);
      assert.equal((await osmand(limited, `id=dk_${'J'.repeat(32)}&lat=1&lon=1`, { ip: nat })).statusCode, 429);
      // Revoked: an unknown key like any other.
      assert.equal(
        (
          await limited.app.inject({
            method: 'DELETE',
            url: `/api/drivers/me/device-keys/${fresh.id}`,
            headers: driver.headers,
          })
        ).statusCode,
        204,
      );
      assert.equal((await osmand(limited, `id=${fresh.key}&lat=1&lon=1`, { ip: nat })).statusCode, 429);
    } finally {
      t.clock.advance(-65_000);
      await limited.close();
    }
  });

  test('the same pipeline as the WebSocket: live index, tracking hook, an older position ignored, bad values refused alike', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { key } = await makeKey(t, driver);
    const seen: { driverId: string; lat: number }[] = [];
    const hub = t.services.trackingHub;
    const original = hub.position.bind(hub);
    hub.position = (driverId, position) => {
      seen.push({ driverId, lat: position.lat });
      original(driverId, position);
    };
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${address.port}/api/drivers/me/stream`, { headers: driver.headers });
      const inbox: Record<string, unknown>[] = [];
      ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
      await new Promise((r, j) => (ws.on('open', r), ws.on('error', j)));
      const now = t.clock.nowMs();
      ws.send(JSON.stringify({ type: 'location', lat: 5, lng: 5, recordedAt: new Date(now - 10_000).toISOString() }));
      ws.send(JSON.stringify({ type: 'location', lat: 95, lng: 5 }));
      await waitFor(() => positionOf(driver.id)?.lat === 5 && inbox.length === 1);
      assert.equal(inbox[0]!.message, 'message.lat must be <= 90');
      // Older than the WebSocket's: ignored (still 200), as an older report over the WebSocket would be.
      assert.equal(
        (await osmand(t, `id=${key}&lat=6&lon=6&timestamp=${Math.floor((now - 20_000) / 1000)}`)).statusCode,
        200,
      );
      assert.equal(positionOf(driver.id)!.lat, 5);
      const wrong = await osmand(t, `id=${key}&lat=95&lon=5`);
      assert.equal(wrong.json().message, 'position.lat must be <= 90');
      // Newer: applied, and heard by the tracking streams' hub like the WebSocket's.
      assert.equal((await osmand(t, `id=${key}&lat=7&lon=7&timestamp=${Math.floor(now / 1000)}`)).statusCode, 200);
      assert.equal(positionOf(driver.id)!.lat, 7);
      assert.deepEqual(
        seen.filter((s) => s.driverId === driver.id).map((s) => s.lat),
        [5, 7],
      );
      // The live map (answered from the live index) shows it.
      const admin = await createUser(t, { role: 'ADMIN' });
      const live = await t.app.inject({
        method: 'GET',
        url: `/api/admin/drivers/live?bbox=${encodeURIComponent('6,6,8,8')}`,
        headers: admin.headers,
      });
      assert.ok(live.json().drivers.some((d: { driverId: string }) => d.driverId === driver.id));
      ws.close();
    } finally {
      hub.position = original;
    }
  });

  test('the key is never logged: query, form or JSON, plain or encoded', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { key } = await makeKey(t, driver);
    const from = t.logLines.length;
    await osmand(t, `id=${key}&lat=1&lon=1`);
    await osmand(t, `deviceid=${key}&lat=1&lon=1`);
    await osmand(t, `%69d=${key}&lat=1&lon=1`);
    await osmand(t, `id=${key}&lat=95&lon=1`);
    await osmand(t, `ID=${key}&lat=1&lon=1`);
    await t.app.inject({
      method: 'POST',
      url: '/api/positions/osmand',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `id=${key}&lat=1&lon=1`,
    });
    await t.app.inject({
      method: 'POST',
      url: '/api/positions/osmand',
      payload: { device_id: key, location: { coords: { latitude: 1, longitude: 1 } } },
    });
    await t.app.inject({ method: 'POST', url: `/api/positions/osmand/extra?id=${key}` });
    await t.app.inject({
      method: 'POST',
      url: '/api/positions/osmand',
      headers: { 'content-type': 'application/json' },
      payload: `{"device_id":"${key}",`,
    });
    const lines = t.logLines.slice(from);
    assert.ok(lines.length >= 8, `${lines.length} lines`);
    const keyPart = key.slice(3);
    for (const line of lines) assert.ok(!line.includes(keyPart), line);
  });

  test('no query string is logged on the OsmAnd route: a key under a name the decoder does not read stays out of the logs too', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { key } = await makeKey(t, driver);
    const from = t.logLines.length;
    for (const query of [
      `id[]=${key}&lat=1&lon=1`,
      `id;x=1=${key}&lat=1&lon=1`,
      `lat=1&lon=1&device%5Bid%5D=${key}`,
      `x=${key}`,
    ]) {
      const res = await osmand(t, query);
      assert.equal(res.statusCode, 401, query);
      assert.equal(res.json().code, 'MISSING_DEVICE_KEY');
    }
    assert.equal((await osmand(t, `id=${key}&lat=1&lon=1`, { method: 'POST' })).statusCode, 200);
    const lines = t.logLines.slice(from).map((l) => JSON.parse(l) as { req?: { url: string } });
    const urls = lines.filter((l) => l.req).map((l) => l.req!.url);
    assert.deepEqual(urls, Array(5).fill('/api/positions/osmand'));
    for (const line of t.logLines.slice(from)) assert.ok(!line.includes(key.slice(3)), line);
  });

  test('a body over 16 KiB gets 413 naming that limit', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/positions/osmand',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `lat=1&lon=1&pad=${'x'.repeat(16 * 1024)}`,
    });
    assert.equal(res.statusCode, 413);
    assert.deepEqual(res.json(), {
      statusCode: 413,
      error: 'Payload Too Large',
      code: 'PAYLOAD_TOO_LARGE',
      message: 'Request body is larger than 16 KiB',
    });
    // Other routes keep the 1 MiB limit and its message.
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: `{"x":"${'x'.repeat(1024 * 1024)}"}`,
    });
    assert.equal(big.json().message, 'Request body is larger than 1 MiB');
  });
});

describe('Traccar Client positions across two instances (Redis)', { skip: redisSkipReason }, () => {
  let a: TestApp;
  let b: TestApp;
  const prefix = `test:osmand:${process.pid}:`;
  before(async () => {
    a = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env: { RATE_LIMIT_OSMAND: '4/1m' } });
    b = await buildTestApp({
      redis: true,
      redisKeyPrefix: prefix,
      database: a.database,
      clock: a.clock,
      env: { RATE_LIMIT_OSMAND: '4/1m' },
    });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await deleteRedisKeys(prefix);
  });

  test('a key revoked on one instance is refused by the other at once (its cached lookup dropped through the bus)', async () => {
    const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { id, key } = await makeKey(a, driver);
    assert.equal((await osmand(b, `id=${key}&lat=1&lon=1`)).statusCode, 200);
    assert.equal(
      (await a.app.inject({ method: 'DELETE', url: `/api/drivers/me/device-keys/${id}`, headers: driver.headers }))
        .statusCode,
      204,
    );
    // The bus carries it in milliseconds; long before the cached lookup (a minute) would expire.
    await waitFor(async () => (await osmand(b, `id=${key}&lat=1&lon=2`)).statusCode === 401, 1000);
  });

  test('the per-key limit is shared by the instances', async () => {
    const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { key } = await makeKey(a, driver);
    for (const t of [a, b, a, b]) assert.equal((await osmand(t, `id=${key}&lat=1&lon=1`)).statusCode, 200);
    assert.equal((await osmand(a, `id=${key}&lat=1&lon=1`)).statusCode, 429);
    assert.equal((await osmand(b, `id=${key}&lat=1&lon=1`)).statusCode, 429);
  });

  test('a live key made on one instance is served by another from an address full of made-up keys, and by an instance started later', async () => {
    const env = { RATE_LIMIT_GLOBAL: '100/15m' };
    const prefix2 = `test:osmand-nat:${process.pid}:`;
    const first = await buildTestApp({ redis: true, redisKeyPrefix: prefix2, database: a.database, env });
    const second = await buildTestApp({
      redis: true,
      redisKeyPrefix: prefix2,
      database: a.database,
      clock: first.clock,
      env,
    });
    let third: TestApp | undefined;
    try {
      const driver = await createUser(first, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
      const { key } = await makeKey(first, driver);
      const nat = '100.64.0.2';
      for (let i = 0; i < 100; i += 1)
        assert.equal(
          (await osmand(second, `id=dk_${String(i).padStart(32, 'K')}&lat=1&lon=1`, { ip: nat })).statusCode,
          401,
        );
      assert.equal((await osmand(second, `id=dk_${'L'.repeat(32)}&lat=1&lon=1`, { ip: nat })).statusCode, 429);
      // Never looked up on the second instance: it heard of the key through the bus.
      await waitFor(async () => (await osmand(second, `id=${key}&lat=1&lon=1`, { ip: nat })).statusCode === 200, 1000);
      // A third instance loads the live keys at start; the address's count is shared through Redis.
      third = await buildTestApp({
        redis: true,
        redisKeyPrefix: prefix2,
        database: a.database,
        clock: first.clock,
        env,
      });
      assert.equal((await osmand(third, `id=dk_${'M'.repeat(32)}&lat=1&lon=1`, { ip: nat })).statusCode, 401);
      assert.equal((await osmand(third, `id=dk_${'N'.repeat(32)}&lat=1&lon=1`, { ip: nat })).statusCode, 429);
      const res = await osmand(third, `id=${key}&lat=1&lon=1`, { ip: nat });
      assert.equal(res.statusCode, 200, res.body);
    } finally {
      await third?.close();
      await second.close();
      await first.close();
      await deleteRedisKeys(prefix2);
    }
  });

  test("a position sent to one instance reaches the other's live index", async () => {
    const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const { key } = await makeKey(a, driver);
    await b.services.live.ensure(driver.id);
    assert.equal((await osmand(a, `id=${key}&lat=3.5&lon=4.5`)).statusCode, 200);
    await waitFor(() => b.services.live.index.get(driver.id)?.position?.lat === 3.5, 2000);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
