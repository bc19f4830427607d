// `npm run test:cluster`: the compiled service (dist/, built by the npm script) as it runs in
// production: three API instances and one webhook worker on a PostgreSQL cluster and a Redis Cluster
// (three primaries, one replica each) of the test's own, behind HAProxy. Everything is checked
// through the balancer, including what clients see when an instance is killed and when a Redis
// primary fails over.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { TokenService } from '../../src/modules/auth/tokens.js';
import { systemClock } from '../../src/shared/clock.js';
import type { TestApp } from '../helpers/app.js';
import { createUser, TEST_PASSWORD, type TestUser } from '../helpers/factories.js';
import { pgClusterSkipReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { freePort, projectRoot, spawnNode, waitFor, type NodeProcess } from '../helpers/processes.js';
import { redisClusterSkipReason, startRedisCluster, type RedisClusterHandle } from '../helpers/redis-cluster.js';
import { startReceiver, type TestReceiver } from '../webhooks-receiver.js';
import { packageBody } from '../packages-helpers.js';

const haproxyMissing = spawnSync('haproxy', ['-v']).error ? 'needs haproxy on PATH (apt-get install haproxy)' : false;
const distMissing =
  spawnSync('test', ['-f', path.join(projectRoot, 'dist/server.js')]).status !== 0
    ? 'needs dist/ (npm run build)'
    : false;
const skip = haproxyMissing || redisClusterSkipReason || pgClusterSkipReason || distMissing;

const PREFIX = 'rdc:';
const DRIVERS = 30;
const CENTRE = { lat: -1.2864, lng: 36.8172 };
/** Statuses a balancer gives while an instance is going away: a client retries them. */
const RETRIABLE = new Set([502, 503, 504]);

interface Outcome {
  at: number;
  what: string;
  status: number | 'connection';
  error?: string;
}

describe('three instances and a worker behind HAProxy, on a Redis Cluster', { skip }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rd-scale-'));
  const smsFile = path.join(dir, 'sms.log');
  let pg: PgCluster;
  let redis: RedisClusterHandle;
  let receiver: TestReceiver;
  let database: DatabaseHandle;
  let seed: TestApp;
  const apis: { port: number; proc: NodeProcess }[] = [];
  let worker: NodeProcess;
  let haproxy: ChildProcess;
  let base = '';
  let business: TestUser;
  let drivers: TestUser[] = [];

  async function startApi(env: Record<string, string>) {
    const port = await freePort();
    const proc = spawnNode(['--enable-source-maps', 'dist/server.js'], {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => undefined))?.status === 200,
      60_000,
      `API on ${port}`,
      proc.output,
    );
    apis.push({ port, proc });
  }

  before(async () => {
    [pg, redis, receiver] = await Promise.all([startPgCluster(), startRedisCluster(), startReceiver()]);
    const databaseUrl = await pg.createDatabase('rd_scale');
    const jwtSecret = randomBytes(48).toString('base64url');
    const env = {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      REDIS_CLUSTER_NODES: redis.seeds,
      REDIS_KEY_PREFIX: PREFIX,
      JWT_SECRET: jwtSecret,
      SMS_TRANSPORT: 'file',
      SMS_FILE: smsFile,
      SMS_ALLOW_FILE_IN_PRODUCTION: 'true',
      // Every loopback hop is trusted: each check counts under the address it puts in X-Forwarded-For.
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_GLOBAL: 'off',
      // Drivers are placed at random points around the centre, a kilometre apart in a moment.
      MAX_PLAUSIBLE_SPEED: 'off',
      RATE_LIMIT_LOGIN: '5/15m',
      WEBHOOK_WORKER_IN_PROCESS: 'false',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      LOG_LEVEL: 'warn',
      DATA_DIR: dir,
    };
    // The first applies the migrations; the others start on the migrated database.
    await startApi(env);
    await Promise.all([startApi(env), startApi(env)]);
    const workerPort = await freePort();
    worker = spawnNode(['--enable-source-maps', 'dist/worker.js'], { ...env, WORKER_PORT: String(workerPort) });
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${workerPort}/health/ready`).catch(() => undefined))?.status === 200,
      60_000,
      'the worker',
      worker.output,
    );

    const lbPort = await freePort();
    const cfg = path.join(dir, 'haproxy.cfg');
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
        '  option forwardfor',
        '  option http-server-close',
        'frontend api',
        `  bind 127.0.0.1:${lbPort}`,
        '  default_backend api',
        'backend api',
        // Round robin, so that consecutive requests visit every instance.
        '  balance roundrobin',
        '  option httpchk GET /health/ready',
        '  http-check expect status 200',
        '  retries 2',
        '  retry-on conn-failure',
        '  option redispatch',
        // A killed instance refuses the check at once: down after two (1 s). A slow answer on a busy
        // machine is given 2 s, so that every instance is not marked down at once.
        '  timeout check 2s',
        '  default-server check inter 500ms fall 2 rise 2',
        ...apis.map((a, i) => `  server api${i + 1} 127.0.0.1:${a.port}`),
        '',
      ].join('\n'),
    );
    haproxy = spawn('haproxy', ['-f', cfg, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    haproxy.stderr!.resume();
    base = `http://127.0.0.1:${lbPort}`;
    await waitFor(
      async () => (await fetch(`${base}/health/ready`).catch(() => undefined))?.status === 200,
      10_000,
      'HAProxy',
    );

    database = await openDatabase({ url: databaseUrl });
    const tokens = new TokenService({
      secret: jwtSecret,
      issuer: 'ride-delivery-backend',
      audience: 'ride-delivery-api',
      accessTtlMs: 15 * 60_000,
      clock: systemClock,
    });
    seed = { db: database.db, clock: systemClock, tokens } as unknown as TestApp;
    business = await createUser(seed, { role: 'BUSINESS' });
    drivers = await Promise.all(
      Array.from({ length: DRIVERS }, () => createUser(seed, { role: 'DRIVER', driver: { vehicleType: 'BIKE' } })),
    );
  });

  after(async () => {
    haproxy?.kill('SIGKILL');
    for (const { proc } of apis) proc.child.kill('SIGTERM');
    worker?.child.kill('SIGTERM');
    await Promise.all([...apis.map((a) => a.proc.exited), worker?.exited]);
    await database?.close();
    await Promise.all([receiver?.close(), redis?.close(), pg?.destroy()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, url: string, headers: Record<string, string> = {}, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    // HAProxy's own answers (502, 503, 504) are HTML.
    const json = text && res.headers.get('content-type')?.includes('application/json') ? JSON.parse(text) : undefined;
    return { status: res.status, json: json as any };
  };

  test('a token from a login on one instance works on every instance; logout revokes it everywhere', async () => {
    const customer = await createUser(seed, { role: 'CUSTOMER', session: false });
    const ip = { 'x-forwarded-for': '10.50.0.1' };
    const login = await call('POST', '/api/auth/login', ip, { identifier: customer.email, password: TEST_PASSWORD });
    assert.equal(login.status, 200, JSON.stringify(login.json));
    const code = readFileSync(smsFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((m) => m.to === customer.phone)
      .at(-1)
      .text.match(/\b(\d{6})\b/)[1];
    const verified = await call('POST', '/api/auth/login/verify-otp', ip, {
      sessionId: login.json.sessionId,
      phone: customer.phone,
      code,
    });
    assert.equal(verified.status, 200);
    const auth = { authorization: `Bearer ${verified.json.accessToken}` };
    for (let i = 0; i < apis.length * 2; i++)
      assert.equal((await call('GET', '/api/auth/me', auth)).status, 200, `request ${i}`);
    assert.equal(
      (await call('POST', '/api/auth/logout', {}, { refreshToken: verified.json.refreshToken })).status,
      200,
    );
    // Every instance refuses it within a moment (each caches sessions; the bus drops them).
    const deadline = Date.now() + 2000;
    let statuses: number[] = [];
    do {
      statuses = [];
      for (let i = 0; i < apis.length * 2; i++) statuses.push((await call('GET', '/api/auth/me', auth)).status);
    } while (statuses.some((s) => s !== 401) && Date.now() < deadline);
    assert.deepEqual(statuses, Array(apis.length * 2).fill(401));
  });

  test('the login limit is shared: 5 per address over all instances, the 6th is 429 wherever it lands', async () => {
    const ip = { 'x-forwarded-for': '10.50.0.2' };
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++)
      statuses.push(
        (await call('POST', '/api/auth/login', ip, { identifier: 'nobody@example.com', password: 'p-p-p-p-p' })).status,
      );
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429]);
  });

  test('positions reported through any instance are found from every instance', async () => {
    await Promise.all(
      drivers.map(async (d, i) => {
        assert.equal((await call('POST', '/api/drivers/me/availability', d.headers, { status: 'ONLINE' })).status, 200);
        const at = { lat: CENTRE.lat + (i % 6) * 0.002, lng: CENTRE.lng + Math.floor(i / 6) * 0.002 };
        assert.equal((await call('POST', '/api/drivers/me/location', d.headers, at)).status, 204);
      }),
    );
    const query = { pickupLocation: CENTRE, vehicleType: 'BIKE', orderType: 'PACKAGE_DELIVERY', limit: 50 };
    const deadline = Date.now() + 3000;
    let counts: number[] = [];
    do {
      counts = [];
      for (let i = 0; i < apis.length; i++)
        counts.push((await call('POST', '/api/matching/find-drivers', business.headers, query)).json.drivers.length);
    } while (counts.some((c) => c !== DRIVERS) && Date.now() < deadline);
    assert.deepEqual(counts, Array(apis.length).fill(DRIVERS));
  });

  // Packages created (each with an Idempotency-Key, retried on a retriable failure) and drivers
  // answering their offers, all through the balancer, until `stop` is set.
  const created = new Set<string>();
  const accepted = new Map<string, string[]>();
  const cancelled = new Set<string>();
  const refused = new Set<string>();
  const outcomes: Outcome[] = [];
  async function traffic(ms: number, midway: () => Promise<void>) {
    const until = Date.now() + ms;
    const record = async (what: string, run: () => Promise<{ status: number; json: any }>) => {
      try {
        const res = await run();
        outcomes.push({ at: Date.now(), what, status: res.status });
        return res;
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        outcomes.push({
          at: Date.now(),
          what,
          status: 'connection',
          error: cause?.code ?? cause?.message ?? String(err),
        });
        return undefined;
      }
    };
    const creator = async () => {
      while (Date.now() < until) {
        const key = randomUUID();
        const body = packageBody(business.countryId, {
          pickup: {
            location: { lat: CENTRE.lat + Math.random() * 0.01, lng: CENTRE.lng + Math.random() * 0.01 },
            address: 'Moi Avenue 1, Nairobi',
            contactName: 'W',
            contactPhone: '+254712345678',
          },
        });
        // The same key until an answer that is not retriable: a 201 for an attempt that was applied.
        for (let attempt = 0; attempt < 20; attempt++) {
          const res = await record('create', () =>
            call('POST', '/api/packages', { ...business.headers, 'idempotency-key': key }, body),
          );
          if (res && !RETRIABLE.has(res.status)) {
            if (res.status === 201) created.add(res.json.id);
            break;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
        await new Promise((r) => setTimeout(r, 400));
      }
    };
    const driver = async (d: TestUser, i: number) => {
      while (Date.now() < until) {
        const at = {
          lat: CENTRE.lat + (i % 6) * 0.002 + Math.random() * 1e-4,
          lng: CENTRE.lng + Math.floor(i / 6) * 0.002,
        };
        await record('location', () => call('POST', '/api/drivers/me/location', d.headers, at));
        const offers = await record('offers', () => call('GET', '/api/drivers/me/offers', d.headers));
        const offer = offers?.status === 200 ? offers.json.offers[0] : undefined;
        if (offer) {
          const res = await record('accept', () => call('POST', `/api/offers/${offer.id}/accept`, d.headers));
          if (res?.status === 200) accepted.set(res.json.id, [...(accepted.get(res.json.id) ?? []), d.id]);
        }
        await new Promise((r) => setTimeout(r, 600 + Math.random() * 200));
      }
    };
    // The business cancels assigned packages as they come, so that drivers are free for more offers.
    const canceller = async () => {
      while (Date.now() < until) {
        const jobId = [...accepted.keys()].find((id) => !cancelled.has(id) && !refused.has(id));
        if (jobId) {
          const res = await record('cancel', () =>
            call('POST', `/api/packages/${jobId}/cancel`, business.headers, { reason: 'test' }),
          );
          if (res?.status === 200) cancelled.add(jobId);
          // A cancel whose answer was lost (the instance died) shows as a 409 when sent again.
          else if (res?.status === 409) {
            const now = await call('GET', `/api/packages/${jobId}`, business.headers).catch(() => undefined);
            if (now?.json?.status === 'CANCELLED') cancelled.add(jobId);
            else refused.add(jobId);
          }
        }
        await new Promise((r) => setTimeout(r, 150));
      }
    };
    await Promise.all([
      creator(),
      creator(),
      canceller(),
      ...drivers.map(driver),
      (async () => {
        await new Promise((r) => setTimeout(r, ms / 3));
        await midway();
      })(),
    ]);
  }

  /** `what status` → count, for the log line of each phase. */
  const tally = (list: Outcome[]) => {
    const counts: Record<string, number> = {};
    for (const o of list) {
      const key = `${o.what} ${o.status}${o.error ? ` (${o.error})` : ''}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return JSON.stringify(counts);
  };

  const invariants = async () => {
    const db = database.db;
    const { rows } = await sql<{ per_job: number; per_driver: number; holding_two: number }>`
      select (select count(*) from (select job_id from dispatch_offers where state = 'OPEN' group by job_id having count(*) > 1) j)::int as per_job,
             (select count(*) from (select driver_id from dispatch_offers where state = 'OPEN' group by driver_id having count(*) > 1) d)::int as per_driver,
             (select count(*) from (select driver_id from packages where driver_id is not null and status not in ('DELIVERED', 'FAILED', 'CANCELLED') group by driver_id having count(*) > 1) h)::int as holding_two`.execute(
      db,
    );
    assert.deepEqual(
      rows[0],
      { per_job: 0, per_driver: 0, holding_two: 0 },
      'one open offer per job and per driver; no driver holds two jobs',
    );
    for (const [jobId, by] of accepted) assert.equal(by.length, 1, `job ${jobId} accepted by ${by.join(', ')}`);
    const ids = [...created];
    const stored = ids.length
      ? await db.selectFrom('packages').select(['id', 'driver_id', 'status']).where('id', 'in', ids).execute()
      : [];
    assert.equal(stored.length, ids.length, 'every acknowledged package is stored');
    const byId = new Map(stored.map((p) => [p.id, p]));
    for (const id of cancelled) assert.equal(byId.get(id)?.status, 'CANCELLED', `package ${id} stays cancelled`);
    for (const [jobId, [driverId]] of accepted) {
      if (!cancelled.has(jobId))
        assert.equal(
          byId.get(jobId)?.driver_id,
          driverId,
          `job ${jobId} kept the driver whose accept was acknowledged`,
        );
    }
  };

  test('an API instance killed (SIGKILL) mid-traffic: only retriable errors, for a few seconds; nothing acknowledged is lost', async () => {
    await call('POST', '/api/webhooks', business.headers, { url: `${receiver.url}/hook` }).then((r) =>
      assert.equal(r.status, 201, JSON.stringify(r.json)),
    );
    let killedAt = 0;
    await traffic(9000, async () => {
      killedAt = Date.now();
      apis[1]!.proc.child.kill('SIGKILL');
    });
    const failures = outcomes.filter((o) => o.status === 'connection' || o.status >= 500);
    const unexpected = failures.filter((o) => o.status !== 'connection' && !RETRIABLE.has(o.status));
    assert.deepEqual(unexpected, [], 'no error other than 502/503/504 or a refused connection');
    const late = failures.filter((o) => o.at < killedAt || o.at > killedAt + 5000);
    assert.deepEqual(late, [], 'failures only within 5 s after the kill');
    assert.ok(
      created.size > 5 && accepted.size > 0,
      `traffic happened: ${created.size} packages, ${accepted.size} accepted`,
    );
    assert.ok(!apis.some((a, i) => i !== 1 && a.proc.child.exitCode !== null), 'the other instances run on');
    await invariants();
    console.log(
      `# kill: ${outcomes.length} requests, ${failures.length} retriable failures over ${failures.length ? failures.at(-1)!.at - failures[0]!.at : 0} ms, ${created.size} packages, ${accepted.size} accepted, ${cancelled.size} cancelled; ${tally(outcomes)}`,
    );
  });

  test('Redis primaries fail over mid-traffic: no job assigned twice, no driver with two jobs, every webhook event delivered once', async () => {
    const before = outcomes.length;
    const acceptedBefore = accepted.size;
    let moved: { from: number; to: number } | undefined;
    let movedPositions: { from: number; to: number } | undefined;
    await traffic(9000, async () => {
      moved = await redis.failover(`${PREFIX}bus`);
      // Then the primary of the positions hash and channel (the same one again if they share it).
      movedPositions = await redis.failover(`${PREFIX}drivers:positions`);
    });
    assert.ok(moved && moved.from !== moved.to && movedPositions && movedPositions.from !== movedPositions.to);
    assert.ok(accepted.size > acceptedBefore, 'dispatch went on during the failover');
    const during = outcomes.slice(before);
    const failures = during.filter((o) => o.status === 'connection' || o.status >= 500);
    const exited = apis.map((a) => a.proc.child.exitCode ?? a.proc.child.signalCode);
    assert.deepEqual(
      failures,
      [],
      `Redis failing over costs clients nothing (instances: ${exited}; ${apis.map((a) => a.proc.output().slice(-2000)).join('\n')})`,
    );
    await invariants();

    // Every event the outbox holds reaches the receiver, once each.
    const db = database.db;
    await waitFor(
      async () =>
        Number(
          (
            await db
              .selectFrom('webhook_deliveries')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('status', '!=', 'SUCCEEDED')
              .executeTakeFirstOrThrow()
          ).n,
        ) === 0,
      30_000,
      'every webhook delivery to succeed',
    );
    const deliveries = await db.selectFrom('webhook_deliveries').select('id').execute();
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    assert.ok(
      deliveries.length >= accepted.size,
      `${deliveries.length} deliveries for ${accepted.size} accepted packages`,
    );
    assert.deepEqual([...new Set(ids)].sort(), deliveries.map((d) => d.id).sort(), 'every event received');
    assert.equal(ids.length, new Set(ids).size, 'none received twice');
    console.log(
      `# failover ${moved!.from} -> ${moved!.to}, then ${movedPositions!.from} -> ${movedPositions!.to}: ${during.length} requests, ${accepted.size - acceptedBefore} accepted, ${deliveries.length} webhook events delivered once each; ${tally(during)}`,
    );
  });
});
