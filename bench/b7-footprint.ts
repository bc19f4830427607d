// B7, footprint: RSS of the compiled server on a PostgreSQL server, idle and loaded (100k online
// drivers in the live index, 100k packages, traffic over both), time to ready, and the whole
// process tree of `npm start` on the embedded database, idle.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_b7 npx tsx bench/b7-footprint.ts
//
// The database named by BENCH_DATABASE_URL is dropped and created again.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { hashPassword } from '../src/modules/auth/passwords.js';
import { TokenService } from '../src/modules/auth/tokens.js';
import { systemClock } from '../src/shared/clock.js';
import { CENTRE, SPREAD_DEG } from './lib/area.js';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_b7';
const drivers = Number(process.env.BENCH_DRIVERS ?? 100_000);
const packages = Number(process.env.BENCH_PACKAGES ?? 100_000);
const idleSeconds = Number(process.env.BENCH_IDLE ?? 10);
const secret = 'b7-bench-key-0123456789-abcdefghijklmnopqrstuvwxyz';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (kb: number) => Math.round(kb / 102.4) / 10;

/** RSS in KB of a process and, with `tree`, of all its descendants. */
function rssKb(pid: number, tree = false): number {
  const own = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  if (!tree) return own;
  let total = own;
  for (const task of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
    total += rssKb(Number(task), true);
  }
  return total;
}

async function waitReady(port: number, child: ChildProcess, timeoutMs = 120_000): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
      if (res.status === 200) return performance.now() - t0;
    } catch {
      /* not listening yet */
    }
    await sleep(20);
  }
  throw new Error('server not ready in time');
}

// Each in a process group of its own, stopped as a group: `npm start` does not pass SIGTERM on to the
// server it started, which otherwise outlived the bench (and ran beside the next one).
function start(command: string, args: string[], env: Record<string, string>): ChildProcess {
  const { MALLOC_MMAP_THRESHOLD_: _inherited, ...inherited } = process.env;
  return spawn(command, args, {
    cwd: root,
    env: { ...inherited, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
  // The group's other members (the server under npm) get a moment to finish, then SIGKILL.
  for (let i = 0; i < 50; i++) {
    try {
      process.kill(-child.pid!, 0);
    } catch {
      return;
    }
    await sleep(100);
  }
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}

async function resetDatabase(): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  target.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: target.toString() });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"`);
  await admin.end();
}

async function seed(): Promise<{
  sessions: { userId: string; sessionId: string; role: string }[];
  packageIds: string[];
}> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const country = (await db.query(`select id from countries where code = 'KE'`)).rows[0].id as string;
  await db.query(
    `insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
     select gen_random_uuid(), 'b7-' || g || '@example.com', '+2547' || lpad(g::text, 8, '0'), 'x', 'Driver' || g, 'Bench',
            'DRIVER', 'ACTIVE', $1 from generate_series(1, $2::int) g`,
    [country, drivers],
  );
  await db.query(
    `insert into driver_profiles (user_id, vehicle_type, vehicle_plate, availability, rating, last_lat, last_lng, last_location_at)
     select id, (array['BIKE','CAR','VAN','TRUCK'])[1 + (n % 4)], 'KB ' || n, 'ONLINE', 4.5,
            $1::float8 + (random() - 0.5) * $3::float8, $2::float8 + (random() - 0.5) * $3::float8, now()
     from (select id, row_number() over (order by id) as n from users where email like 'b7-%') u`,
    [CENTRE.lat, CENTRE.lng, 2 * SPREAD_DEG],
  );
  const business = (
    await db.query(
      `insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
       values (gen_random_uuid(), 'b7-business@example.com', '+254799999998', 'x', 'Bench', 'Business', 'BUSINESS', 'ACTIVE', $1) returning id`,
      [country],
    )
  ).rows[0].id as string;
  const point = `jsonb_build_object('lat', -1.29, 'lng', 36.82, 'address', 'Moi Avenue', 'contactName', 'A', 'contactPhone', '+254700000002')`;
  await db.query(
    `insert into packages (id, status, vehicle_type, country_id, created_by, business_id, pickup, dropoff, parcel, pickup_lat, pickup_lng, created_at, updated_at)
     select gen_random_uuid(), 'DELIVERED', 'BIKE', $1, $2, $2, ${point}, ${point}, '{"size":"SMALL","weightKg":1}'::jsonb, -1.29, 36.82,
            now() - g * interval '1 second', now() - g * interval '1 second'
     from generate_series(1, $3::int) g`,
    [country, business, packages],
  );
  const packageIds = (
    await db.query(`select id from packages where business_id = $1 order by random() limit 20000`, [business])
  ).rows.map((r) => r.id as string);
  const sessions = (
    await db.query(
      `insert into auth_sessions (id, user_id, refresh_token_hash, remember_me, expires_at)
       select gen_random_uuid(), id, md5(random()::text || id::text), false, now() + interval '1 day'
       from (select id from users where email like 'b7-%' and role = 'DRIVER' order by id limit 5000) u
       returning id, user_id`,
    )
  ).rows.map((r) => ({ userId: r.user_id as string, sessionId: r.id as string, role: 'DRIVER' }));
  const businessSession = (
    await db.query(
      `insert into auth_sessions (id, user_id, refresh_token_hash, remember_me, expires_at)
       values (gen_random_uuid(), $1, md5(random()::text), false, now() + interval '1 day') returning id`,
      [business],
    )
  ).rows[0].id as string;
  sessions.push({ userId: business, sessionId: businessSession, role: 'BUSINESS' });
  await db.end();
  return { sessions, packageIds };
}

async function traffic(
  port: number,
  sessions: { userId: string; sessionId: string; role: string }[],
  packageIds: string[],
): Promise<{ requests: number; failed: number }> {
  const tokens = new TokenService({
    secret,
    issuer: 'ride-delivery-backend',
    audience: 'ride-delivery-api',
    accessTtlMs: 3_600_000,
    clock: systemClock,
  });
  const business = sessions.at(-1)!;
  const businessToken = (
    await tokens.signAccess({ userId: business.userId, role: 'BUSINESS', sessionId: business.sessionId })
  ).token;
  const driverTokens: string[] = [];
  for (const s of sessions.slice(0, -1))
    driverTokens.push((await tokens.signAccess({ userId: s.userId, role: 'DRIVER', sessionId: s.sessionId })).token);
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 20 });
  let requests = 0;
  let failed = 0;
  const run = async (
    make: (i: number) => { method: 'GET' | 'POST'; path: string; token: string; body?: string },
    count: number,
  ) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < count) {
          const r = make(next++);
          const res = await pool.request({
            method: r.method,
            path: r.path,
            headers: { authorization: `Bearer ${r.token}`, ...(r.body ? { 'content-type': 'application/json' } : {}) },
            body: r.body,
          });
          await res.body.dump();
          requests += 1;
          if (res.statusCode >= 300) failed += 1;
        }
      }),
    );
  };
  // Every seeded package read once (fills the package cache), 20k position reports, 5k find-drivers.
  await run(
    (i) => ({ method: 'GET', path: `/api/packages/${packageIds[i]}`, token: businessToken }),
    packageIds.length,
  );
  await run(
    (i) => ({
      method: 'POST',
      path: '/api/drivers/me/location',
      token: driverTokens[i % driverTokens.length]!,
      body: JSON.stringify({
        lat: CENTRE.lat + (Math.random() - 0.5) * SPREAD_DEG,
        lng: CENTRE.lng + (Math.random() - 0.5) * SPREAD_DEG,
      }),
    }),
    20_000,
  );
  await run(
    () => ({
      method: 'POST',
      path: '/api/matching/find-drivers',
      token: businessToken,
      body: JSON.stringify({
        pickupLocation: {
          lat: CENTRE.lat + (Math.random() - 0.5) * SPREAD_DEG,
          lng: CENTRE.lng + (Math.random() - 0.5) * SPREAD_DEG,
        },
        vehicleType: 'CAR',
        orderType: 'PACKAGE_DELIVERY',
      }),
    }),
    5_000,
  );
  await pool.close();
  return { requests, failed };
}

/**
 * RSS before and 10 s after 24 password logins (8 at a time; each an argon2id hash of 19 MiB on
 * libuv's pool), with and without the glibc setting that start:prod and the Dockerfile set.
 */
async function loginsRss(
  fixedMmapThreshold: boolean,
): Promise<{ idleMB: number; after24LoginsMB: number; statuses: Record<string, number> }> {
  const { MALLOC_MMAP_THRESHOLD_: threshold, ...rest } = serverEnv;
  const env = {
    ...rest,
    ...(fixedMmapThreshold ? { MALLOC_MMAP_THRESHOLD_: threshold } : {}),
    RATE_LIMIT_LOGIN: 'off',
    RATE_LIMIT_LOGIN_SEND_OTP: 'off',
    PORT: '3793',
  };
  const server = start('node', ['dist/server.js'], env);
  await waitReady(3793, server);
  await sleep(idleSeconds * 1000);
  const idleMB = mb(rssKb(server.pid!));
  const statuses: Record<string, number> = {};
  for (let round = 0; round < 3; round++) {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const res = await fetch('http://127.0.0.1:3793/api/auth/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ identifier: 'b7-login@example.com', password: loginPassword }),
        });
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }),
    );
  }
  await sleep(idleSeconds * 1000);
  const after24LoginsMB = mb(rssKb(server.pid!));
  await stop(server);
  return { idleMB, after24LoginsMB, statuses };
}

const loginPassword = 'b7-login-passphrase-0123';

/** Milliseconds until no package is left without a tracking hash. */
async function untilBackfilled(timeoutMs = 300_000): Promise<number> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const t0 = performance.now();
    for (;;) {
      const { rows } = await db.query(
        'select exists (select 1 from packages where tracking_token_hash is null) as missing',
      );
      if (!rows[0].missing) return performance.now() - t0;
      if (performance.now() - t0 > timeoutMs) throw new Error('the tracking token backfill did not finish');
      await sleep(100);
    }
  } finally {
    await db.end();
  }
}

const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  drivers,
  packages,
};
// As `npm run start:prod` and the Dockerfile run it (MALLOC_MMAP_THRESHOLD_: see docs/operations.md).
const serverEnv = {
  MALLOC_MMAP_THRESHOLD_: '131072',
  DATABASE_URL: url,
  JWT_SECRET: secret,
  NODE_ENV: 'production',
  SMS_TRANSPORT: 'file',
  SMS_ALLOW_FILE_IN_PRODUCTION: 'true',
  RATE_LIMIT_GLOBAL: 'off',
};

await resetDatabase();
// First start migrates; the figures come from the second, as a restarted instance sees it.
let server = start('node', ['dist/server.js'], { ...serverEnv, PORT: '3791' });
results.firstStartReadyMs = Math.round(await waitReady(3791, server));
await stop(server);
server = start('node', ['dist/server.js'], { ...serverEnv, PORT: '3791' });
results.readyMs = Math.round(await waitReady(3791, server));
await sleep(idleSeconds * 1000);
results.idleRssMB = mb(rssKb(server.pid!));
// V8's memory reducer gives back what start-up left behind 8 s after the last full collection:
// depending on when that was, the 10-s figure is before or after it. The settled figure:
await sleep(20_000);
results.idleRssAfter30sMB = mb(rssKb(server.pid!));
await stop(server);

// A user who can log in (the seeded drivers' password hashes are placeholders). Past the 10th login
// the phone's code limit answers 429, but only after the password was checked: 24 hashes either way.
{
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(
    `insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
     values (gen_random_uuid(), 'b7-login@example.com', '+254799999997', $1, 'Login', 'Bench', 'BUSINESS', 'ACTIVE', (select id from countries where code = 'KE'))`,
    [await hashPassword(loginPassword)],
  );
  await db.end();
}
results.logins = {
  glibcDefault: await loginsRss(false),
  fixedMmapThreshold: await loginsRss(true),
};

const seeded = await seed();
// The seeded packages have no tracking hash, as an older version wrote them: a first start gives them
// theirs (the tracking token backfill), as after an upgrade. The loaded figures come from the next
// start, a restarted instance of the current version, not from one busy with that backfill.
server = start('node', ['dist/server.js'], { ...serverEnv, PORT: '3791' });
await waitReady(3791, server);
results.trackingBackfillMs = Math.round(await untilBackfilled());
await stop(server);
server = start('node', ['dist/server.js'], { ...serverEnv, PORT: '3791' });
results.readyWith100kMs = Math.round(await waitReady(3791, server));
await sleep(idleSeconds * 1000);
results.loadedIdleRssMB = mb(rssKb(server.pid!));
await sleep(20_000);
results.loadedIdleRssAfter30sMB = mb(rssKb(server.pid!));
results.traffic = await traffic(3791, seeded.sessions, seeded.packageIds);
await sleep(idleSeconds * 1000);
results.loadedAfterTrafficRssMB = mb(rssKb(server.pid!));
await stop(server);

// `npm start` as a newcomer runs it: embedded database in a fresh DATA_DIR, the whole process tree.
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'b7-embedded-'));
const npmStart = start('npm', ['start'], {
  DATA_DIR: dataDir,
  PORT: '3792',
  NODE_ENV: 'development',
  DATABASE_URL: '',
  SMS_TRANSPORT: 'console',
});
results.embeddedFirstReadyMs = Math.round(await waitReady(3792, npmStart));
await sleep(idleSeconds * 1000);
results.embeddedTreeIdleRssMB = mb(rssKb(npmStart.pid!, true));
const tree = execFileSync('ps', ['--ppid', String(npmStart.pid), '-o', 'pid=,rss=,args='], { encoding: 'utf8' }).trim();
results.embeddedTree = tree.split('\n').map((l) => l.trim().replace(/\s+/g, ' ').slice(0, 80));
await stop(npmStart);
rmSync(dataDir, { recursive: true, force: true });

console.log(JSON.stringify(results, null, 2));
