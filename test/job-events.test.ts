// One `job.changed` per status change, after commit, for packages and rides alike; each instance
// turns it into its own driver.job and driver.push, so a driver hears of a change once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/factories.js';
import type { BusEvents } from '../src/shared/bus.js';
import { packageBody, post, rideBody } from './packages-helpers.js';

describe('job.changed', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
  });
  after(async () => t.close());

  test('published once per change, for both kinds, with who was assigned and whether the job ended', async () => {
    const changes: BusEvents['job.changed'][] = [];
    const off = t.deps.bus.subscribe('job.changed', (e) => changes.push(e));
    try {
      const business = await createUser(t, { role: 'BUSINESS' });
      const customer = await createUser(t, { role: 'CUSTOMER' });
      const courier = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
      const chauffeur = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
      const pkg = (await post(t, '/api/packages', business.headers, packageBody(business.countryId))).json();
      const ride = (await post(t, '/api/rides', customer.headers, rideBody(customer.countryId))).json();
      assert.deepEqual(changes, [], 'creation is not a status change');

      assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, courier.headers)).statusCode, 200);
      assert.equal((await post(t, `/api/rides/${ride.id}/accept`, chauffeur.headers)).statusCode, 200);
      assert.equal((await post(t, `/api/packages/${pkg.id}/cancel`, business.headers, {})).statusCode, 200);
      assert.equal((await post(t, `/api/rides/${ride.id}/arrive`, chauffeur.headers)).statusCode, 200);
      assert.deepEqual(changes, [
        {
          jobType: 'PACKAGE',
          jobId: pkg.id,
          status: 'ASSIGNED',
          driverId: courier.id,
          actorId: courier.id,
          assigned: true,
          final: false,
        },
        {
          jobType: 'RIDE',
          jobId: ride.id,
          status: 'ACCEPTED',
          driverId: chauffeur.id,
          actorId: chauffeur.id,
          assigned: true,
          final: false,
        },
        {
          jobType: 'PACKAGE',
          jobId: pkg.id,
          status: 'CANCELLED',
          driverId: courier.id,
          actorId: business.id,
          assigned: false,
          final: true,
        },
        {
          jobType: 'RIDE',
          jobId: ride.id,
          status: 'ARRIVED',
          driverId: chauffeur.id,
          actorId: chauffeur.id,
          assigned: false,
          final: false,
        },
      ]);
      // A refused move announces nothing.
      assert.equal((await post(t, `/api/rides/${ride.id}/complete`, chauffeur.headers)).statusCode, 409);
      assert.equal(changes.length, 4);
    } finally {
      off();
    }
  });
});

describe('job.changed across two instances (Redis)', { skip: redisSkipReason }, () => {
  let a: TestApp;
  let b: TestApp;
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  before(async () => {
    a = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env: { DISPATCH_MODE: 'broadcast' } });
    b = await buildTestApp({
      redis: true,
      redisKeyPrefix: prefix,
      database: a.database,
      clock: a.clock,
      env: { DISPATCH_MODE: 'broadcast' },
    });
  });
  after(async () => {
    await b.close();
    await a.close();
    await deleteRedisKeys(prefix);
  });

  test('a ride accepted on one instance reaches the other once as driver.job and driver.push', async () => {
    const customer = await createUser(a, { role: 'CUSTOMER' });
    const driver = await createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    const jobs: BusEvents['driver.job'][] = [];
    const pushes: BusEvents['driver.push'][] = [];
    let marker: () => void;
    const markerSeen = new Promise<void>((resolve) => (marker = resolve));
    const offs = [
      b.deps.bus.subscribe('driver.job', (e) => jobs.push(e)),
      b.deps.bus.subscribe('driver.push', (e) => pushes.push(e)),
      b.deps.bus.subscribe('session.revoked', ({ sessionId }) => sessionId === 'marker' && marker()),
    ];
    try {
      const ride = (await post(a, '/api/rides', customer.headers, rideBody(customer.countryId))).json();
      assert.equal((await post(a, `/api/rides/${ride.id}/accept`, driver.headers)).statusCode, 200);
      // Messages from one instance arrive in order: once the marker is in, the change was handled.
      a.deps.bus.publish('session.revoked', { sessionId: 'marker' });
      await markerSeen;
      assert.deepEqual(jobs, [{ driverId: driver.id, busy: true, jobId: ride.id, jobType: 'RIDE' }]);
      assert.deepEqual(pushes, [
        { driverId: driver.id, message: { type: 'job.assigned', jobType: 'RIDE', jobId: ride.id, status: 'ACCEPTED' } },
      ]);
    } finally {
      for (const off of offs) off();
    }
  });
});
