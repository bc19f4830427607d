// B4 (../shared/guides/performance.md): GET /api/packages/:id with a valid token, 100k packages, on the
// PostgreSQL server, against a bare-Fastify baseline measured in the same run. Prints one JSON object.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/b4-get-package.ts
//
// A throwaway database is created (and dropped at the end). The servers run in child processes so
// the load generator (autocannon, in this process) does not share their event loop.
// Env: BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (default 50), BENCH_PACKAGES (default 100000),
// BENCH_KEEP=1 keeps the database for inspection.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { createServerDatabase } from '../test/helpers/database.js';
import { durationArg, withServerCpu } from './lib/harness.js';
import { createServices } from '../src/services.js';

const SELF = fileURLToPath(import.meta.url);
const JWT_SECRET = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
const mode = process.argv[2];

if (mode === '--serve-baseline') {
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ hello: 'world', status: 'DELIVERED' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`READY ${(app.server.address() as { port: number }).port}\n`);
} else if (mode === '--serve-app') {
  const { loadConfig } = await import('../src/config.js');
  const { createDeps } = await import('../src/deps.js');
  const { buildApp } = await import('../src/app.js');
  const config = loadConfig({
    NODE_ENV: 'production',
    DATABASE_URL: process.argv[3],
    JWT_SECRET,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_GLOBAL: 'off',
    RATE_LIMIT_LOGIN: 'off',
    RATE_LIMIT_LOGIN_SEND_OTP: 'off',
    RATE_LIMIT_REGISTER_SEND_OTP: 'off',
    SMS_TRANSPORT: 'file',
    DATA_DIR: '/tmp/rd-packages-bench',
    WEBHOOK_WORKER_IN_PROCESS: 'false',
  });
  const deps = await createDeps(config);
  const services = await createServices(deps);
  const app = await buildApp({ deps, services });
  // A clean exit on SIGTERM, so `node --cpu-prof` can write its profile.
  process.on('SIGTERM', () => process.exit(0));
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`READY ${(app.server.address() as { port: number }).port}\n`);
} else {
  await main();
}

async function main() {
  const baseUrl =
    process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const duration = durationArg();
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  const packageCount = Number(process.env.BENCH_PACKAGES ?? 100_000);

  const { url: dbUrl, drop } = await createServerDatabase(baseUrl, 'bench_b4');

  const children: ChildProcess[] = [];
  try {
    const { token, ids, hot } = await seed(dbUrl, packageCount);
    const baseline = await startChild(['--serve-baseline'], children);
    const app = await startChild(['--serve-app', dbUrl], children);

    const headers = { authorization: `Bearer ${token}` };
    const url = `http://127.0.0.1:${app.port}/api/packages/${ids[0]}`;
    // Warm up both (JIT, pools, prepared statements, the session cache) on other packages, then measure.
    await run(`http://127.0.0.1:${baseline.port}/`, 2, connections);
    await run(url, 2, connections, headers, hot.slice(0, 500));
    const base = await withServerCpu(baseline.child.pid!, () =>
      run(`http://127.0.0.1:${baseline.port}/`, duration, connections),
    );
    // Every package in turn (shuffled): each is read about once, so the read cache cannot help.
    const uniform = await withServerCpu(app.child.pid!, () => run(url, duration, connections, headers, ids));
    // Integrators polling the packages that are moving: 2,000 packages read over and over.
    const polled = await withServerCpu(app.child.pid!, () => run(url, duration, connections, headers, hot));
    const rssMb = Math.round(rss(app.child.pid!) / 1024);

    console.log(
      JSON.stringify({
        scenario: 'B4 GET /api/packages/:id',
        date: new Date().toISOString(),
        database: 'postgresql server',
        packages: packageCount,
        durationSeconds: duration,
        connections,
        baseline: base,
        getPackageUniform: { ...uniform, ratio: ratio(uniform, base) },
        getPackageHot2000: { ...polled, ratio: ratio(polled, base) },
        serverRssMb: rssMb,
        target: { requestsPerSecond: 8000, ratioOfBaseline: 0.24 },
        pass:
          uniform.requestsPerSecond >= 8000 && uniform.errors + uniform.non2xx + polled.errors + polled.non2xx === 0,
      }),
    );
  } finally {
    for (const child of children) child.kill(process.env.BENCH_PROFILE ? 'SIGTERM' : 'SIGKILL');
    if (process.env.BENCH_PROFILE) await new Promise((resolve) => setTimeout(resolve, 3000));
    if (process.env.BENCH_KEEP) console.error(`kept database ${dbUrl}`);
    else await drop();
  }
}

async function seed(dbUrl: string, count: number) {
  const { openDatabase } = await import('../src/db/database.js');
  const { migrateToLatest } = await import('../src/db/migrate.js');
  const { TokenService } = await import('../src/modules/auth/tokens.js');
  const { loadConfig } = await import('../src/config.js');
  const { systemClock } = await import('../src/shared/clock.js');
  const handle = await openDatabase({ url: dbUrl });
  const db = handle.db;
  try {
    await migrateToLatest(db);
    const country = (await db.selectFrom('countries').select('id').where('code', '=', 'KE').executeTakeFirstOrThrow())
      .id;
    const businessId = randomUUID();
    const driverId = randomUUID();
    const hash = 'not-a-real-hash';
    await db
      .insertInto('users')
      .values([
        {
          id: businessId,
          email: 'bench-business@example.com',
          phone: '+254700000001',
          password_hash: hash,
          first_name: 'Bench',
          last_name: 'Business',
          role: 'BUSINESS',
          status: 'ACTIVE',
          status_reason: null,
          country_id: country,
        },
        {
          id: driverId,
          email: 'bench-driver@example.com',
          phone: '+254700000002',
          password_hash: hash,
          first_name: 'Bench',
          last_name: 'Driver',
          role: 'DRIVER',
          status: 'ACTIVE',
          status_reason: null,
          country_id: country,
        },
      ])
      .execute();
    await db
      .insertInto('business_profiles')
      .values({ user_id: businessId, business_name: 'Bench Co', business_address: null })
      .execute();
    await db
      .insertInto('driver_profiles')
      .values({
        user_id: driverId,
        vehicle_type: 'BIKE',
        vehicle_plate: 'KAA 001B',
        company_id: null,
        rating: 4.8,
        last_lat: -1.28,
        last_lng: 36.81,
        last_heading: 90,
        last_speed: 8,
        last_location_at: new Date(),
      })
      .execute();
    const stop = (name: string) =>
      JSON.stringify({
        location: { lat: -1.2864, lng: 36.8172 },
        address: 'Moi Avenue 1, Nairobi',
        contactName: name,
        contactPhone: '+254712345678',
        notes: 'Gate B',
      });
    // Half the packages are on their way (a driver and four history rows), half are waiting.
    await sql`
      insert into packages (id, status, vehicle_type, country_id, created_by, business_id, customer_id, driver_id, reference,
        pickup, dropoff, parcel, pickup_lat, pickup_lng, delivery_code_hash, recipient_name, created_at, updated_at)
      select gen_random_uuid(), case when i % 2 = 0 then 'IN_TRANSIT' else 'PENDING' end, 'BIKE', ${country}, ${businessId}, ${businessId}, null,
        case when i % 2 = 0 then ${driverId}::uuid end, 'REF-' || i, ${stop('Wanjiru')}::jsonb, ${stop('Otieno')}::jsonb,
        '{"description":"Documents","weightKg":1.5,"size":"SMALL"}'::jsonb, -1.2864, 36.8172, null, null,
        now() - i * interval '1 second', now() - i * interval '1 second'
      from generate_series(1, ${count}) i`.execute(db);
    await sql`
      insert into package_status_history (package_id, status, reason, actor_id, at)
      select p.id, s.status, null, null, p.created_at + s.n * interval '1 minute'
      from packages p cross join (values (0, 'PENDING'), (1, 'ASSIGNED'), (2, 'PICKED_UP'), (3, 'IN_TRANSIT')) as s(n, status)
      where s.n = 0 or p.status = 'IN_TRANSIT'`.execute(db);
    // The history as the service keeps it in the row too (the migration's backfill).
    const { rebuildPackageStatusHistory } = await import('../src/db/migrations/0029_failed_deliveries.js');
    await rebuildPackageStatusHistory(db);
    await sql`analyze`.execute(db);

    const sessionId = randomUUID();
    await db
      .insertInto('auth_sessions')
      .values({
        id: sessionId,
        user_id: businessId,
        refresh_token_hash: createHash('sha256').update(randomBytes(16)).digest('hex'),
        remember_me: false,
        expires_at: new Date(Date.now() + 86_400_000),
        revoked_at: null,
        last_used_at: null,
      })
      .execute();
    const config = loadConfig({ JWT_SECRET, NODE_ENV: 'test', DATA_DIR: '/tmp/rd-packages-bench' });
    const tokens = new TokenService({
      secret: JWT_SECRET,
      issuer: config.auth.jwtIssuer,
      audience: config.auth.jwtAudience,
      accessTtlMs: 3600_000,
      clock: systemClock,
    });
    const token = (await tokens.signAccess({ userId: businessId, role: 'BUSINESS', sessionId })).token;
    const all = await sql<{ id: string }>`select id from packages order by random()`.execute(db);
    const ids = all.rows.map((r) => r.id);
    const hot = (
      await sql<{
        id: string;
      }>`select id from packages where status = 'IN_TRANSIT' order by random() limit 2000`.execute(db)
    ).rows.map((r) => r.id);
    return { token, ids, hot };
  } finally {
    await handle.close();
  }
}

function startChild(args: string[], children: ChildProcess[]): Promise<{ port: number; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    // BENCH_PROFILE=dir writes a CPU profile of the app server there (it exits cleanly on SIGTERM).
    const profile =
      process.env.BENCH_PROFILE && args[0] === '--serve-app'
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
        : [];
    const child = spawn(process.execPath, [...profile, '--import', 'tsx', SELF, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\d+)/.exec(out);
      if (match) resolve({ port: Number(match[1]), child });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

async function run(
  url: string,
  duration: number,
  connections: number,
  headers: Record<string, string> = {},
  ids?: string[],
) {
  let n = 0;
  const result = await autocannon({
    url,
    duration,
    connections,
    pipelining: 1,
    headers,
    // Each request asks for another package, so the database does real lookups.
    ...(ids
      ? {
          requests: [
            {
              setupRequest: (req: any) => {
                n = (n + 1) % ids.length;
                return { ...req, path: `/api/packages/${ids[n]}` };
              },
            },
          ],
        }
      : {}),
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

function ratio(a: { requestsPerSecond: number }, base: { requestsPerSecond: number }): number {
  return Math.round((a.requestsPerSecond / base.requestsPerSecond) * 100) / 100;
}

function rss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}
