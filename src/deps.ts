// createDeps(config): the only place that opens real connections.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { LocalBus, RedisBus, type Bus } from './shared/bus.js';
import { createRedisClient, RedisHealth } from './shared/redis.js';
import { scaledClock, systemClock, type Clock } from './shared/clock.js';
import { createMetrics, type Metrics } from './shared/metrics.js';

export interface Deps {
  config: Config & { auth: { jwtSecret: string } };
  logger: Logger;
  database: DatabaseHandle;
  /** A single Redis or a Redis Cluster (see createRedisClient). */
  redis: Redis | undefined;
  /** Whether Redis answers (set when REDIS_URL or REDIS_CLUSTER_NODES is): callers skip it and fall back while it is down. */
  redisHealth: RedisHealth | undefined;
  bus: Bus;
  clock: Clock;
  metrics: Metrics;
  /** Closes what createDeps opened, in reverse order. */
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  logger?: Logger;
  database?: DatabaseHandle;
}

// Keys, tokens, codes and passwords never reach the log.
export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  '*.password',
  '*.newPassword',
  '*.currentPassword',
  '*.code',
  '*.refreshToken',
  '*.accessToken',
  '*.secret',
  '*.token',
  // A device key (Traccar Client's JSON body), should a body ever be logged.
  '*.device_id',
  'device_id',
];

export function createLogger(config: Config): Logger {
  return pino({ level: config.server.logLevel, redact: { paths: LOG_REDACT, censor: '[redacted]' } });
}

export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const logger = overrides.logger ?? createLogger(config);
  const jwtSecret = config.auth.jwtSecret ?? (await developmentJwtSecret(config.server.dataDir));

  const database =
    overrides.database ??
    (await openDatabase({
      url: config.database.url,
      dataDir: path.join(config.server.dataDir, 'pgdata'),
      connectTimeoutMs: config.database.connectTimeoutMs,
    }));
  const unwatch = database.availability.watch(logger);
  const closers: (() => Promise<unknown>)[] = [() => database.close(), async () => unwatch()];
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');

    const redis = await createRedisClient(config);
    let redisHealth: RedisHealth | undefined;
    let bus: Bus;
    if (redis) {
      const health = (redisHealth = new RedisHealth(logger));
      const client = redis;
      closers.push(async () => client.disconnect());
      await redis.connect();
      health.watch('main', redis);
      const redisBus = new RedisBus(redis, config.redis.keyPrefix, health, logger);
      await redisBus.ready();
      bus = redisBus;
      // Before the main connection closes: connections closed on purpose are not failures.
      closers.push(async () => health.close());
    } else {
      bus = new LocalBus(logger);
    }
    closers.push(() => bus.close());

    return {
      config: { ...config, auth: { ...config.auth, jwtSecret } },
      logger,
      database,
      redis,
      redisHealth,
      bus,
      // CLOCK_RATE (section 22): the service's clock runs faster (tests and the simulator; refused in production).
      clock:
        overrides.clock ??
        (config.scheduling.clockRate !== 1
          ? scaledClock(config.scheduling.clockRate, config.scheduling.clockAnchorMs ?? undefined)
          : systemClock),
      metrics: createMetrics(),
      close: async () => {
        for (const close of closers.reverse()) await close().catch((err) => logger.warn({ err }, 'close failed'));
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    throw err;
  }
}

/** Development only: a random key generated once and kept in DATA_DIR, so tokens survive restarts. */
async function developmentJwtSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'jwt-secret');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch {
    // not there yet
  }
  const secret = randomBytes(48).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
