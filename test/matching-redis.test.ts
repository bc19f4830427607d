import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createUser } from './helpers/factories.js';

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const value = await fn();
    if (ok(value)) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Two app instances on one database and one Redis key prefix, a customer, and `ids(t)`: the drivers
 * instance t finds for `query`. Runs `body`, then closes everything.
 */
async function withTwoInstances(
  query: Record<string, unknown>,
  body: (ctx: {
    a: TestApp;
    b: TestApp;
    database: TestDatabase;
    prefix: string;
    apps: TestApp[];
    ids: (t: TestApp) => Promise<string[]>;
  }) => Promise<void>,
) {
  const database = await createTestDatabase();
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const apps: TestApp[] = [];
  try {
    const a = await buildTestApp({ database, redis: true, redisKeyPrefix: prefix });
    apps.push(a);
    const b = await buildTestApp({ database, redis: true, redisKeyPrefix: prefix, clock: a.clock });
    apps.push(b);
    const customer = await createUser(a, { role: 'CUSTOMER' });
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
    await body({ a, b, database, prefix, apps, ids });
  } finally {
    for (const t of apps.reverse()) await t.close();
    await deleteRedisKeys(prefix);
    await database.close();
  }
}

describe('two instances on one Redis', { skip: redisSkipReason }, () => {
  test('return the same drivers: positions and availability are shared, and a new instance warms up from Redis', async () => {
    await withTwoInstances(
      { pickupLocation: { lat: 6.45, lng: 3.39 }, vehicleType: 'CAR', orderType: 'RIDE' },
      async ({ a, b, database, prefix, apps, ids }) => {
        const d1 = await createUser(a, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
        const d2 = await createUser(a, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
        // d1 talks to instance A, d2 to instance B.
        for (const [t, d, lat] of [
          [a, d1, 6.451],
          [b, d2, 6.46],
        ] as const) {
          const on = await t.app.inject({
            method: 'POST',
            url: '/api/drivers/me/availability',
            headers: d.headers,
            payload: { status: 'ONLINE' },
          });
          assert.equal(on.statusCode, 200);
          const loc = await t.app.inject({
            method: 'POST',
            url: '/api/drivers/me/location',
            headers: d.headers,
            payload: { lat, lng: 3.39 },
          });
          assert.equal(loc.statusCode, 204);
        }
        const expected = [d1.id, d2.id];
        assert.deepEqual(
          await until(
            'A to see both',
            () => ids(a),
            (v) => v.length === 2,
          ),
          expected,
        );
        assert.deepEqual(
          await until(
            'B to see both',
            () => ids(b),
            (v) => v.length === 2,
          ),
          expected,
        );

        // d1 moves (on A) beyond d2; d2 goes offline (on B): both instances follow.
        await a.app.inject({
          method: 'POST',
          url: '/api/drivers/me/location',
          headers: d1.headers,
          payload: { lat: 6.47, lng: 3.39 },
        });
        assert.deepEqual(
          await until(
            'B to see the move',
            () => ids(b),
            (v) => v[0] === d2.id,
          ),
          [d2.id, d1.id],
        );
        await b.app.inject({
          method: 'POST',
          url: '/api/drivers/me/availability',
          headers: d2.headers,
          payload: { status: 'OFFLINE' },
        });
        assert.deepEqual(
          await until(
            'A to see d2 offline',
            () => ids(a),
            (v) => v.length === 1,
          ),
          [d1.id],
        );
        assert.deepEqual(await ids(b), [d1.id]);

        // A third instance starting now gets the positions from Redis, before the write-behind has run.
        const c = await buildTestApp({ database, redis: true, redisKeyPrefix: prefix, clock: a.clock });
        apps.push(c);
        assert.deepEqual(await ids(c), [d1.id]);
        const me = await c.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d1.headers });
        assert.equal(me.json().location.lat, 6.47);
      },
    );
  });

  test('an instance whose bus connection dropped reads the drivers again when it is back', async () => {
    await withTwoInstances(
      { pickupLocation: { lat: -33.92, lng: 18.42 }, vehicleType: 'VAN', orderType: 'RIDE' },
      async ({ a, b, ids }) => {
        const d = await createUser(a, { role: 'DRIVER', driver: { vehicleType: 'VAN' } });
        assert.equal(
          (
            await a.app.inject({
              method: 'POST',
              url: '/api/drivers/me/availability',
              headers: d.headers,
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
              headers: d.headers,
              payload: { lat: -33.921, lng: 18.42 },
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
          [d.id],
        );

        // B's bus connection drops; meanwhile the driver goes OFFLINE on A, and B misses the event.
        const subscriber = (b.deps.bus as unknown as { subscription: { connection: import('ioredis').Redis } })
          .subscription.connection;
        subscriber.disconnect();
        assert.equal(
          (
            await a.app.inject({
              method: 'POST',
              url: '/api/drivers/me/availability',
              headers: d.headers,
              payload: { status: 'OFFLINE' },
            })
          ).statusCode,
          200,
        );
        await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual(await ids(b), [d.id], 'B missed the change while it was away');

        await subscriber.connect();
        assert.deepEqual(
          await until(
            'B to read the drivers again',
            () => ids(b),
            (v) => v.length === 0,
          ),
          [],
        );
      },
    );
  });
});
