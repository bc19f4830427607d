// B17 (issue 41): a package's driver steps — accept, pickup, start, deliver with the ledger — over
// HTTP at a fixed rate, ours (the app's bench server, bench/lib/server.ts, DISPATCH_MODE=off, each
// step sent with an Idempotency-Key as the apps send them) beside the peer (bench/peer-write-path.ts:
// Fastify + pg, each step one hand-written statement, no key), alternated: ours, peer, ours, peer.
// Each round every driver gets one package (created through our POST /packages, not measured); the
// round's steps are sent step by step (all accepts at RATE, then all pickups...), open loop, each
// latency from its scheduled time; the serving process's CPU is read from /proc, PostgreSQL's from
// its client backends of the bench database. The first round of each server warms it (connections,
// prepared statements, JIT, the ledger accounts each process remembers) and is not reported.
//
//   createdb -h 127.0.0.1 -U postgres bench_h41   # once
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_h41 npx tsx bench/b17-package-life.ts
//
// Env: BENCH_RATE (steps/s of each kind, default 150), BENCH_DRIVERS (packages a round, default 750),
// BENCH_ROUNDS (measured rounds per server, default 2), BENCH_PROFILE=dir (CPU profile of our server).
import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { packageBody } from '../test/packages-helpers.js';
import { machine, processCpuUs, startServer } from './lib/harness.js';

const DB_URL = process.env.BENCH_DATABASE_URL;
if (!DB_URL) throw new Error('set BENCH_DATABASE_URL (a PostgreSQL database for the bench)');
const RATE = Number(process.env.BENCH_RATE ?? 150);
const DRIVERS = Number(process.env.BENCH_DRIVERS ?? 750);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECRET = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
const STEPS = ['accept', 'pickup', 'start', 'deliver'] as const;
type Step = (typeof STEPS)[number];
const here = path.dirname(fileURLToPath(import.meta.url));

// The bench database's own: what the last run left that the server's re-seeding of the bench
// accounts would trip on (ledger accounts and webhook endpoints refer to them).
{
  const cleanup = new pg.Client({ connectionString: DB_URL });
  await cleanup.connect();
  if ((await cleanup.query(`select to_regclass('ledger_accounts') is not null as ok`)).rows[0].ok)
    await cleanup.query(
      'truncate ledger_entries, ledger_transactions, ledger_balance_deltas, ledger_accounts, webhook_deliveries, webhook_endpoints cascade',
    );
  await cleanup.end();
}
const ours = await startServer('app', {
  BENCH_DRIVERS: String(DRIVERS),
  BENCH_SESSIONS: String(DRIVERS),
  DISPATCH_MODE: 'off',
});
const config = loadConfig({ ...process.env, JWT_SECRET: SECRET, NODE_ENV: 'bench' });
const peerChild = fork(path.join(here, 'peer-write-path.ts'), [], {
  execArgv: ['--import', 'tsx'],
  env: {
    ...process.env,
    PEER_DATABASE_URL: DB_URL,
    PEER_JWT_SECRET: SECRET,
    PEER_JWT_ISSUER: config.auth.jwtIssuer,
    PEER_JWT_AUDIENCE: config.auth.jwtAudience,
  },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const peer = await new Promise<{ port: number; pid: number }>((resolve) =>
  peerChild.on('message', (m: any) => m.type === 'ready' && resolve(m)),
);
const sqlPool = new pg.Pool({ connectionString: DB_URL, max: 2 });
const client = (port: number) => new Pool(`http://127.0.0.1:${port}`, { connections: 100, pipelining: 1 });
const oursHttp = client(ours.port);
const peerHttp = client(peer.port);

async function send(http: Pool, method: 'GET' | 'POST', url: string, token: string, body?: unknown, key?: string) {
  const res = await http.request({
    method,
    path: url,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  return { status: res.statusCode, text };
}

try {
  const drivers = (ours.info.auth as { driverId: string; token: string }[]).slice(0, DRIVERS);
  const business = ours.info.businessToken as string;
  const countryId = ours.info.countryId as string;
  const vehicle = new Map(
    (
      await sqlPool.query<{ user_id: string; vehicle_type: string }>(
        'select user_id, vehicle_type from driver_profiles where user_id = any($1::uuid[])',
        [drivers.map((d) => d.driverId)],
      )
    ).rows.map((r) => [r.user_id, r.vehicle_type]),
  );
  // One webhook endpoint (each event writes one outbox row; no worker runs: the rows wait).
  const hook = await send(oursHttp, 'POST', '/api/webhooks', business, { url: 'https://hooks.example.com/in' });
  if (hook.status !== 201) throw new Error(hook.text);
  // The drivers' and the business's ledger accounts, opened as a driver's first job would.
  await sqlPool.query(
    `insert into ledger_accounts (id, kind, party_id, currency, created_at, updated_at)
     select gen_random_uuid(), case when u.role = 'DRIVER' then 'DRIVER' else 'BUSINESS' end, u.id, 'KES', now(), now()
     from users u where u.email like 'bench-%' and u.role in ('DRIVER', 'BUSINESS')
     on conflict do nothing`,
  );
  await sqlPool.query(
    `insert into ledger_accounts (id, kind, party_id, currency, created_at, updated_at)
     select gen_random_uuid(), k, null, 'KES', now(), now() from unnest(array['OPERATOR_COMMISSION', 'OPERATOR_BOOKING_FEES']) k
     on conflict do nothing`,
  );
  let serial = 0;

  /** A round's packages: one per driver, PENDING, its vehicle type the driver's. */
  async function prepare() {
    const jobs: { id: string; driver: (typeof drivers)[number] }[] = [];
    for (const driver of drivers) {
      const res = await send(
        oursHttp,
        'POST',
        '/api/packages',
        business,
        packageBody(countryId, {
          vehicleType: vehicle.get(driver.driverId),
          paymentMethod: serial++ % 2 ? 'CASH' : 'ACCOUNT',
        }),
      );
      if (res.status !== 201) throw new Error(res.text);
      jobs.push({ id: JSON.parse(res.text).id, driver });
    }
    await sqlPool.query('analyze packages, driver_profiles, package_status_history');
    return jobs;
  }

  const backends = async () =>
    new Map(
      (
        await sqlPool.query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'
           and pid <> pg_backend_pid()`,
        )
      ).rows.flatMap(({ pid }) => {
        try {
          return [[pid, processCpuUs(pid)] as const];
        } catch {
          return [];
        }
      }),
    );

  /** One step for every job at RATE, open loop. */
  async function phase(who: 'ours' | 'peer', step: Step, jobs: Awaited<ReturnType<typeof prepare>>) {
    const http = who === 'ours' ? oursHttp : peerHttp;
    const pid = who === 'ours' ? ours.child.pid! : peer.pid;
    const latencies: number[] = [];
    const errors = new Map<string, number>();
    const pgBefore = await backends();
    const cpuBefore = processCpuUs(pid);
    const start = performance.now();
    await Promise.all(
      jobs.map(async (job, i) => {
        const due = start + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const body = step === 'deliver' ? { recipientName: 'Amina' } : undefined;
        const key = who === 'ours' ? `${step}-${job.id}` : undefined;
        const res = await send(http, 'POST', `/api/packages/${job.id}/${step}`, job.driver.token, body, key);
        latencies.push(performance.now() - due);
        if (res.status !== 200) {
          const k = `${res.status} ${res.text.slice(0, 80)}`;
          errors.set(k, (errors.get(k) ?? 0) + 1);
        }
      }),
    );
    const elapsed = (performance.now() - start) / 1000;
    const cpu = processCpuUs(pid) - cpuBefore;
    const pgAfter = await backends();
    const pgCpu = [...pgAfter].reduce((sum, [p, us]) => sum + us - (pgBefore.get(p) ?? 0), 0);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]! * 10) / 10;
    return {
      requests: jobs.length,
      errors: Object.fromEntries(errors),
      achievedPerSecond: Math.round(jobs.length / elapsed),
      p50Ms: pct(50),
      p99Ms: pct(99),
      nodeCpuUsPerStep: Math.round(cpu / jobs.length),
      postgresCpuUsPerStep: Math.round(pgCpu / jobs.length),
    };
  }

  async function round(who: 'ours' | 'peer') {
    const jobs = await prepare();
    const out: Record<string, Awaited<ReturnType<typeof phase>>> = {};
    for (const step of STEPS) out[step] = await phase(who, step, jobs);
    return out;
  }

  // Warm-up rounds, not reported; then alternated measured rounds.
  await round('ours');
  await round('peer');
  const runs: { ours: Record<string, unknown>[]; peer: Record<string, unknown>[] } = { ours: [], peer: [] };
  for (let r = 0; r < ROUNDS; r++) {
    runs.ours.push(await round('ours'));
    runs.peer.push(await round('peer'));
  }
  const trial = await sqlPool.query<{ n: string }>('select coalesce(sum(amount), 0)::text as n from ledger_entries');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const summary = Object.fromEntries(
    STEPS.map((step) => {
      const of = (who: 'ours' | 'peer', field: string) =>
        median(runs[who].map((r) => (r[step] as Record<string, number>)[field]!));
      const o = { cpu: of('ours', 'nodeCpuUsPerStep'), pg: of('ours', 'postgresCpuUsPerStep') };
      const p = { cpu: of('peer', 'nodeCpuUsPerStep'), pg: of('peer', 'postgresCpuUsPerStep') };
      return [
        step,
        {
          oursP99Ms: of('ours', 'p99Ms'),
          peerP99Ms: of('peer', 'p99Ms'),
          oursNodeCpuUs: o.cpu,
          peerNodeCpuUs: p.cpu,
          nodeCpuRatio: Math.round((o.cpu / p.cpu) * 100) / 100,
          oursPgCpuUs: o.pg,
          peerPgCpuUs: p.pg,
          pgCpuRatio: Math.round((o.pg / p.pg) * 100) / 100,
        },
      ];
    }),
  );
  console.log(
    JSON.stringify(
      {
        bench: 'b17-package-life',
        ratePerSecond: RATE,
        packagesPerRound: DRIVERS,
        measuredRoundsPerServer: ROUNDS,
        summary,
        runs,
        ledgerSum: trial.rows[0]!.n,
        machine: machine(),
      },
      null,
      2,
    ),
  );
} finally {
  await oursHttp.close();
  await peerHttp.close();
  await sqlPool.end();
  peerChild.send({ type: 'stop' });
  await ours.stop();
}
