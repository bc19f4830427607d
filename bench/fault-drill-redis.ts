// Redis fault drill: two API processes on one PostgreSQL server (a database of the drill's own) and a
// redis-server of the drill's own, under a steady mixed load; Redis is killed and started again, then
// frozen (SIGSTOP) and thawed. Prints, per phase, the requests answered and failed (by status), the
// worst latency, and the time until both instances are fully ready again after each fault.
//
//   npx tsx bench/fault-drill-redis.ts        (DRILL_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID, createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { TokenService } from '../src/modules/auth/tokens.js';
import { systemClock } from '../src/shared/clock.js';
import { createServerDatabase } from '../test/helpers/database.js';
import { freePort, RedisServer } from '../test/helpers/redis-server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const baseUrl = process.env.DRILL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const JWT_SECRET = `drill-${randomBytes(24).toString('hex')}`;
const PHASE_MS = Number(process.env.DRILL_PHASE_MS ?? 4000);
const CONCURRENCY = Number(process.env.DRILL_CONCURRENCY ?? 16);
const DRIVERS = 50;

interface Instance {
  port: number;
  child: ChildProcess;
  log: string[];
}

async function startInstance(env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  let buffered = '';
  const take = (chunk: Buffer) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    log.push(...lines.filter(Boolean));
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const deadline = Date.now() + 60_000;
  while (!log.some((l) => l.includes('"msg":"ready"'))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`instance did not start:\n${log.join('\n')}`);
    await sleep(100);
  }
  return { port, child, log };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Sample {
  at: number;
  status: string;
  ms: number;
}

async function main() {
  const redis = await RedisServer.start();
  const database = await createServerDatabase(baseUrl, 'drill');
  const instances: Instance[] = [];
  try {
    // Seed: migrate once (the instances then find nothing to do), a business, a customer, drivers.
    const handle = await openDatabase({ url: database.url });
    await migrateToLatest(handle.db);
    const config = loadConfig({ JWT_SECRET, NODE_ENV: 'test', DATA_DIR: '/tmp/rd-drill' });
    const tokens = new TokenService({
      secret: JWT_SECRET,
      issuer: config.auth.jwtIssuer,
      audience: config.auth.jwtAudience,
      accessTtlMs: 3_600_000,
      clock: systemClock,
    });
    const country = (
      await handle.db.selectFrom('countries').select('id').where('code', '=', 'KE').executeTakeFirstOrThrow()
    ).id;
    const user = async (role: 'BUSINESS' | 'CUSTOMER' | 'DRIVER') => {
      const id = randomUUID();
      await handle.db
        .insertInto('users')
        .values({
          id,
          email: `${role.toLowerCase()}-${id.slice(0, 8)}@example.com`,
          phone: `+2547${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`,
          password_hash: 'x',
          first_name: 'Drill',
          last_name: role,
          role,
          status: 'ACTIVE',
          status_reason: null,
          country_id: country,
          is_phone_verified: true,
        })
        .execute();
      if (role === 'BUSINESS')
        await handle.db
          .insertInto('business_profiles')
          .values({ user_id: id, business_name: 'Drill', business_address: null })
          .execute();
      if (role === 'DRIVER')
        await handle.db
          .insertInto('driver_profiles')
          .values({
            user_id: id,
            vehicle_type: 'BIKE',
            vehicle_plate: `KD ${id.slice(0, 4)}`,
            company_id: null,
            service_types: ['RIDE', 'PACKAGE_DELIVERY'],
            availability: 'ONLINE',
          })
          .execute();
      const sessionId = randomUUID();
      await handle.db
        .insertInto('auth_sessions')
        .values({
          id: sessionId,
          user_id: id,
          refresh_token_hash: createHash('sha256').update(randomBytes(16)).digest('hex'),
          remember_me: false,
          expires_at: new Date(Date.now() + 86_400_000),
          revoked_at: null,
          last_used_at: null,
        })
        .execute();
      const { token } = await tokens.signAccess({ userId: id, role, sessionId });
      return { id, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
    };
    const business = await user('BUSINESS');
    const customer = await user('CUSTOMER');
    const drivers = await Promise.all(Array.from({ length: DRIVERS }, () => user('DRIVER')));
    await handle.close();

    const env = {
      NODE_ENV: 'development',
      DATA_DIR: '/tmp/rd-drill',
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      JWT_SECRET,
      LOG_LEVEL: 'info',
      // High enough never to refuse the drill, so every request still goes through the shared limiter.
      RATE_LIMIT_GLOBAL: '100000000/15m',
      SMS_TRANSPORT: 'console',
      ADMIN_EMAIL: 'admin@example.com',
      ADMIN_PHONE: '+254700000001',
      ADMIN_PASSWORD: 'drill-admin-password-1',
    };
    instances.push(await startInstance(env));
    instances.push(await startInstance(env));
    const url = (i: number, p: string) => `http://127.0.0.1:${instances[i % 2].port}${p}`;

    const packages: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(url(i, '/api/packages'), {
        method: 'POST',
        headers: business.headers,
        body: JSON.stringify({
          pickup: {
            location: { lat: -1.2864, lng: 36.8172 },
            address: 'Moi Avenue 1',
            contactName: 'A',
            contactPhone: '+254712345678',
          },
          dropoff: {
            location: { lat: -1.3, lng: 36.8 },
            address: 'Ngong Road 2',
            contactName: 'B',
            contactPhone: '+254722000111',
          },
          vehicleType: 'BIKE',
          countryId: country,
          parcel: { description: 'Documents', weightKg: 1, size: 'SMALL' },
        }),
      });
      if (res.status !== 201) throw new Error(`creating a package: ${res.status} ${await res.text()}`);
      packages.push(((await res.json()) as { id: string }).id);
    }

    // The load: a mix of cached reads, positions and matching, spread over both instances.
    const samples: Sample[] = [];
    let running = true;
    const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)];
    const one = async (n: number) => {
      const r = Math.random();
      const jitter = () => (Math.random() - 0.5) * 0.02;
      const [p, init]: [string, RequestInit] =
        r < 0.4
          ? [`/api/packages/${pick(packages)}`, { headers: business.headers }]
          : r < 0.6
            ? ['/api/auth/me', { headers: customer.headers }]
            : r < 0.8
              ? [
                  '/api/drivers/me/location',
                  {
                    method: 'POST',
                    headers: pick(drivers).headers,
                    body: JSON.stringify({ lat: -1.2864 + jitter(), lng: 36.8172 + jitter() }),
                  },
                ]
              : [
                  '/api/matching/find-drivers',
                  {
                    method: 'POST',
                    headers: customer.headers,
                    body: JSON.stringify({
                      pickupLocation: { lat: -1.2864, lng: 36.8172 },
                      vehicleType: 'BIKE',
                      orderType: 'PACKAGE_DELIVERY',
                    }),
                  },
                ];
      const started = performance.now();
      let status: string;
      try {
        const res = await fetch(url(n, p), { ...init, signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        status = String(res.status);
      } catch (err) {
        status = (err as Error).name === 'TimeoutError' ? 'timeout' : 'network error';
      }
      samples.push({ at: started, status, ms: performance.now() - started });
    };
    const workers = Array.from({ length: CONCURRENCY }, async (_, w) => {
      for (let n = w; running; n += CONCURRENCY) await one(n);
    });

    const ready = async (i: number) => {
      try {
        const res = await fetch(url(i, '/health/ready'), { signal: AbortSignal.timeout(2000) });
        return ((await res.json()) as { status: string }).status;
      } catch {
        return 'no answer';
      }
    };
    /** Polls both instances until both say ok; the time it took. */
    const untilFullService = async () => {
      const started = performance.now();
      while ((await ready(0)) !== 'ok' || (await ready(1)) !== 'ok') await sleep(25);
      return performance.now() - started;
    };

    const phases: { name: string; from: number; to: number; recoveryMs?: number; readyDuring?: string[] }[] = [];
    const phase = async (name: string, run: () => Promise<{ recoveryMs?: number; readyDuring?: string[] } | void>) => {
      const from = performance.now();
      const extra = (await run()) ?? {};
      phases.push({ name, from, to: performance.now(), ...extra });
    };
    const logFrom = instances.map((i) => i.log.length);

    await phase('before (Redis up)', () => sleep(PHASE_MS));
    await phase('Redis killed', async () => {
      await redis.kill();
      await sleep(PHASE_MS / 2);
      const readyDuring = [await ready(0), await ready(1)];
      await sleep(PHASE_MS / 2);
      return { readyDuring };
    });
    await phase('Redis started again', async () => {
      await redis.start();
      const recoveryMs = await untilFullService();
      await sleep(Math.max(0, PHASE_MS - recoveryMs));
      return { recoveryMs };
    });
    await phase('Redis frozen (SIGSTOP)', async () => {
      redis.freeze();
      await sleep(PHASE_MS / 2);
      const readyDuring = [await ready(0), await ready(1)];
      await sleep(PHASE_MS / 2);
      return { readyDuring };
    });
    await phase('Redis thawed (SIGCONT)', async () => {
      redis.thaw();
      const recoveryMs = await untilFullService();
      await sleep(Math.max(0, PHASE_MS - recoveryMs));
      return { recoveryMs };
    });
    running = false;
    await Promise.all(workers);

    console.log(
      `Redis fault drill: 2 instances, ${CONCURRENCY} concurrent clients, ${DRIVERS} drivers, ${packages.length} packages`,
    );
    for (const p of phases) {
      const inPhase = samples.filter((s) => s.at >= p.from && s.at < p.to);
      const byStatus: Record<string, number> = {};
      for (const s of inPhase) byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
      const failed = Object.entries(byStatus).filter(([status]) => !/^2/.test(status));
      const worst = Math.max(0, ...inPhase.map((s) => s.ms));
      const sorted = inPhase.map((s) => s.ms).sort((x, y) => x - y);
      const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0;
      console.log(
        `${p.name.padEnd(24)} answered ${String(inPhase.length).padStart(6)}  failed ${failed.length ? JSON.stringify(Object.fromEntries(failed)) : 0}` +
          `  worst ${Math.round(worst)} ms  p99 ${Math.round(p99)} ms` +
          (p.readyDuring ? `  ready: ${p.readyDuring.join(' / ')}` : '') +
          (p.recoveryMs !== undefined ? `  full service after ${Math.round(p.recoveryMs)} ms` : ''),
      );
    }
    for (const [i, instance] of instances.entries()) {
      const lines = instance.log.slice(logFrom[i]).map((l) => {
        try {
          return JSON.parse(l) as { level: number; msg: string };
        } catch {
          return { level: 0, msg: l };
        }
      });
      const notable = lines.filter((l) => l.level >= 40 || /redis/i.test(l.msg));
      const errors = lines.filter((l) => l.level >= 50).length;
      console.log(
        `instance ${i + 1}: ${errors} error lines; Redis and warning lines: ${JSON.stringify(notable.map((l) => l.msg))}`,
      );
    }
  } finally {
    for (const instance of instances) {
      instance.child.kill('SIGTERM');
      await new Promise((resolve) =>
        instance.child.exitCode !== null ? resolve(null) : instance.child.once('exit', resolve),
      );
    }
    await redis.close();
    await database.drop();
  }
}

await main();
