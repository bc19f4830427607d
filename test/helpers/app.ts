// Builds the real app for a test: real database (see database.ts), real Redis when TEST_REDIS_URL
// is set and the test asks for it, a manual clock, silent logs, rate limits off unless asked for.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, LOG_REDACT, type Deps } from '../../src/deps.js';
import type { App } from '../../src/http/context.js';
import { createServices, type Services } from '../../src/services.js';
import { TokenService } from '../../src/modules/auth/tokens.js';
import { ManualClock } from '../../src/shared/clock.js';
import { createTestDatabase, testRedisUrl, type TestDatabase } from './database.js';

export const TEST_JWT_SECRET = 'tst-Hs256-key-long-enough-0123456789-abcdefghijklmnop';

export interface TestApp {
  app: App;
  deps: Deps;
  /** The app's services (the same instances its routes and background work use). */
  services: Services;
  db: Deps['database']['db'];
  database: TestDatabase;
  clock: ManualClock;
  tokens: TokenService;
  /** Lines the app logged (JSON strings), for tests that check what is (not) logged. */
  logLines: string[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Extra environment variables (they win over the test defaults). */
  env?: Record<string, string>;
  /** Use the Redis server (TEST_REDIS_URL) with a key prefix of its own. */
  redis?: boolean;
  /** Share an existing database (two app instances on one database). */
  database?: TestDatabase;
  /** Share a Redis key prefix with another instance. */
  redisKeyPrefix?: string;
  clock?: ManualClock;
}

export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  JWT_SECRET: TEST_JWT_SECRET,
  LOG_LEVEL: 'info',
  RATE_LIMIT_GLOBAL: 'off',
  RATE_LIMIT_LOGIN: 'off',
  RATE_LIMIT_LOGIN_SEND_OTP: 'off',
  RATE_LIMIT_REGISTER_SEND_OTP: 'off',
  // Tests move drivers about freely; those of the plausibility rule turn it on.
  MAX_PLAUSIBLE_SPEED: 'off',
  SMS_TRANSPORT: 'console',
  WEBHOOK_WORKER_IN_PROCESS: 'false',
};

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  if (options.redis && !testRedisUrl) throw new Error('TEST_REDIS_URL is not set (skip this test when it is not)');
  const redisKeyPrefix = options.redisKeyPrefix ?? `test:${randomBytes(6).toString('hex')}:`;
  const env: Record<string, string> = {
    ...TEST_ENV,
    DATA_DIR: `/tmp/rd-test-${process.pid}`,
    ...(options.redis ? { REDIS_URL: testRedisUrl!, REDIS_KEY_PREFIX: redisKeyPrefix } : {}),
    ...options.env,
  };
  const config = loadConfig(env);
  const clock = options.clock ?? new ManualClock(new Date());
  const logLines: string[] = [];
  const logger = pino(
    { level: config.server.logLevel, redact: { paths: LOG_REDACT, censor: '[redacted]' } },
    { write: (line: string) => void logLines.push(line) },
  );
  const ownDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  const deps = await createDeps(config, { clock, logger, database: { ...database, close: async () => undefined } });
  const services = await createServices(deps);
  const app = await buildApp({ deps, services });
  await app.ready();
  const tokens = new TokenService({
    secret: deps.config.auth.jwtSecret,
    issuer: config.auth.jwtIssuer,
    audience: config.auth.jwtAudience,
    accessTtlMs: config.auth.accessTokenTtlMs,
    clock,
  });
  return {
    app,
    deps,
    services,
    db: database.db,
    database,
    clock,
    tokens,
    logLines,
    close: async () => {
      await app.close();
      services.close();
      await deps.close();
      if (options.redis && !options.redisKeyPrefix) await deleteRedisKeys(redisKeyPrefix);
      if (ownDatabase) await database.close();
    },
  };
}

/** Removes every key under a test's prefix (tests never FLUSHDB: other runs may share the server). */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  if (!testRedisUrl) return;
  const redis = new Redis(testRedisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export const redisSkipReason = testRedisUrl ? false : 'needs a Redis server: set TEST_REDIS_URL';
