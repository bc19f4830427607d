// B5: logins per second (the argon2id password step, POST /api/auth/login) and the p99 of a cheap
// authenticated route (GET /api/auth/me) alone and during a login storm. In-process app on a
// loopback port, rate limits off; PGlite in memory unless DATABASE_URL is set. Prints one JSON object.
//   npx tsx bench/login.ts   (BENCH_SECONDS=5 BENCH_ME_RATE=200 BENCH_LOGIN_CONNECTIONS=16 BENCH_HASH_CONCURRENCY=<cores>)
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import argon2 from 'argon2';
import autocannon from 'autocannon';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { openDatabase } from '../src/db/database.js';
import { setPasswordHashConcurrency } from '../src/modules/auth/passwords.js';
import { TokenService } from '../src/modules/auth/tokens.js';
import { createServices } from '../src/services.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ME_RATE = Number(process.env.BENCH_ME_RATE ?? 200);
const LOGIN_CONNECTIONS = Number(process.env.BENCH_LOGIN_CONNECTIONS ?? 16);
const HASH_CONCURRENCY = Number(process.env.BENCH_HASH_CONCURRENCY ?? os.availableParallelism());
setPasswordHashConcurrency(HASH_CONCURRENCY);
const USERS = 400; // each phone may receive 10 codes an hour
const PASSWORD = 'benchmark-passphrase-1';

const dir = mkdtempSync(path.join(os.tmpdir(), 'rd-bench-login-'));
const config = loadConfig({
  NODE_ENV: 'test',
  DATA_DIR: dir,
  JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256-0123456789',
  LOG_LEVEL: 'warn',
  SMS_TRANSPORT: 'file',
  SMS_FILE: path.join(dir, 'sms.log'),
  RATE_LIMIT_GLOBAL: 'off',
  RATE_LIMIT_LOGIN: 'off',
  RATE_LIMIT_LOGIN_SEND_OTP: 'off',
  RATE_LIMIT_REGISTER_SEND_OTP: 'off',
  WEBHOOK_WORKER_IN_PROCESS: 'false',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const database = await openDatabase({ url: config.database.url });
const deps = await createDeps(config, { database });
const services = await createServices(deps);
const app = await buildApp({ deps, services });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

// Accounts: one shared argon2id hash (the cost is in verifying, which every login does).
const db = deps.database.db;
const hash = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
const country = (await db.selectFrom('countries').select('id').where('code', '=', 'KE').executeTakeFirstOrThrow()).id;
const emails: string[] = [];
const runTag = randomUUID().slice(0, 8);
for (let i = 0; i < USERS; i++) {
  const email = `bench-${runTag}-${i}@example.com`;
  emails.push(email);
  await db
    .insertInto('users')
    .values({
      id: randomUUID(),
      email,
      phone: `+2547${String(10_000_000 + i + Math.floor(Math.random() * 80_000_000)).slice(0, 8)}`,
      password_hash: hash,
      first_name: 'Bench',
      last_name: String(i),
      role: 'CUSTOMER',
      status: 'ACTIVE',
      status_reason: null,
      country_id: country,
    })
    .execute();
}
const meUser = await db
  .selectFrom('users')
  .select(['id', 'role'])
  .where('email', '=', emails[0])
  .executeTakeFirstOrThrow();
const sessionId = randomUUID();
await db
  .insertInto('auth_sessions')
  .values({
    id: sessionId,
    user_id: meUser.id,
    refresh_token_hash: createHash('sha256').update(randomUUID()).digest('hex'),
    remember_me: false,
    expires_at: new Date(Date.now() + 86_400_000),
    revoked_at: null,
    last_used_at: null,
  })
  .execute();
const tokens = new TokenService({
  secret: deps.config.auth.jwtSecret,
  issuer: config.auth.jwtIssuer,
  audience: config.auth.jwtAudience,
  accessTtlMs: 3_600_000,
  clock: deps.clock,
});
const accessToken = (await tokens.signAccess({ userId: meUser.id, role: meUser.role, sessionId })).token;

/** Bare library baseline: argon2id verifications per second with the thread pool kept busy. */
async function argon2Baseline(seconds: number): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < until) {
      await argon2.verify(hash, PASSWORD);
      done += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: HASH_CONCURRENCY }, worker));
  return done / ((performance.now() - started) / 1000);
}

function meLoad(seconds: number) {
  // Fixed arrival rate (open loop), so queueing behind logins shows in the latency.
  return autocannon({
    url: `${base}/api/auth/me`,
    headers: { authorization: `Bearer ${accessToken}` },
    connections: 20,
    overallRate: ME_RATE,
    duration: seconds,
  });
}

function loginStorm(seconds: number) {
  let i = 0;
  return autocannon({
    url: `${base}/api/auth/login`,
    connections: LOGIN_CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/api/auth/login',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({ identifier: emails[i++ % emails.length], password: PASSWORD }),
        }),
      },
    ],
  });
}

const summary = (r: autocannon.Result) => ({
  requests: r.requests.total,
  perSecond: Math.round(r.requests.total / (r.duration || 1)),
  p50Ms: r.latency.p50,
  p99Ms: r.latency.p99,
  non2xx: r.non2xx,
  errors: r.errors + r.timeouts,
});

try {
  // Warm up the JIT, the pool and the dummy hash.
  await Promise.all([meLoad(1), loginStorm(1)]);
  const bare = await argon2Baseline(3);
  const solo = await meLoad(SECONDS);
  const [storm, during] = await Promise.all([loginStorm(SECONDS), meLoad(SECONDS)]);
  const result = {
    benchmark: 'B5 login under load',
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      threadPool: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
      loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    },
    hashConcurrency: HASH_CONCURRENCY,
    database: deps.database.kind,
    seconds: SECONDS,
    argon2idVerifyPerSecondBare: Math.round(bare),
    logins: {
      ...summary(storm),
      connections: LOGIN_CONNECTIONS,
      ratioToBare: Number((storm.requests.total / storm.duration / bare).toFixed(2)),
    },
    meSolo: { rate: ME_RATE, ...summary(solo) },
    meDuringLoginStorm: { rate: ME_RATE, ...summary(during) },
    meP99DuringStormOverSolo: Number((during.latency.p99 / Math.max(solo.latency.p99, 1)).toFixed(2)),
    targets: { loginsPerSecond: 80, meP99Ratio: 1.5 },
    rssMB: Math.round(process.memoryUsage().rss / 1048576),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  // Let the logins still in flight when autocannon stopped finish before the database closes.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await app.close();
  await deps.close();
  rmSync(dir, { recursive: true, force: true });
}
