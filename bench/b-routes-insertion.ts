// Routes (contract section 24, issue 44): dispatch's added cost of batching — one new package's
// cheapest insertion into 50 active routes. Two figures:
//   pure:   evaluateInsertion over 50 routes in memory (the straight matrix built per route included);
//   batcher: RouteBatcher.evaluate for 50 drivers on a route, as dispatch calls it (its three queries
//            for the 50 routes, then the 50 insertions), on the test database (PGlite, or the
//            PostgreSQL server with TEST_DATABASE_URL).
// Prints one JSON object: p50/p95/p99 in milliseconds of each.
//
//   npx tsx bench/b-routes-insertion.ts   (BENCH_ROUTES=50, BENCH_JOBS=4 per route, BENCH_RUNS=500)
import { sql } from 'kysely';
import { evaluateInsertion, RouteBatcher, type BatchJob, type RouteSnapshot } from '../src/modules/routes/batching.js';
import { stopId, type PlanStop } from '../src/modules/routes/route-plan.js';
import { RoutesRepository } from '../src/modules/routes/routes.repository.js';
import { buildTestApp } from '../test/helpers/app.js';
import { createUser } from '../test/helpers/factories.js';
import { packageBody, stop } from '../test/packages-helpers.js';
import { machine } from './lib/harness.js';

const ROUTES = Number(process.env.BENCH_ROUTES ?? 50);
const JOBS = Number(process.env.BENCH_JOBS ?? 4);
const RUNS = Number(process.env.BENCH_RUNS ?? 500);

const around = (spread: number) => ({
  lat: -1.29 + (Math.random() - 0.5) * spread,
  lng: 36.82 + (Math.random() - 0.5) * spread,
});
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 1000) / 1000;
};
const summary = (xs: number[]) => ({ p50: pct(xs, 50), p95: pct(xs, 95), p99: pct(xs, 99) });

// --- pure ------------------------------------------------------------------------------------
const now = Date.now();
const snapshots: RouteSnapshot[] = [];
for (let r = 0; r < ROUTES; r++) {
  const pending: PlanStop[] = [];
  for (let j = 0; j < JOBS; j++) {
    const jobId = `${r}-${j}`;
    // Every other drop-off promised within the next two hours.
    const end = j % 2 ? now + 2 * 3600_000 : null;
    pending.push({
      id: stopId(jobId, 'PICKUP'),
      jobId,
      kind: 'PICKUP',
      location: around(0.05),
      windowStart: null,
      windowEnd: null,
    });
    pending.push({
      id: stopId(jobId, 'DROPOFF'),
      jobId,
      kind: 'DROPOFF',
      location: around(0.1),
      windowStart: null,
      windowEnd: end,
    });
  }
  snapshots.push({
    vehicleType: 'BIKE',
    start: around(0.05),
    pending,
    activeJobs: JOBS,
    maxActiveJobs: JOBS + 1,
    parcels: JOBS,
    kg: JOBS,
    capacityParcels: 6,
    capacityKg: 20,
  });
}
const pure: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const job: BatchJob = {
    id: `new-${i}`,
    pickup: around(0.05),
    dropoff: around(0.1),
    pickupWindow: [null, null],
    dropoffWindow: [null, now + 3 * 3600_000],
    kg: 1,
  };
  const t0 = performance.now();
  for (const s of snapshots) evaluateInsertion(s, job, now, 480);
  pure.push(performance.now() - t0);
}

// --- through the batcher, with its queries ------------------------------------------------------
const t = await buildTestApp({ env: { DISPATCH_MODE: 'off', LOG_LEVEL: 'warn' } });
let batcher: number[] = [];
try {
  const business = await createUser(t, { role: 'BUSINESS' });
  const drivers: { id: string; position: { lat: number; lng: number } }[] = [];
  for (let r = 0; r < ROUTES; r++) {
    const d = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    await sql`update driver_profiles set max_active_jobs = ${JOBS + 1}, active_jobs = ${JOBS}, active_job_type = 'PACKAGE' where user_id = ${d.id}`.execute(
      t.db,
    );
    drivers.push({ id: d.id, position: around(0.05) });
    for (let j = 0; j < JOBS; j++) {
      const p = around(0.05);
      const q = around(0.1);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/packages',
        headers: business.headers,
        payload: packageBody(business.countryId, { pickup: stop(p.lat, p.lng), dropoff: stop(q.lat, q.lng) }),
      });
      if (res.statusCode !== 201) throw new Error(res.body);
      await sql`update packages set status = 'ASSIGNED', driver_id = ${d.id} where id = ${res.json().id}`.execute(t.db);
    }
  }
  const p = around(0.05);
  const q = around(0.1);
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/packages',
    headers: business.headers,
    payload: packageBody(business.countryId, { pickup: stop(p.lat, p.lng), dropoff: stop(q.lat, q.lng) }),
  });
  const jobId = created.json().id as string;
  const b = new RouteBatcher({ db: t.db, repo: new RoutesRepository(t.db), maxDetourMs: 480_000 });
  const times: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 200); i++) {
    const t0 = performance.now();
    const fits = await b.evaluate(jobId, drivers, Date.now());
    times.push(performance.now() - t0);
    if (fits.size !== ROUTES) throw new Error(`evaluated ${fits.size} routes`);
  }
  batcher = times.slice(10); // the first runs warm the plans up
} finally {
  await t.close();
}

console.log(
  JSON.stringify({
    bench: 'routes-insertion',
    machine: machine(),
    database: process.env.TEST_DATABASE_URL ? 'postgresql' : 'pglite',
    routes: ROUTES,
    jobsPerRoute: JOBS,
    pureMs: summary(pure),
    batcherMs: summary(batcher),
  }),
);
