// The app on a Redis Cluster of the test's own (three primaries, one replica each): the shared limits,
// revocation, the bus (sharded pub/sub) and the live driver index work across instances, and keep
// working after a primary fails over to its replica.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { buildTestApp, TEST_ENV, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createUser } from './helpers/factories.js';
import { redisClusterSkipReason, startRedisCluster, type RedisClusterHandle } from './helpers/redis-cluster.js';

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (ok(value)) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('REDIS_CLUSTER_NODES and redis+cluster:// URLs', () => {
  const load = (env: Record<string, string>) => loadConfig({ ...TEST_ENV, ...env });

  test('seeds from REDIS_CLUSTER_NODES, or from a redis+cluster:// URL with credentials', () => {
    assert.deepEqual(load({ REDIS_CLUSTER_NODES: 'r1:7000, 10.0.0.2:7001,[::1]:7002' }).redis.cluster, {
      nodes: [
        { host: 'r1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      username: undefined,
      password: undefined,
    });
    const fromUrl = load({ REDIS_URL: 'redis+cluster://app:p%40ss@r1:7000,r2:7000' });
    assert.deepEqual(fromUrl.redis.cluster, {
      nodes: [
        { host: 'r1', port: 7000 },
        { host: 'r2', port: 7000 },
      ],
      username: 'app',
      password: 'p@ss',
    });
    assert.equal(fromUrl.redis.url, undefined);
    assert.equal(load({ REDIS_URL: 'redis://r1:6379' }).redis.cluster, undefined);
  });

  test('bad lists, and both variables at once, are refused with the variable named', () => {
    for (const [env, message] of [
      [{ REDIS_CLUSTER_NODES: 'r1' }, /REDIS_CLUSTER_NODES must be/],
      [{ REDIS_CLUSTER_NODES: 'r1:70000' }, /REDIS_CLUSTER_NODES must be/],
      [{ REDIS_CLUSTER_NODES: 'r1:7000,' }, /REDIS_CLUSTER_NODES must be/],
      [{ REDIS_URL: 'redis+cluster://' }, /REDIS_URL must be redis\+cluster:/],
      [{ REDIS_URL: 'redis://r1:6379', REDIS_CLUSTER_NODES: 'r1:7000' }, /either REDIS_URL or REDIS_CLUSTER_NODES/],
    ] as const) {
      assert.throws(() => load(env), message, JSON.stringify(env));
    }
  });
});

describe('two instances on a Redis Cluster', { skip: redisClusterSkipReason }, () => {
  let cluster: RedisClusterHandle;
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  const prefix = `test:${randomUUID().slice(0, 8)}:`;

  before(async () => {
    cluster = await startRedisCluster();
    database = await createTestDatabase();
    const env = { REDIS_CLUSTER_NODES: cluster.seeds, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_LOGIN: '5/15m' };
    a = await buildTestApp({ database, env });
    b = await buildTestApp({ database, env, clock: a.clock });
  });

  after(async () => {
    await b?.close();
    await a?.close();
    await database?.close();
    await cluster?.close();
  });

  test('the clients are cluster clients', () => {
    assert.equal(a.deps.redis!.isCluster, true);
    assert.equal(a.deps.redisHealth!.up, true);
  });

  test('the login limit is counted once for both instances', async () => {
    const login = (t: TestApp) =>
      t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { identifier: 'n@example.com', password: 'p-p-p-p-p' },
        remoteAddress: '10.9.0.1',
      });
    for (let i = 0; i < 3; i++) assert.equal((await login(a)).statusCode, 401);
    for (let i = 0; i < 2; i++) assert.equal((await login(b)).statusCode, 401);
    assert.equal((await login(a)).statusCode, 429);
    assert.equal((await login(b)).statusCode, 429);
  });

  test('logout on one instance revokes the access token on the other (sharded pub/sub)', async () => {
    const user = await createUser(a);
    const row = await a.db
      .selectFrom('auth_sessions')
      .select('id')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const refreshToken = randomUUID();
    await a.db
      .updateTable('auth_sessions')
      .set({ refresh_token_hash: createHash('sha256').update(refreshToken).digest('hex') })
      .where('id', '=', row.id)
      .execute();
    const me = () => b.app.inject({ method: 'GET', url: '/api/auth/me', headers: user.headers });
    assert.equal((await me()).statusCode, 200);
    assert.equal(
      (await a.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refreshToken } })).statusCode,
      200,
    );
    await until(
      'B to refuse the token',
      async () => (await me()).statusCode,
      (s) => s === 401,
      2000,
    );
  });

  test('positions reported to one instance are found from the other, before and after a failover of their primary', async () => {
    const customer = await createUser(a, { role: 'CUSTOMER' });
    const query = { pickupLocation: { lat: 9.05, lng: 7.49 }, vehicleType: 'CAR', orderType: 'RIDE' };
    const ids = async (t: TestApp) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/matching/find-drivers',
          headers: customer.headers,
          payload: query,
        })
      )
        .json()
        .drivers.map((x: { driverId: string }) => x.driverId) as string[];
    const driver = await createUser(a, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
    const report = async (t: TestApp, lat: number) =>
      assert.equal(
        (
          await t.app.inject({
            method: 'POST',
            url: '/api/drivers/me/location',
            headers: driver.headers,
            payload: { lat, lng: 7.49 },
          })
        ).statusCode,
        204,
      );
    assert.equal(
      (
        await a.app.inject({
          method: 'POST',
          url: '/api/drivers/me/availability',
          headers: driver.headers,
          payload: { status: 'ONLINE' },
        })
      ).statusCode,
      200,
    );
    await report(a, 9.051);
    assert.deepEqual(
      await until(
        'B to see the driver',
        () => ids(b),
        (v) => v.length === 1,
      ),
      [driver.id],
    );
    const distance = async (t: TestApp) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/matching/find-drivers',
          headers: customer.headers,
          payload: query,
        })
      ).json().drivers[0]?.distanceMeters as number;
    const near = await distance(b);

    const moved = await cluster.failover(`${prefix}drivers:positions`);
    assert.notEqual(moved.from, moved.to);
    // Reported to A right after the failover: B sees it once A's write goes to the new primary.
    await report(a, 9.06);
    await until(
      'B to see the move',
      () => distance(b),
      (d) => d > near + 500,
      10_000,
    );
    await until(
      'both instances to count Redis as up again',
      async () => a.deps.redisHealth!.up && b.deps.redisHealth!.up,
      (v) => v,
      10_000,
    );
  });

  test('an event missed while the bus channel fails over is caught up on (resync), later ones flow again', async () => {
    const customer = await createUser(a, { role: 'CUSTOMER' });
    const query = { pickupLocation: { lat: -1.95, lng: 30.06 }, vehicleType: 'BIKE', orderType: 'RIDE' };
    const ids = async (t: TestApp) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/matching/find-drivers',
          headers: customer.headers,
          payload: query,
        })
      )
        .json()
        .drivers.map((x: { driverId: string }) => x.driverId) as string[];
    const driver = await createUser(a, { role: 'DRIVER', driver: { vehicleType: 'BIKE' } });
    const availability = (t: TestApp, status: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/drivers/me/availability',
        headers: driver.headers,
        payload: { status },
      });
    assert.equal((await availability(a, 'ONLINE')).statusCode, 200);
    assert.equal(
      (
        await a.app.inject({
          method: 'POST',
          url: '/api/drivers/me/location',
          headers: driver.headers,
          payload: { lat: -1.951, lng: 30.06 },
        })
      ).statusCode,
      204,
    );
    assert.deepEqual(
      await until(
        'B to see the driver',
        () => ids(b),
        (v) => v.length === 1,
      ),
      [driver.id],
    );

    // B notices that its subscription is gone; offline on A meanwhile: B must catch up on it. Awaited
    // together: a failover refused at once must fail the test as itself, not as an unhandled rejection.
    await Promise.all([
      cluster.failover(`${prefix}bus`),
      (async () => {
        await until(
          'B to notice the failover',
          async () => b.deps.redisHealth!.up,
          (up) => !up,
          10_000,
        );
        assert.equal((await availability(a, 'OFFLINE')).statusCode, 200);
      })(),
    ]);
    assert.deepEqual(
      await until(
        'B to drop the driver',
        () => ids(b),
        (v) => v.length === 0,
        10_000,
      ),
      [],
    );
    await until(
      'both instances to count Redis as up again',
      async () => a.deps.redisHealth!.up && b.deps.redisHealth!.up,
      (v) => v,
      10_000,
    );
    assert.equal((await availability(a, 'ONLINE')).statusCode, 200);
    assert.deepEqual(
      await until(
        'B to hear of it on the new primary',
        () => ids(b),
        (v) => v.length === 1,
        3000,
      ),
      [driver.id],
    );
  });

  test('a primary that crashes (SIGKILL): requests answer on fallbacks meanwhile, and all is shared again once its replica took over', async () => {
    const customer = await createUser(a, { role: 'CUSTOMER' });
    const query = { pickupLocation: { lat: 14.69, lng: -17.44 }, vehicleType: 'VAN', orderType: 'RIDE' };
    const ids = async (t: TestApp) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/matching/find-drivers',
          headers: customer.headers,
          payload: query,
        })
      )
        .json()
        .drivers.map((x: { driverId: string }) => x.driverId) as string[];
    const driver = await createUser(a, { role: 'DRIVER', driver: { vehicleType: 'VAN' } });
    assert.equal(
      (
        await a.app.inject({
          method: 'POST',
          url: '/api/drivers/me/availability',
          headers: driver.headers,
          payload: { status: 'ONLINE' },
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (
        await a.app.inject({
          method: 'POST',
          url: '/api/drivers/me/location',
          headers: driver.headers,
          payload: { lat: 14.691, lng: -17.44 },
        })
      ).statusCode,
      204,
    );
    assert.deepEqual(
      await until(
        'B to see the driver',
        () => ids(b),
        (v) => v.length === 1,
      ),
      [driver.id],
    );

    const crashed = cluster.crashPrimary(`${prefix}bus`);
    // While the cluster has no primary for the bus's slot, every request still answers, and fast.
    const slowest = { ms: 0 };
    const probe = (async () => {
      const end = Date.now() + 3000;
      while (Date.now() < end) {
        const started = performance.now();
        const res = await b.app.inject({ method: 'GET', url: '/api/auth/me', headers: customer.headers });
        slowest.ms = Math.max(slowest.ms, performance.now() - started);
        assert.equal(res.statusCode, 200);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await Promise.all([crashed, probe]);
    assert.ok(slowest.ms < 1500, `slowest answer ${Math.round(slowest.ms)} ms`);
    await until(
      'both instances to count Redis as up again',
      async () => a.deps.redisHealth!.up && b.deps.redisHealth!.up,
      (v) => v,
      15_000,
    );
    assert.equal(
      (
        await a.app.inject({
          method: 'POST',
          url: '/api/drivers/me/availability',
          headers: driver.headers,
          payload: { status: 'OFFLINE' },
        })
      ).statusCode,
      200,
    );
    assert.deepEqual(
      await until(
        'B to hear of it through the promoted replica',
        () => ids(b),
        (v) => v.length === 0,
        3000,
      ),
      [],
    );
  });
});
