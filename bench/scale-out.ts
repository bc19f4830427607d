// Scale-out: B1 (location updates over HTTP) and B3 (find-drivers) through HAProxy in front of 1 and
// then 3 compiled API instances (dist/, NODE_ENV=production) on one PostgreSQL database of the
// bench's own and a Redis Cluster of its own. Prints, per instance count, requests/s, latency and the
// CPU the API processes used per request, hence the throughput per core they used.
//
//   npm run build && npx tsx bench/scale-out.ts
//   (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; BENCH_DURATION=8;
//    BENCH_DRIVERS=20000; BENCH_INSTANCES=1,3)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { TokenService } from '../src/modules/auth/tokens.js';
import { systemClock } from '../src/shared/clock.js';
import { createServerDatabase } from '../test/helpers/database.js';
import { freePort, spawnNode, waitFor, type NodeProcess } from '../test/helpers/processes.js';
import { startRedisCluster } from '../test/helpers/redis-cluster.js';
import { CENTRE, SPREAD_DEG } from './lib/area.js';
import { load, locationUpdate, machine, processCpuUs, randomPoint } from './lib/harness.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const duration = Number(process.env.BENCH_DURATION ?? 8);
const driverCount = Number(process.env.BENCH_DRIVERS ?? 20_000);
const counts = (process.env.BENCH_INSTANCES ?? '1,3').split(',').map(Number);
const sessions = 2000;
const jwtSecret = randomBytes(48).toString('base64url');

// Before anything is started: a missing binary would otherwise fail halfway and leave instances running.
for (const binary of ['haproxy', 'redis-server', 'redis-cli']) {
  try {
    execFileSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' });
  } catch {
    console.error(`${binary} is not installed (apt-get install -y haproxy redis-server)`);
    process.exit(1);
  }
}

const dir = mkdtempSync(path.join(tmpdir(), 'rd-scale-bench-'));
const database = await createServerDatabase(baseUrl, 'bench_scale');
const redis = await startRedisCluster();
const handle = await openDatabase({ url: database.url });
await migrateToLatest(handle.db);
const db = handle.db;
await sql`
  insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
  select gen_random_uuid(), 'bench-' || g || '@example.com', '+2547' || lpad(g::text, 8, '0'), 'x', 'Driver' || g, 'Bench',
         'DRIVER', 'ACTIVE', (select id from countries where code = 'KE')
  from generate_series(1, ${driverCount}::int) g`.execute(db);
await sql`
  insert into driver_profiles (user_id, vehicle_type, vehicle_plate, availability, rating, last_lat, last_lng, last_location_at)
  select id, (array['BIKE','CAR','VAN','TRUCK'])[1 + (n % 4)], 'KB ' || n, 'ONLINE', 4.5,
         ${CENTRE.lat}::float8 + (random() - 0.5) * ${2 * SPREAD_DEG}::float8,
         ${CENTRE.lng}::float8 + (random() - 0.5) * ${2 * SPREAD_DEG}::float8, now() + interval '1 hour'
  from (select id, row_number() over (order by id) as n from users where email like 'bench-%') u`.execute(db);
const rows = await sql<{ id: string; user_id: string }>`
  insert into auth_sessions (id, user_id, refresh_token_hash, remember_me, expires_at)
  select gen_random_uuid(), id, md5(random()::text || id::text), false, now() + interval '1 day'
  from (select id from users where email like 'bench-%' order by id limit ${sessions}::int) u
  returning id, user_id`.execute(db);
const tokens = new TokenService({
  secret: jwtSecret,
  issuer: 'ride-delivery-backend',
  audience: 'ride-delivery-api',
  accessTtlMs: 3_600_000,
  clock: systemClock,
});
const headers = await Promise.all(
  rows.rows.map(async (r) => ({
    'content-type': 'application/json',
    authorization: `Bearer ${(await tokens.signAccess({ userId: r.user_id, role: 'DRIVER', sessionId: r.id })).token}`,
  })),
);
await handle.close();

const env = {
  NODE_ENV: 'production',
  DATABASE_URL: database.url,
  REDIS_CLUSTER_NODES: redis.seeds,
  JWT_SECRET: jwtSecret,
  SMS_TRANSPORT: 'file',
  SMS_FILE: path.join(dir, 'sms.log'),
  SMS_ALLOW_FILE_IN_PRODUCTION: 'true',
  RATE_LIMIT_GLOBAL: 'off',
  WEBHOOK_WORKER_IN_PROCESS: 'false',
  LOG_LEVEL: 'warn',
  DATA_DIR: dir,
};

const VEHICLES = ['BIKE', 'CAR', 'VAN', 'TRUCK'];
const find = {
  method: 'POST' as const,
  path: '/api/matching/find-drivers',
  setupRequest: (req: any) => {
    req.headers = headers[Math.floor(Math.random() * headers.length)];
    req.body = JSON.stringify({
      pickupLocation: randomPoint(),
      vehicleType: VEHICLES[Math.floor(Math.random() * 4)],
      orderType: 'RIDE',
    });
    return req;
  },
};

const results: Record<string, unknown>[] = [];
for (const n of counts) {
  const apis: { port: number; proc: NodeProcess }[] = [];
  for (let i = 0; i < n; i++) {
    const port = await freePort();
    const proc = spawnNode(['dist/server.js'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => undefined))?.status === 200,
      120_000,
      `API ${i + 1}`,
      proc.output,
    );
    apis.push({ port, proc });
  }
  const startLb = async (servers: typeof apis, name: string) => {
    const lbPort = await freePort();
    const cfg = path.join(dir, `haproxy-${name}.cfg`);
    writeFileSync(
      cfg,
      [
        'global',
        '  maxconn 4000',
        'defaults',
        '  mode http',
        '  timeout connect 1s',
        '  timeout client 30s',
        '  timeout server 30s',
        'frontend api',
        `  bind 127.0.0.1:${lbPort}`,
        '  default_backend api',
        'backend api',
        '  balance leastconn',
        ...servers.map((a, i) => `  server api${i + 1} 127.0.0.1:${a.port}`),
        '',
      ].join('\n'),
    );
    const child: ChildProcess = spawn('haproxy', ['-f', cfg, '-db'], { stdio: 'ignore' });
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${lbPort}/health`).catch(() => undefined))?.ok === true,
      10_000,
      'HAProxy',
    );
    return { url: `http://127.0.0.1:${lbPort}`, child };
  };
  const lb = await startLb(apis, String(n));
  const haproxy = lb.child;
  const url = lb.url;

  const measure = async (name: string, requests: unknown[], connections = 50) => {
    await load({ url, requests: requests as never, duration: 5, connections });
    const pids = apis.map((a) => a.proc.child.pid!);
    const before = pids.map(processCpuUs);
    const lbBefore = processCpuUs(haproxy.pid!);
    const result = await load({ url, requests: requests as never, duration, connections });
    const apiCpuUs = pids.reduce((sum, pid, i) => sum + processCpuUs(pid) - before[i]!, 0);
    const perRequest = result.requests ? apiCpuUs / result.requests : 0;
    results.push({
      bench: name,
      instances: n,
      connections,
      requestsPerSec: result.requestsPerSec,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      non2xx: result.non2xx,
      errors: result.errors,
      apiCoresUsed: Math.round((apiCpuUs / 1e6 / duration) * 100) / 100,
      apiCpuUsPerRequest: Math.round(perRequest * 10) / 10,
      requestsPerApiCoreSecond: perRequest ? Math.round(1e6 / perRequest) : 0,
      haproxyCpuUsPerRequest: result.requests
        ? Math.round(((processCpuUs(haproxy.pid!) - lbBefore) / result.requests) * 10) / 10
        : 0,
    });
  };
  // What the instances spend with no requests at all (timers, sweeps, heartbeats), to tell it apart.
  const idlePids = apis.map((a) => a.proc.child.pid!);
  const idleBefore = idlePids.map(processCpuUs);
  await new Promise((r) => setTimeout(r, 5000));
  const idleCpuUs = idlePids.reduce((sum, pid, i) => sum + processCpuUs(pid) - idleBefore[i]!, 0);
  results.push({ bench: 'idle', instances: n, apiCoresUsed: Math.round((idleCpuUs / 1e6 / 5) * 1000) / 1000 });
  await measure('B1 POST /drivers/me/location', [locationUpdate(headers)]);
  await measure('B3 POST /matching/find-drivers', [find]);
  if (n > 1) {
    // The same 50 clients per instance as the single instance had: each instance then works at the
    // batch sizes of the one-instance run, so what is left of the difference is what scaling out costs.
    await measure('B1 POST /drivers/me/location', [locationUpdate(headers)], 50 * n);
    await measure('B3 POST /matching/find-drivers', [find], 50 * n);
  }
  if (n > 1) {
    // Updates through all instances but the last: what the last one spends is the cost of following
    // the others' positions (Redis messages applied to its index), per update of the fleet.
    const partial = await startLb(apis.slice(0, -1), `${n}-partial`);
    const follower = apis.at(-1)!.proc.child.pid!;
    await load({ url: partial.url, requests: [locationUpdate(headers)] as never, duration: 2 });
    const before = processCpuUs(follower);
    const result = await load({ url: partial.url, requests: [locationUpdate(headers)] as never, duration });
    results.push({
      bench: 'B1 follower (an instance that gets no requests)',
      instances: n,
      updatesPerSec: result.requestsPerSec,
      followerCpuUsPerUpdate: result.requests
        ? Math.round(((processCpuUs(follower) - before) / result.requests) * 10) / 10
        : 0,
    });
    partial.child.kill('SIGKILL');
  }

  haproxy.kill('SIGKILL');
  for (const a of apis) a.proc.child.kill('SIGTERM');
  await Promise.all(apis.map((a) => a.proc.exited));
}

await redis.close();
await database.drop();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify(
    { bench: 'scale-out', drivers: driverCount, durationS: duration, results, machine: machine() },
    null,
    1,
  ),
);
