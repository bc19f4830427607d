// Two instances on one database and one Redis: a change on one is seen at once on the other.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import type { BusEvents } from '../src/shared/bus.js';
import { get, packageBody, post } from './packages-helpers.js';

describe('packages across two instances (Redis)', { skip: redisSkipReason }, () => {
  let a: TestApp;
  let b: TestApp;
  let business: TestUser;
  const prefix = `test:${randomBytes(6).toString('hex')}:`;

  before(async () => {
    a = await buildTestApp({ redis: true, redisKeyPrefix: prefix });
    b = await buildTestApp({ redis: true, redisKeyPrefix: prefix, database: a.database, clock: a.clock });
    business = await createUser(a, { role: 'BUSINESS' });
  });
  after(async () => {
    await b.close();
    await a.close();
    await deleteRedisKeys(prefix);
  });

  async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
    const end = Date.now() + withinMs;
    while (Date.now() < end) {
      if (await check()) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return check();
  }

  test('a status change on one instance reaches the other at once (read cache and driver busy state)', async () => {
    const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const jobEvents: BusEvents['driver.job'][] = [];
    b.deps.bus.subscribe('driver.job', (e) => jobEvents.push(e));
    const pkg = (await post(a, '/api/packages', business.headers, packageBody(business.countryId))).json();
    // B reads (and caches) the PENDING package, then A assigns it.
    assert.equal((await get(b, `/api/packages/${pkg.id}`, business.headers)).json().status, 'PENDING');
    assert.equal((await post(a, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
    // Well inside the one-second cache lifetime: only the invalidation message can explain it.
    assert.ok(
      await eventually(
        async () => (await get(b, `/api/packages/${pkg.id}`, business.headers)).json().status === 'ASSIGNED',
        500,
      ),
    );
    assert.ok(await eventually(async () => jobEvents.some((e) => e.jobId === pkg.id && e.busy), 500));
    await post(b, `/api/packages/${pkg.id}/cancel`, business.headers);
    assert.ok(await eventually(async () => jobEvents.some((e) => e.jobId === pkg.id && !e.busy), 500));
  });

  test('20 accepts spread over both instances: exactly one wins', async () => {
    const drivers = await Promise.all(
      Array.from({ length: 20 }, () => createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } })),
    );
    const pkg = (await post(a, '/api/packages', business.headers, packageBody(business.countryId))).json();
    const results = await Promise.all(
      drivers.map((d, i) => post(i % 2 ? a : b, `/api/packages/${pkg.id}/accept`, d.headers)),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, ...Array(19).fill(409)].sort());
    await post(a, `/api/packages/${pkg.id}/cancel`, business.headers);
  });
});
