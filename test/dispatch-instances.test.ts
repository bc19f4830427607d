// Two instances on one PostgreSQL server and one Redis dispatching the same jobs at once: never two
// open offers for one job or for one driver (the partial unique indexes of migration 0009).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { packageBody, post, setDriverPosition, stop } from './packages-helpers.js';

describe('dispatch across two instances (PostgreSQL and Redis)', { skip: redisSkipReason }, () => {
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

  const violations = async () => {
    const { rows } = await sql<{ per_job: number; per_driver: number; open: number }>`
      select (select count(*) from (select job_id from dispatch_offers where state = 'OPEN' group by job_id having count(*) > 1) j)::int as per_job,
             (select count(*) from (select driver_id from dispatch_offers where state = 'OPEN' group by driver_id having count(*) > 1) d)::int as per_driver,
             (select count(*) from dispatch_offers where state = 'OPEN')::int as open`.execute(a.db);
    return rows[0]!;
  };

  test('both instances dispatch 30 jobs to 12 drivers at once, twice over: one open offer per job and per driver', async () => {
    const centre = { lat: 0.3, lng: 37.6 };
    const drivers = await Promise.all(
      Array.from({ length: 12 }, () => createUser(a, { role: 'DRIVER', driver: { availability: 'ONLINE' } })),
    );
    for (const [i, d] of drivers.entries()) {
      await setDriverPosition(a, d.id, centre.lat + i * 0.001, centre.lng);
      await b.services.live.reload(d.id);
    }
    const jobs = await Promise.all(
      Array.from({ length: 30 }, async (_, i) =>
        (
          await post(
            i % 2 ? a : b,
            '/api/packages',
            business.headers,
            packageBody(business.countryId, {
              pickup: stop(centre.lat + i * 0.0005, centre.lng),
              dropoff: stop(centre.lat, centre.lng + 0.02),
            }),
          )
        ).json(),
      ),
    );
    // Every job dispatched by both instances at once, besides the kicks that followed each 201.
    await Promise.all(
      jobs.flatMap((j) => [
        a.services.dispatch.dispatch('PACKAGE', j.id),
        b.services.dispatch.dispatch('PACKAGE', j.id),
      ]),
    );
    await Promise.all([a.services.dispatch.idle(), b.services.dispatch.idle()]);
    assert.deepEqual(await violations(), { per_job: 0, per_driver: 0, open: 12 });

    // Everyone declines (half on each instance): the next round races the same way.
    const open = (
      await sql<{
        id: string;
        driver_id: string;
      }>`select id, driver_id from dispatch_offers where state = 'OPEN'`.execute(a.db)
    ).rows;
    const byId = new Map(drivers.map((d) => [d.id, d]));
    await Promise.all(
      open.map((o, i) => post(i % 2 ? a : b, `/api/offers/${o.id}/decline`, byId.get(o.driver_id)!.headers)),
    );
    await Promise.all([
      a.services.dispatch.sweep(),
      b.services.dispatch.sweep(),
      ...jobs.map((j) => a.services.dispatch.dispatch('PACKAGE', j.id)),
    ]);
    await Promise.all([a.services.dispatch.idle(), b.services.dispatch.idle()]);
    assert.deepEqual(await violations(), { per_job: 0, per_driver: 0, open: 12 });
    const repeated = await sql<{
      n: number;
    }>`select count(*)::int as n from (select job_id, driver_id from dispatch_offers group by 1, 2 having count(*) > 1) r`.execute(
      a.db,
    );
    assert.equal(repeated.rows[0]!.n, 0, 'no job offered twice to one driver');
  });
});
