// Benchmark server process: a bare Fastify constant route (the baseline) or the real app seeded with
// BENCH_DRIVERS online drivers. Started by bench/lib/harness.ts; talks to it over IPC.
import { randomBytes, randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { createDeps } from '../../src/deps.js';
import { sha256 } from '../../src/modules/auth/auth.service.js';
import { TokenService } from '../../src/modules/auth/tokens.js';
import { hashDeviceKey } from '../../src/modules/device-keys/device-keys.service.js';
import type { FlushStats } from '../../src/modules/matching/live-drivers.js';
import { createServices } from '../../src/services.js';
import { CENTRE, SPREAD_DEG } from './area.js';

const send = (message: unknown) => process.send!(message);

async function baseline() {
  const app = Fastify();
  app.get('/const', async () => ({ status: 'ok', service: 'bench', n: 42 }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  send({ type: 'ready', port: (app.server.address() as { port: number }).port });
}

async function real() {
  const drivers = Number(process.env.BENCH_DRIVERS ?? 100_000);
  const sessions = Number(process.env.BENCH_SESSIONS ?? 10_000);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'bench',
    JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256-0123456789',
    RATE_LIMIT_GLOBAL: 'off',
    // Bench drivers jump between random points: the figures stay comparable with the runs before the
    // plausibility check (issue 39), which would drop most of those positions.
    MAX_PLAUSIBLE_SPEED: process.env.MAX_PLAUSIBLE_SPEED ?? 'off',
    // Every bench client is 127.0.0.1 (B9 opens 10,000 streams from it).
    STREAMS_PER_IP: '10000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    DATA_DIR: process.env.DATA_DIR ?? '/tmp/rd-drivers-bench',
    DATABASE_URL: process.env.BENCH_DATABASE_URL,
    WEBHOOK_WORKER_IN_PROCESS: 'false',
  });
  const database = config.database.url ? undefined : await openDatabase({});
  const deps = await createDeps(config, { database, logger: pino({ level: config.server.logLevel }) });
  const db = deps.database.db;
  const t0 = performance.now();
  // What B8 left: its packages and offers (they refer to the bench accounts).
  await sql`delete from dispatch_offers where driver_id in (select id from users where email like 'bench-%')`.execute(
    db,
  );
  await sql`delete from dispatch_jobs where job_id in (select id from packages where created_by in (select id from users where email like 'bench-%'))`.execute(
    db,
  );
  await sql`delete from package_status_history where package_id in (select id from packages where created_by in (select id from users where email like 'bench-%'))`.execute(
    db,
  );
  await sql`delete from packages where created_by in (select id from users where email like 'bench-%')`.execute(db);
  await sql`delete from users where email like 'bench-%'`.execute(db);
  await sql`
    insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
    select gen_random_uuid(), 'bench-' || g || '@example.com', '+2547' || lpad(g::text, 8, '0'), 'x', 'Driver' || g, 'Bench',
           'DRIVER', 'ACTIVE', (select id from countries where code = 'KE')
    from generate_series(1, ${drivers}::int) g`.execute(db);
  await sql`
    insert into driver_profiles (user_id, vehicle_type, vehicle_plate, availability, rating, last_lat, last_lng, last_location_at)
    select id, (array['BIKE','CAR','VAN','TRUCK'])[1 + (n % 4)], 'KB ' || n, 'ONLINE', 4.5,
           ${CENTRE.lat}::float8 + (random() - 0.5) * ${2 * SPREAD_DEG}::float8,
           ${CENTRE.lng}::float8 + (random() - 0.5) * ${2 * SPREAD_DEG}::float8, now()
    from (select id, row_number() over (order by id) as n from users where email like 'bench-%') u`.execute(db);
  const rows = await sql<{ id: string; user_id: string }>`
    insert into auth_sessions (id, user_id, refresh_token_hash, remember_me, expires_at)
    select gen_random_uuid(), id, md5(random()::text || id::text), false, now() + interval '1 day'
    from (select id from users where email like 'bench-%' order by id limit ${sessions}::int) u
    returning id, user_id`.execute(db);
  // B15: one push subscription per driver, at the benchmark's push receiver (one key pair for all).
  if (process.env.BENCH_PUSH_ORIGIN) {
    await sql`
      insert into push_subscriptions (id, user_id, endpoint, p256dh, auth, created_at)
      select gen_random_uuid(), id, ${process.env.BENCH_PUSH_ORIGIN} || '/push/' || id, ${process.env.BENCH_PUSH_P256DH}, ${process.env.BENCH_PUSH_AUTH}, now()
      from users where email like 'bench-%' and role = 'DRIVER'`.execute(db);
  }
  // A business account to create jobs with (B8).
  const business = await sql<{ id: string; user_id: string }>`
    with u as (
      insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
      values (gen_random_uuid(), 'bench-business@example.com', '+254799999999', 'x', 'Bench', 'Business', 'BUSINESS', 'ACTIVE', (select id from countries where code = 'KE'))
      returning id)
    insert into auth_sessions (id, user_id, refresh_token_hash, remember_me, expires_at)
    select gen_random_uuid(), id, md5(random()::text), false, now() + interval '1 day' from u
    returning id, user_id`.execute(db);
  // Customers with a session each (B10 quotes as customers): BENCH_CUSTOMERS of them, none by default.
  const customerCount = Number(process.env.BENCH_CUSTOMERS ?? 0);
  await sql`delete from users where email like 'bench-customer-%'`.execute(db);
  const customerRows = customerCount
    ? (
        await sql<{ id: string; user_id: string }>`
          with c as (
            insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
            select gen_random_uuid(), 'bench-customer-' || g || '@example.com', '+2541' || lpad(g::text, 8, '0'), 'x', 'Customer' || g, 'Bench',
                   'CUSTOMER', 'ACTIVE', (select id from countries where code = 'KE')
            from generate_series(1, ${customerCount}::int) g
            returning id)
          insert into auth_sessions (id, user_id, refresh_token_hash, remember_me, expires_at)
          select gen_random_uuid(), id, md5(random()::text || id::text), false, now() + interval '1 day' from c
          returning id, user_id`.execute(db)
      ).rows
    : [];
  // Every run deletes and inserts 100k drivers: the dead rows of the runs before, on a server where
  // autovacuum is off (as on the CI machines), made driver_profiles 268 MB for 26 MB of live rows and
  // the write-behind's statements, and so the tail, vary from run to run. Start each run compacted.
  if (config.database.url) await sql`vacuum (full, analyze) users, driver_profiles, auth_sessions`.execute(db);
  // BENCH_ADMIN=1: an admin with a session whose refresh token is known, so that a bench can open
  // the console signed in (the console restores a tab's session from its refresh token, B12).
  let admin: { refreshToken: string; userId: string; sessionId: string } | undefined;
  if (process.env.BENCH_ADMIN) {
    const refreshToken = randomUUID();
    const row = (
      await sql<{ id: string; user_id: string }>`
        with a as (
          insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
          values (gen_random_uuid(), 'bench-admin@example.com', '+254799999998', 'x', 'Bench', 'Admin', 'ADMIN', 'ACTIVE', (select id from countries where code = 'KE'))
          returning id)
        insert into auth_sessions (id, user_id, refresh_token_hash, remember_me, expires_at)
        select gen_random_uuid(), id, ${sha256(refreshToken)}, false, now() + interval '1 day' from a
        returning id, user_id`.execute(db)
    ).rows[0]!;
    admin = { refreshToken, userId: row.user_id, sessionId: row.id };
  }
  const seededMs = performance.now() - t0;

  const services = await createServices(deps);
  const app = await buildApp({ deps, services });
  const t1 = performance.now();
  await app.ready();
  const readyMs = performance.now() - t1;
  const tokens = new TokenService({
    secret: deps.config.auth.jwtSecret,
    issuer: config.auth.jwtIssuer,
    audience: config.auth.jwtAudience,
    accessTtlMs: 3_600_000,
    clock: deps.clock,
  });
  const auth: { driverId: string; token: string }[] = [];
  for (const r of rows.rows)
    auth.push({
      driverId: r.user_id,
      token: (await tokens.signAccess({ userId: r.user_id, role: 'DRIVER', sessionId: r.id })).token,
    });
  // B16: a device key (Traccar Client) for each driver with a session, stored hashed as the service does.
  const deviceKeys: string[] = [];
  if (process.env.BENCH_DEVICE_KEYS) {
    const ids: string[] = [];
    const hashes: string[] = [];
    for (const r of rows.rows) {
      const key = `dk_${randomBytes(24).toString('base64url')}`;
      deviceKeys.push(key);
      ids.push(r.user_id);
      hashes.push(hashDeviceKey(key));
    }
    await sql`
      insert into device_keys (id, driver_id, name, key_hash, created_at)
      select gen_random_uuid(), d, 'bench', h, now() from unnest(${ids}::uuid[], ${hashes}::text[]) as t(d, h)`.execute(
      db,
    );
  }
  const b = business.rows[0]!;
  const countryId = (await sql<{ id: string }>`select id from countries where code = 'KE'`.execute(db)).rows[0]!.id;
  const businessToken = (await tokens.signAccess({ userId: b.user_id, role: 'BUSINESS', sessionId: b.id })).token;
  const customers: { customerId: string; token: string }[] = [];
  for (const r of customerRows)
    customers.push({
      customerId: r.user_id,
      token: (await tokens.signAccess({ userId: r.user_id, role: 'CUSTOMER', sessionId: r.id })).token,
    });
  const adminAuth = admin && {
    refreshToken: admin.refreshToken,
    token: (await tokens.signAccess({ userId: admin.userId, role: 'ADMIN', sessionId: admin.sessionId })).token,
  };

  // Event-loop delay while serving (a blocked loop shows here, not in the request handlers' profile).
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const flushes: (FlushStats & { endedAt: number })[] = [];
  const live = services.live;
  live.onFlush = (s) => flushes.push({ ...s, endedAt: Date.now() });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.on('message', async (m: { type: string }) => {
    if (m.type === 'stats') {
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      const eventLoopDelayMs = {
        p50: ms(loopDelay.percentile(50)),
        p99: ms(loopDelay.percentile(99)),
        max: ms(loopDelay.max),
      };
      loopDelay.reset();
      const memory = process.memoryUsage();
      const mb = (bytes: number) => Math.round(bytes / 1048576);
      send({
        type: 'stats',
        flushes: flushes.splice(0),
        rssMB: mb(memory.rss),
        // Where the RSS is: the JS heap (in use and reserved) and memory outside it (buffers, etc.).
        memoryMB: {
          heapUsed: mb(memory.heapUsed),
          heapTotal: mb(memory.heapTotal),
          external: mb(memory.external),
          arrayBuffers: mb(memory.arrayBuffers),
        },
        online: live.index.onlineCount,
        positionsApplied: live.positionsApplied,
        eventLoopDelayMs,
      });
    } else if (m.type === 'gc') {
      // With BENCH_SERVER_FLAGS=--expose-gc: memory figures after a full collection.
      (globalThis as { gc?: () => void }).gc?.();
      const memory = process.memoryUsage();
      const kb = (bytes: number) => Math.round(bytes / 1024);
      send({
        type: 'gc',
        rssKB: kb(memory.rss),
        heapUsedKB: kb(memory.heapUsed),
        externalKB: kb(memory.external),
        followers: services.trackingHub.followers,
      });
    } else if (m.type === 'heap-snapshot') {
      const { writeHeapSnapshot } = await import('node:v8');
      send({ type: 'heap-snapshot', file: writeHeapSnapshot(undefined) });
    } else if (m.type === 'stop') {
      await app.close();
      await deps.close();
      process.exit(0);
    }
  });
  send({
    type: 'ready',
    port: (app.server.address() as { port: number }).port,
    auth,
    deviceKeys,
    businessToken,
    countryId,
    customers,
    admin: adminAuth,
    kenyaId: countryId,
    seededMs,
    readyMs,
    indexSize: live.index.size,
    database: deps.database.kind,
  });
}

await (process.env.BENCH_KIND === 'baseline' ? baseline() : real());
