// Configuration: a pure function of the environment, validated at once, every bad variable named.
// One reader per group of variables, in config/; to add a variable, add it to its group's type and reader.
import type { RateLimitSpec } from './config/durations.js';
import { EnvReader, type DurationSetting, type Env } from './config/env-reader.js';
import { readAuth, type AuthConfig } from './config/auth.js';
import {
  readDispatch,
  readDrivers,
  readGeocoder,
  readPricing,
  readRatings,
  readTracking,
  type DispatchConfig,
  type DriversConfig,
  type GeocoderConfig,
  type PricingConfig,
  type RatingsConfig,
  type TrackingConfig,
} from './config/jobs.js';
import { readPush, readWebhooks, type PushConfig, type WebhooksConfig } from './config/outbound.js';
import { readOptimizer, type OptimizerConfig } from './config/optimizer.js';
import { readProof, type ProofConfig } from './config/proof.js';
import { readRecurring, type RecurringConfig } from './config/recurring.js';
import {
  readRateLimits,
  readServer,
  readWeb,
  type RateLimitsConfig,
  type ServerConfig,
  type WebConfig,
} from './config/server.js';
import { readRouting, type RoutingConfig } from './config/routing.js';
import { readSms, type SmsConfig } from './config/sms.js';
import { readMpesa, type MpesaConfig } from './config/mpesa.js';
import { readScheduling, type SchedulingConfig } from './config/scheduling.js';
import { readAlerts, type AlertsConfig } from './config/alerts.js';
import { readDatabase, readRedis, type DatabaseConfig, type RedisConfig } from './config/stores.js';

export type { RateLimitSpec };
export type { S3Config } from './config/proof.js';

/** Every setting belongs to one group, read by that group's reader. */
export interface Config {
  server: ServerConfig;
  database: DatabaseConfig;
  redis: RedisConfig;
  auth: AuthConfig;
  sms: SmsConfig;
  web: WebConfig;
  rateLimits: RateLimitsConfig;
  drivers: DriversConfig;
  webhooks: WebhooksConfig;
  pricing: PricingConfig;
  dispatch: DispatchConfig;
  tracking: TrackingConfig;
  push: PushConfig;
  ratings: RatingsConfig;
  geocoder: GeocoderConfig;
  proof: ProofConfig;
  routing: RoutingConfig;
  optimizer: OptimizerConfig;
  /** Undefined when M-Pesa is off (MPESA_CONSUMER_KEY unset). */
  mpesa: MpesaConfig | undefined;
  scheduling: SchedulingConfig;
  recurring: RecurringConfig;
  alerts: AlertsConfig;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  const config = readConfig(r);
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** For entry points: the configuration, or the list of problems on stderr and exit code 1. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

/** Every duration variable loadConfig reads, with its maximum. */
export function durationSettings(): DurationSetting[] {
  const r = new EnvReader({});
  readConfig(r);
  return r.durations;
}

// The order of the readers is the order of the problems in ConfigError (and of durationSettings).
function readConfig(r: EnvReader): Config {
  const server = readServer(r);
  return {
    server,
    database: readDatabase(r, server),
    redis: readRedis(r),
    auth: readAuth(r, server),
    sms: readSms(r, server),
    web: readWeb(r),
    rateLimits: readRateLimits(r),
    drivers: readDrivers(r),
    webhooks: readWebhooks(r, server),
    pricing: readPricing(r),
    dispatch: readDispatch(r),
    tracking: readTracking(r, server),
    push: readPush(r, server),
    ratings: readRatings(r),
    geocoder: readGeocoder(r),
    proof: readProof(r),
    routing: readRouting(r),
    optimizer: readOptimizer(r),
    mpesa: readMpesa(r, server),
    scheduling: readScheduling(r, server),
    recurring: readRecurring(r),
    alerts: readAlerts(r),
  };
}
