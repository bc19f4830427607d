// B14c: ledger postings alone (one job completion's transaction each: begin, post, commit), from
// BENCH_CONNECTIONS concurrent connections in a closed loop, by payment method. What it shows: the
// posting's PostgreSQL CPU, and whether one business taking every ACCOUNT completion costs more
// than 50 sharing them (CASH completions touch only the driver's row and the operator's appended
// deltas; ACCOUNT ones also append a delta for the paying business: until 2026-11-27 they locked
// and updated the business's row until the commit, and one business queued them all).
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/b14c-postings.ts
//
// Env: BENCH_SECONDS (per case, default 5), BENCH_CONNECTIONS (default 8), BENCH_DRIVERS (default
// 200), BENCH_BUSINESSES (default 1: the ACCOUNT payers share that many businesses round robin).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { jobCompletedEntries, type PaymentMethod } from '../src/modules/ledger/postings.js';
import { buildTestApp } from '../test/helpers/app.js';
import { createUser } from '../test/helpers/factories.js';
import { machine, processCpuUs } from './lib/harness.js';

if (!process.env.TEST_DATABASE_URL) throw new Error('set TEST_DATABASE_URL (a PostgreSQL server)');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const DRIVERS = Number(process.env.BENCH_DRIVERS ?? 200);
const BUSINESSES = Number(process.env.BENCH_BUSINESSES ?? 1);

const t = await buildTestApp({ env: { DISPATCH_MODE: 'off', LOG_LEVEL: 'warn' } });
try {
  const ledger = t.services.ledger;
  const drivers: string[] = [];
  const businesses: string[] = [];
  for (let i = 0; i < DRIVERS; i++) {
    const driver = await createUser(t, { role: 'DRIVER' });
    await ledger.account(t.db, 'KES', { kind: 'DRIVER', partyId: driver.id });
    drivers.push(driver.id);
  }
  for (let i = 0; i < BUSINESSES; i++) {
    const business = await createUser(t, { role: 'BUSINESS' });
    await ledger.account(t.db, 'KES', { kind: 'BUSINESS', partyId: business.id });
    businesses.push(business.id);
  }
  await sql`analyze`.execute(t.db);

  const backends = async () =>
    (
      await sql<{
        pid: number;
      }>`select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`.execute(
        t.db,
      )
    ).rows.map((r) => r.pid);

  const cpuOf = (pid: number) => {
    try {
      return processCpuUs(pid);
    } catch {
      return undefined; // exited since it was listed
    }
  };

  async function run(method: (i: number) => PaymentMethod, seconds: number) {
    const before = new Map(
      (await backends()).flatMap((pid) => {
        const us = cpuOf(pid);
        return us === undefined ? [] : [[pid, us] as const];
      }),
    );
    const latencies: number[] = [];
    const start = performance.now();
    const stop = start + seconds * 1000;
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < stop) {
          const i = next++;
          const started = performance.now();
          await t.db.transaction().execute((trx) =>
            ledger.post(trx, {
              sourceKey: `job:PACKAGE:${randomUUID()}:completed`,
              currency: 'KES',
              entries: jobCompletedEntries({
                driverId: drivers[i % DRIVERS]!,
                // Every other posting is ACCOUNT in the half case: i / 2 spreads those over all the businesses.
                payer: { kind: 'BUSINESS', partyId: businesses[Math.floor(i / 2) % BUSINESSES]! },
                paymentMethod: method(i),
                amount: 17_430,
                bookingFee: 1_000,
                commissionRate: 2_000,
              }),
            }),
          );
          latencies.push(performance.now() - started);
        }
      }),
    );
    const elapsed = (performance.now() - start) / 1000;
    const pgUs = (await backends()).reduce((sum, pid) => sum + (cpuOf(pid) ?? 0) - (before.get(pid) ?? 0), 0);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]! * 100) / 100;
    return {
      postings: latencies.length,
      perSecond: Math.round(latencies.length / elapsed),
      p50Ms: pct(50),
      p99Ms: pct(99),
      postgresCpuUsPerPosting: Math.round(pgUs / latencies.length),
    };
  }

  const cases: Record<string, (i: number) => PaymentMethod> = {
    cash: () => 'CASH',
    half: (i) => (i % 2 ? 'CASH' : 'ACCOUNT'),
    account: () => 'ACCOUNT',
  };
  const results: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(cases)) {
    await run(method, 1); // warm-up: connections, prepared statements, remembered accounts
    results[name] = await run(method, SECONDS);
  }
  const trial = await ledger.trialBalance();
  console.log(
    JSON.stringify(
      {
        bench: 'b14c-postings',
        connections: CONNECTIONS,
        drivers: DRIVERS,
        businesses: BUSINESSES,
        ...results,
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
