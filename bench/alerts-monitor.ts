// The lateness monitor's cost (contract section 23, issue 43): N active packages (default 10,000),
// each with a driver whose position moves between turns as if reporting, on the PostgreSQL server.
// Times monitor turns: wall time and this process's CPU per turn, and what that is as a share of a
// core at SLA_INTERVAL (15 s). Prints one JSON object.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/alerts-monitor.ts
//
// Env: BENCH_JOBS (default 10000), BENCH_TURNS (default 10).
import { sql, type Kysely } from 'kysely';
import { AlertsRepository } from '../src/modules/alerts/alerts.repository.js';
import { buildTestApp } from '../test/helpers/app.js';
import { createUser } from '../test/helpers/factories.js';
import { packageBody, post } from '../test/packages-helpers.js';

process.env.TEST_DATABASE_URL ??= process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const JOBS = Number(process.env.BENCH_JOBS ?? 10_000);
const TURNS = Number(process.env.BENCH_TURNS ?? 10);
const INTERVAL_MS = 15_000;

/** Copies one row of `table` n times (g = 1..n), with the columns in `set` given as SQL over g. */
async function cloneRows(db: Kysely<any>, table: string, where: string, n: number, set: Record<string, string>) {
  const { rows } = await sql<{ column_name: string }>`
    select column_name from information_schema.columns
    where table_name = ${table} and table_schema = current_schema() and is_generated = 'NEVER' and identity_generation is null
    order by ordinal_position`.execute(db);
  const cols = rows.map((r) => r.column_name);
  const exprs = cols.map((c) => set[c] ?? `t.${c}`);
  await sql
    .raw(
      `insert into ${table} (${cols.join(', ')}) select ${exprs.join(', ')} from ${table} t, generate_series(1, ${n}) g where ${where}`,
    )
    .execute(db);
}

const t = await buildTestApp({ env: { SLA_MONITOR: 'false', DISPATCH_MODE: 'off', NODE_ENV: 'test' } });
try {
  const business = await createUser(t, { role: 'BUSINESS' });
  const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
  const created = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
  const template = created.json().id as string;
  const started = performance.now();
  // N drivers, each ONLINE near Nairobi, and N packages ASSIGNED to them (one each).
  await cloneRows(t.db, 'users', `t.id = '${driver.id}'`, JOBS, {
    id: `md5('d' || g)::uuid`,
    email: `'bench-driver-' || g || '@example.com'`,
    phone: `'+2547' || lpad(g::text, 8, '0')`,
  });
  await cloneRows(t.db, 'driver_profiles', `t.user_id = '${driver.id}'`, JOBS, {
    user_id: `md5('d' || g)::uuid`,
    last_lat: `-1.2864 + (g % 100) * 0.001`,
    last_lng: `36.8172 + (g / 100) * 0.001`,
    last_location_at: 'now()',
  });
  await cloneRows(t.db, 'packages', `t.id = '${template}'`, JOBS, {
    id: `md5('p' || g)::uuid`,
    status: `'IN_TRANSIT'`,
    driver_id: `md5('d' || g)::uuid`,
    tracking_token_hash: 'null',
  });
  await sql`analyze`.execute(t.db);
  const seedSeconds = (performance.now() - started) / 1000;

  const turns: { wallMs: number; cpuMs: number; raised: number }[] = [];
  for (let i = 0; i < TURNS; i++) {
    // Drivers report between turns: about half of them move 300 m (the watch's anchor moves).
    await sql`update driver_profiles set last_lat = last_lat + case when random() < 0.5 then 0.003 else 0 end,
      last_location_at = now() where user_id in (select driver_id from packages where status = 'IN_TRANSIT')`.execute(
      t.db,
    );
    t.clock.advance(INTERVAL_MS);
    const cpu = process.cpuUsage();
    const wall = performance.now();
    const raised = await t.services.alerts.monitor();
    const used = process.cpuUsage(cpu);
    turns.push({ wallMs: performance.now() - wall, cpuMs: (used.user + used.system) / 1000, raised: raised.length });
  }
  // The turn's one read alone (its share of the process CPU: parsing N rows).
  const reads: number[] = [];
  const repo = new AlertsRepository(t.db);
  for (let i = 0; i < 3; i++) {
    const cpu = process.cpuUsage();
    await repo.activeJobs(t.db);
    const used = process.cpuUsage(cpu);
    reads.push((used.user + used.system) / 1000);
  }
  const steady = turns.slice(1);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cpuMs = avg(steady.map((x) => x.cpuMs));
  console.log(
    JSON.stringify(
      {
        bench: 'alerts-monitor',
        jobs: JOBS,
        seedSeconds: Number(seedSeconds.toFixed(1)),
        firstTurn: turns[0],
        steadyTurns: steady.length,
        wallMsAvg: Number(avg(steady.map((x) => x.wallMs)).toFixed(1)),
        wallMsMax: Number(Math.max(...steady.map((x) => x.wallMs)).toFixed(1)),
        processCpuMsPerTurn: Number(cpuMs.toFixed(1)),
        processCoresAtSlaInterval: Number((cpuMs / INTERVAL_MS).toFixed(4)),
        readCpuMs: reads.map((x) => Number(x.toFixed(1))),
        alertsRaised: turns.reduce((a, x) => a + x.raised, 0),
      },
      null,
      2,
    ),
  );
} finally {
  await t.close();
}
