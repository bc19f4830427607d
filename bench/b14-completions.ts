// B14: package completions (POST /packages/:id/deliver) at a target rate with the ledger booking
// each one in the status change's transaction, against the same completions without the ledger,
// on the PostgreSQL server. Prints one JSON object: achieved rate, latency p50/p99 of the
// completing request, and the process CPU per request for each phase.
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/b14-completions.ts
//
// Env: BENCH_RATE (completions/s, default 500), BENCH_SECONDS (per phase, default 4), BENCH_COLD=1.
// The drivers are warmed up first, as drivers who have worked before are: each has made a request
// (its session is in the instance's cache), is in the live index (as an online driver reporting
// positions is) and has its ledger account (opened by its first job). BENCH_COLD=1 skips that: every
// completion then also reads its session, reloads its driver and opens the driver's account.
// In-process: requests go through light-my-request (app.inject), so the CPU figure is the server's
// work plus the injector's (the same in both phases: the difference is the ledger's). The packages
// are created through POST /packages and put IN_TRANSIT with their drivers by SQL (the setup is
// not measured). A throwaway database (buildTestApp on the server) is dropped at the end.
import { sql } from 'kysely';
import type { JobMoneyHook } from '../src/modules/jobs/job-money.js';
import { buildTestApp } from '../test/helpers/app.js';
import { createUser, type TestUser } from '../test/helpers/factories.js';
import { packageBody } from '../test/packages-helpers.js';
import { machine, processCpuUs } from './lib/harness.js';

if (!process.env.TEST_DATABASE_URL)
  throw new Error('set TEST_DATABASE_URL (a PostgreSQL server: the figure is for the server)');
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const PER_PHASE = Math.round(RATE * SECONDS);

const t = await buildTestApp({ env: { DISPATCH_MODE: 'off', LOG_LEVEL: 'warn' } });
try {
  const business = await createUser(t, { role: 'BUSINESS' });
  const drivers: TestUser[] = [];
  for (let i = 0; i < PER_PHASE; i++)
    drivers.push(await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } }));
  const cold = process.env.BENCH_COLD === '1';
  if (!cold) {
    for (const driver of drivers) {
      const me = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: driver.headers });
      if (me.statusCode !== 200) throw new Error(me.body);
      await t.services.live.ensure(driver.id);
      await t.services.ledger.account(t.db, 'KES', { kind: 'DRIVER', partyId: driver.id });
    }
  }

  /** `count` packages (at most one per driver), each IN_TRANSIT with its own driver (half CASH, half ACCOUNT). */
  async function prepare(count = PER_PHASE): Promise<{ id: string; driver: TestUser }[]> {
    const jobs: { id: string; driver: TestUser }[] = [];
    for (let i = 0; i < count; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/packages',
        headers: business.headers,
        payload: packageBody(business.countryId, { paymentMethod: i % 2 ? 'CASH' : 'ACCOUNT' }),
      });
      if (res.statusCode !== 201) throw new Error(res.body);
      jobs.push({ id: res.json().id, driver: drivers[i]! });
    }
    for (const job of jobs) {
      await sql`update packages set status = 'IN_TRANSIT', driver_id = ${job.driver.id} where id = ${job.id}`.execute(
        t.db,
      );
      await sql`update driver_profiles set active_job_type = 'PACKAGE', active_job_id = ${job.id} where user_id = ${job.driver.id}`.execute(
        t.db,
      );
    }
    await sql`analyze`.execute(t.db);
    return jobs;
  }

  /** Fires the deliveries open-loop at RATE a second; each request's latency from its scheduled start. */
  async function phase(jobs: { id: string; driver: TestUser }[]) {
    const latencies: number[] = [];
    let errors = 0;
    const errorSamples = new Map<string, number>();
    // The PostgreSQL backends serving this database (its pool's connections): their CPU too.
    // (A backend that appears during the phase counts from 0; one that exits during it is lost.)
    const backendCpu = async () => {
      const pids = (
        await sql<{
          pid: number;
        }>`select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`.execute(
          t.db,
        )
      ).rows.map((r) => r.pid);
      return new Map(
        pids.flatMap((pid) => {
          try {
            return [[pid, processCpuUs(pid)] as const];
          } catch {
            return [];
          }
        }),
      );
    };
    const pgBefore = await backendCpu();
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(
      jobs.map(async (job, i) => {
        const due = start + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const res = await t.app.inject({
          method: 'POST',
          url: `/api/packages/${job.id}/deliver`,
          headers: job.driver.headers,
          payload: {},
        });
        latencies.push(performance.now() - due);
        if (res.statusCode !== 200) {
          errors++;
          const key = `${res.statusCode} ${res.json().code ?? ''}`;
          errorSamples.set(key, (errorSamples.get(key) ?? 0) + 1);
        }
      }),
    );
    const elapsed = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    const pgAfter = await backendCpu();
    const pgUsed = [...pgAfter].reduce((sum, [pid, us]) => sum + us - (pgBefore.get(pid) ?? 0), 0);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]! * 10) / 10;
    return {
      requests: jobs.length,
      errors,
      errorsByStatus: Object.fromEntries(errorSamples),
      achievedPerSecond: Math.round(jobs.length / elapsed),
      p50Ms: pct(50),
      p99Ms: pct(99),
      cpuUsPerRequest: Math.round((used.user + used.system) / jobs.length),
      postgresCpuUsPerRequest: Math.round(pgUsed / jobs.length),
    };
  }

  const lifecycle = (t.services.packages as unknown as { lifecycle: { deps: { money?: JobMoneyHook } } }).lifecycle;
  const money = lifecycle.deps.money;

  // Without the ledger first (the money hook taken out), then with it. Before each, a warm-up round
  // of one second at the same rate, not counted: the first completions of a phase would otherwise
  // measure the pool opening connections, each connection preparing its statements and V8 compiling
  // the path (those ~100 ms were the whole p99 before the warm-up was added).
  const warmUp = async () => void (await phase(await prepare(Math.min(RATE, PER_PHASE))));
  lifecycle.deps.money = undefined;
  await warmUp();
  const without = await phase(await prepare());
  lifecycle.deps.money = money;
  await warmUp();
  const withLedger = await phase(await prepare());
  const booked = await sql<{
    n: number;
  }>`select count(*)::int as n from ledger_transactions where source_key like 'job:PACKAGE:%:completed'`.execute(t.db);
  const trial = await t.services.ledger.trialBalance();
  console.log(
    JSON.stringify(
      {
        bench: 'b14-completions',
        targetPerSecond: RATE,
        drivers: cold
          ? 'cold (first request, not in the live index, no ledger account)'
          : 'warm (session cached, in the live index, ledger account open)',
        perPhase: PER_PHASE,
        withoutLedger: without,
        withLedger,
        ledgerTransactionsBookedWithWarmUp: booked.rows[0]!.n,
        trialBalance: trial,
        machine: machine(),
      },
      null,
      2,
    ),
  );
} finally {
  await t.close();
}
