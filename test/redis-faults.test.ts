// Redis faults on two instances sharing one database and a redis-server of this test's own: frozen
// (SIGSTOP) and killed. Requests keep answering quickly, limits hold, readiness says degraded, caches
// that rely on Redis for invalidation stop trusting old entries, and logs say each change once.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createUser } from './helpers/factories.js';
import { RedisServer, redisServerSkipReason } from './helpers/redis-server.js';
import { get, packageBody, post } from './packages-helpers.js';

const PREFIX = 'test:faults:';

/** The value of `promise` and how long it took; fails after `limitMs` instead of hanging the test. */
async function timed<T>(promise: Promise<T>, limitMs = 5000): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const value = await Promise.race([
    promise,
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${limitMs} ms`)), limitMs)),
    ),
  ]).finally(() => clearTimeout(timer));
  return { value, ms: performance.now() - started };
}

/** Polls until `ok`; returns how long it took (fails after `limitMs`). */
async function until(what: string, check: () => Promise<boolean> | boolean, limitMs = 5000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > limitMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return performance.now() - started;
}

const messages = (t: TestApp, from = 0) =>
  t.logLines
    .slice(from)
    .map((line) => JSON.parse(line) as { level: number; msg: string; failures?: Record<string, number> });

describe('Redis faults (on a redis-server of its own)', { skip: redisServerSkipReason }, () => {
  let server: RedisServer;
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  const env = (server: RedisServer) => ({
    REDIS_URL: server.url,
    REDIS_KEY_PREFIX: PREFIX,
    RATE_LIMIT_GLOBAL: '10000/15m',
    RATE_LIMIT_LOGIN: '3/15m',
  });

  before(async () => {
    server = await RedisServer.start();
    database = await createTestDatabase();
    a = await buildTestApp({ database, env: env(server) });
    b = await buildTestApp({ database, env: env(server), clock: a.clock });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await server?.close();
    await database?.close();
  });
  // Each test leaves Redis running and both instances seeing it.
  afterEach(async () => {
    server.thaw();
    await until(
      'both instances to see Redis again',
      async () => (await ready(a)).json().status === 'ok' && (await ready(b)).json().status === 'ok',
      15_000,
    );
  });

  const ready = (t: TestApp) => t.app.inject({ method: 'GET', url: '/health/ready' });
  const login = (t: TestApp, ip: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { identifier: 'n@example.com', password: 'p-p-p-p-p' },
      remoteAddress: ip,
    });

  test('a clean start logs nothing at error level and no lost Redis', () => {
    for (const t of [a, b]) {
      assert.deepEqual(
        messages(t).filter((m) => m.level >= 50 || /redis/i.test(m.msg)),
        [],
      );
    }
  });

  test('frozen Redis: requests answer within 1.5 s, limits hold per instance, ready is 200 degraded', async () => {
    server.freeze();
    const countries = await timed(a.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: '10.20.0.1' }));
    assert.equal(countries.value.statusCode, 200);
    assert.ok(countries.ms < 1500, `answered in ${Math.round(countries.ms)} ms`);
    for (let i = 1; i <= 3; i++) {
      const res = await timed(login(a, '10.20.0.2'));
      assert.equal(res.value.statusCode, 401, `login ${i}`);
      assert.ok(res.ms < 1500, `login ${i} answered in ${Math.round(res.ms)} ms`);
    }
    const limited = await timed(login(a, '10.20.0.2'));
    assert.equal(limited.value.statusCode, 429);
    assert.ok(Number(limited.value.headers['retry-after']) >= 1);

    await until('A to say degraded', async () => (await ready(a)).json().status === 'degraded');
    const degraded = await timed(ready(a));
    assert.ok(degraded.ms < 1500);
    assert.equal(degraded.value.statusCode, 200);
    assert.deepEqual(degraded.value.json(), { status: 'degraded', checks: { database: 'ok', redis: 'down' } });
    // B has nothing to ask Redis, but its heartbeat notices too.
    await until('B to say degraded', async () => (await ready(b)).json().status === 'degraded');

    server.thaw();
    await until('A to be ready again', async () => (await ready(a)).json().status === 'ok');
  });

  test('a revoked token is refused within 2 s while Redis is frozen', async () => {
    const user = await createUser(a);
    const session = await a.db
      .selectFrom('auth_sessions')
      .select('id')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const refreshToken = randomUUID();
    await a.db
      .updateTable('auth_sessions')
      .set({ refresh_token_hash: createHash('sha256').update(refreshToken).digest('hex') })
      .where('id', '=', session.id)
      .execute();
    const me = () => b.app.inject({ method: 'GET', url: '/api/auth/me', headers: user.headers });
    assert.equal((await me()).statusCode, 200, 'B has the session cached as live');

    server.freeze();
    assert.equal(
      (await timed(a.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refreshToken } }))).value
        .statusCode,
      200,
    );
    const ms = await until('B to refuse the revoked token', async () => (await me()).statusCode === 401, 5000);
    assert.ok(ms <= 2000, `refused after ${Math.round(ms)} ms`);
  });

  test('a package status change shows on the other instance within 2 s while Redis is frozen', async () => {
    const business = await createUser(a, { role: 'BUSINESS' });
    const pkg = (await post(a, '/api/packages', business.headers, packageBody(business.countryId))).json();
    // Without a driver B keeps it for 30 s, trusting invalidations.
    assert.equal((await get(b, `/api/packages/${pkg.id}`, business.headers)).json().status, 'PENDING');

    server.freeze();
    assert.equal((await timed(post(a, `/api/packages/${pkg.id}/cancel`, business.headers))).value.statusCode, 200);
    const ms = await until(
      'B to show CANCELLED',
      async () => (await get(b, `/api/packages/${pkg.id}`, business.headers)).json().status === 'CANCELLED',
    );
    assert.ok(ms <= 2000, `shown after ${Math.round(ms)} ms`);
  });

  test('killed and restarted Redis: fast answers, limits, one log line per change with counts', async () => {
    const from = [a.logLines.length, b.logLines.length];
    await server.kill();
    const countries = await timed(b.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: '10.21.0.1' }));
    assert.equal(countries.value.statusCode, 200);
    assert.ok(countries.ms < 1500);
    for (let i = 1; i <= 3; i++) assert.equal((await login(b, '10.21.0.2')).statusCode, 401);
    assert.equal((await login(b, '10.21.0.2')).statusCode, 429);
    await until('A to say degraded', async () => (await ready(a)).json().status === 'degraded');
    // Long enough for ioredis to retry many times and the heartbeat to fail many times.
    await new Promise((resolve) => setTimeout(resolve, 2000));

    await server.start();
    await until(
      'both to see Redis again',
      async () => (await ready(a)).json().status === 'ok' && (await ready(b)).json().status === 'ok',
      10_000,
    );
    assert.equal((await ready(a)).json().status, 'ok');
    for (const [i, t] of [a, b].entries()) {
      const logged = messages(t, from[i]);
      assert.deepEqual(
        logged.filter((m) => m.level >= 50),
        [],
        'nothing at error level',
      );
      assert.deepEqual(
        logged.filter((m) => m.level >= 40 || /redis/i.test(m.msg)).map((m) => m.msg),
        ['redis lost: running on in-process fallbacks', 'redis recovered'],
      );
      const recovered = logged.find((m) => m.msg === 'redis recovered')!;
      assert.ok(Object.values(recovered.failures!).reduce((x, y) => x + y, 0) > 1, JSON.stringify(recovered));
    }
  });

  test('while Redis is down, matching on one instance follows positions reported to the other (through PostgreSQL)', async () => {
    const driver = await createUser(a, { role: 'DRIVER', driver: { vehicleType: 'VAN', availability: 'ONLINE' } });
    const customer = await createUser(a);
    await server.kill();
    try {
      a.clock.advance(1000);
      const loc = await post(a, '/api/drivers/me/location', driver.headers, { lat: 30.05, lng: 31.24 });
      assert.equal(loc.statusCode, 204);
      const found = async () =>
        (
          await post(b, '/api/matching/find-drivers', customer.headers, {
            pickupLocation: { lat: 30.051, lng: 31.24 },
            vehicleType: 'VAN',
            orderType: 'RIDE',
          })
        )
          .json()
          .drivers.map((d: { driverId: string }) => d.driverId);
      // The write-behind (1 s) and B's reload while Redis is down (2 s).
      await until('B to match the driver', async () => (await found()).includes(driver.id), 6000);
    } finally {
      await server.start();
    }
  });

  test('positions recovered from Redis at start are written back to PostgreSQL', async () => {
    const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    // What an instance that stopped before its write-behind ran leaves behind: a position only in Redis.
    const at = a.clock.nowMs();
    const redis = new Redis(server.url);
    try {
      await redis.hset(`${PREFIX}drivers:positions`, driver.id, JSON.stringify([-1.29, 36.82, 90, 5, at]));
    } finally {
      redis.disconnect();
    }
    const c = await buildTestApp({ database, env: env(server), clock: a.clock });
    try {
      await until(
        'the position in PostgreSQL',
        async () => {
          const row = await a.db
            .selectFrom('driver_profiles')
            .select(['last_lat', 'last_location_at'])
            .where('user_id', '=', driver.id)
            .executeTakeFirstOrThrow();
          return row.last_lat === -1.29 && new Date(row.last_location_at!).getTime() === at;
        },
        5000,
      );
    } finally {
      await c.close();
    }
  });
});
