// Routes under concurrency (issue 44): 20 drivers on routes accepting batched offers and packages
// directly while reordering their routes. Afterwards: no job on two routes, no driver over
// maxActiveJobs or its vehicle's capacity, the driver's count equal to its active jobs, one open
// offer per job and per driver (section 13). PGlite, or the PostgreSQL server with TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, setDriverPosition, stop } from './packages-helpers.js';

const DRIVERS = 20;
const MAX = 4;

describe('routes: concurrency', () => {
  let t: TestApp;
  let business: TestUser;
  let admin: TestUser;
  const drivers: TestUser[] = [];

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'offer', LOG_LEVEL: 'warn' } });
    business = await createUser(t, { role: 'BUSINESS' });
    admin = await createUser(t, { role: 'ADMIN' });
    for (let i = 0; i < DRIVERS; i++) {
      const d = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
      await t.app.inject({
        method: 'PATCH',
        url: `/api/admin/drivers/${d.id}`,
        headers: admin.headers,
        payload: { maxActiveJobs: MAX },
      });
      await setDriverPosition(t, d.id, -1.2864 + i * 0.0005, 36.8172);
      drivers.push(d);
    }
  });
  after(async () => t.close());

  test('accepting batched offers and direct accepts while reordering keeps every invariant', async () => {
    const statuses = new Map<number, number>();
    const count = (code: number) => statuses.set(code, (statuses.get(code) ?? 0) + 1);
    const created: string[] = [];
    for (let round = 0; round < 4; round++) {
      const ids: string[] = [];
      for (let i = 0; i < DRIVERS; i++) {
        const res = await post(
          t,
          '/api/packages',
          business.headers,
          packageBody(business.countryId, {
            pickup: stop(-1.2864 + (i % 5) * 0.001, 36.8172),
            dropoff: stop(-1.295 + (i % 7) * 0.001, 36.81),
            // Heavy ones now and then: capacity (BIKE, 20 kg) must hold too.
            parcel: { description: 'Box', weightKg: i % 4 === 0 ? 9 : 2 },
          }),
        );
        assert.equal(res.statusCode, 201);
        ids.push(res.json().id);
      }
      created.push(...ids);
      await t.services.dispatch.idle();
      await Promise.all(
        drivers.map(async (d, k) => {
          const offers = (await get(t, '/api/drivers/me/offers', d.headers)).json().offers as { id: string }[];
          const work: Promise<{ statusCode: number }>[] = offers.map((o) =>
            post(t, `/api/offers/${o.id}/accept`, d.headers),
          );
          // A direct accept of someone else's offered package races the offer's driver.
          work.push(post(t, `/api/packages/${ids[(k + round + 1) % ids.length]}/accept`, d.headers));
          work.push(
            (async () => {
              const route = (await get(t, '/api/drivers/me/route', d.headers)).json();
              const pending = route.stops.filter((s: { status: string }) => s.status === 'PENDING');
              return t.app.inject({
                method: 'PUT',
                url: '/api/drivers/me/route/order',
                headers: d.headers,
                payload: { version: route.version, stopIds: pending.map((s: { id: string }) => s.id) },
              });
            })(),
          );
          for (const res of await Promise.all(work)) count(res.statusCode);
        }),
      );
      await t.services.dispatch.idle();
    }
    assert.deepEqual(
      [...statuses.keys()].filter((code) => code !== 200 && code !== 409),
      [],
      `only 200 and 409: ${JSON.stringify([...statuses])}`,
    );
    assert.ok((statuses.get(200) ?? 0) > DRIVERS, 'work was done');

    // Every driver: its count is its active jobs, within maxActiveJobs and capacity.
    const rows = await sql<{ user_id: string; active_jobs: number; held: number; kg: number }>`
      select d.user_id, d.active_jobs,
        (select count(*)::int from packages p where p.driver_id = d.user_id and p.status in ('ASSIGNED','PICKED_UP','IN_TRANSIT')) as held,
        (select coalesce(sum((p.parcel->>'weightKg')::float8), 0) from packages p
          where p.driver_id = d.user_id and p.status in ('ASSIGNED','PICKED_UP','IN_TRANSIT')) as kg
      from driver_profiles d where d.user_id in (${sql.join(drivers.map((d) => d.id))})`.execute(t.db);
    let held = 0;
    for (const r of rows.rows) {
      assert.equal(r.active_jobs, r.held, `driver ${r.user_id}: its count is its jobs`);
      assert.ok(r.held <= MAX, `driver ${r.user_id} holds ${r.held}`);
      assert.ok(r.held <= 6 && r.kg <= 20, `driver ${r.user_id}: ${r.held} parcels, ${r.kg} kg`);
      held += r.held;
    }
    assert.ok(held > DRIVERS, `batched: ${held} jobs held by ${DRIVERS} drivers`);

    // No job on two routes, and each route lists exactly its driver's jobs.
    const seen = new Map<string, string>();
    for (const d of drivers) {
      const route = (await get(t, '/api/drivers/me/route', d.headers)).json();
      for (const s of route.stops as { jobId: string }[]) {
        const other = seen.get(s.jobId);
        assert.ok(other === undefined || other === d.id, `job ${s.jobId} on two routes`);
        seen.set(s.jobId, d.id);
      }
    }
    for (const [jobId, driverId] of seen) {
      const row = await t.db
        .selectFrom('packages')
        .select(['driver_id', 'status'])
        .where('id', '=', jobId)
        .executeTakeFirstOrThrow();
      assert.equal(row.driver_id, driverId);
    }

    // Section 13: at most one open offer per job and per driver; an accepted job's offers are closed.
    const perJob =
      await sql`select job_id from dispatch_offers where state = 'OPEN' group by job_id having count(*) > 1`.execute(
        t.db,
      );
    const perDriver =
      await sql`select driver_id from dispatch_offers where state = 'OPEN' group by driver_id having count(*) > 1`.execute(
        t.db,
      );
    assert.deepEqual([perJob.rows, perDriver.rows], [[], []]);
    const openOnTaken = await sql`select o.id from dispatch_offers o join packages p on p.id = o.job_id
      where o.state = 'OPEN' and p.status <> 'PENDING'`.execute(t.db);
    assert.deepEqual(openOnTaken.rows, []);
    const accepted = await sql<{
      job_id: string;
    }>`select job_id from dispatch_offers where state = 'ACCEPTED' group by job_id having count(*) > 1`.execute(t.db);
    assert.deepEqual(accepted.rows, [], 'first accept wins: one accepted offer per job');
    assert.ok(created.length === 4 * DRIVERS);
  });
});
