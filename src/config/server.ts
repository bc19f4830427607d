// The HTTP server and process: listen address, environment, timeouts, connection and stream caps,
// logs and metrics; the web console's map tiles; the rate limits.
import { isIP } from 'node:net';
import type { RateLimitSpec } from './durations.js';
import type { EnvReader } from './env-reader.js';

export interface ServerConfig {
  port: number;
  host: string;
  nodeEnv: string;
  isProduction: boolean;
  dataDir: string;
  logLevel: string;
  /** false, a hop count, or a list of trusted proxy addresses/CIDRs (Fastify's trustProxy). */
  trustProxy: boolean | number | string[];
  /** Slow clients: the whole request within requestTimeoutMs, its headers within headersTimeoutMs. */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  wsMaxPerDriver: number;
  /** Open event streams (SSE) per account and per client IP, on one process (contract section 14). */
  streamsPerAccount: number;
  streamsPerIp: number;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>`. */
  metricsToken: string | undefined;
}

export interface WebConfig {
  /** Raster tile URL template for the web console's maps ({z}/{x}/{y}, optional {s}). */
  mapTileUrl: string;
}

export interface RateLimitsConfig {
  global: RateLimitSpec | null;
  login: RateLimitSpec | null;
  loginSendOtp: RateLimitSpec | null;
  registerSendOtp: RateLimitSpec | null;
  /** Per device key on the OsmAnd positions route (outside the global per-IP limit). */
  osmand: RateLimitSpec | null;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function readServer(r: EnvReader): ServerConfig {
  const nodeEnv = r.str('NODE_ENV', 'development');
  // Node refuses a headers timeout longer than the request timeout.
  const [headersTimeoutMs, requestTimeoutMs] = r.ascending([
    ['HEADERS_TIMEOUT', r.duration('HEADERS_TIMEOUT', '10s', '1h')],
    ['REQUEST_TIMEOUT', r.duration('REQUEST_TIMEOUT', '30s', '1h')],
  ]);
  return {
    port: r.int('PORT', 3000, 0, 65535),
    host: r.str('HOST', '0.0.0.0'),
    nodeEnv,
    isProduction: nodeEnv === 'production',
    dataDir: r.str('DATA_DIR', './data'),
    logLevel: r.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    trustProxy: readTrustProxy(r),
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: r.duration('KEEP_ALIVE_TIMEOUT', '72s', '1h'),
    maxConnections: r.int('MAX_CONNECTIONS', 20_000, 1, 10_000_000),
    wsMaxPerDriver: r.int('WS_MAX_PER_DRIVER', 2, 1, 1000),
    streamsPerAccount: r.int('STREAMS_PER_ACCOUNT', 20, 1, 1_000_000),
    streamsPerIp: r.int('STREAMS_PER_IP', 200, 1, 10_000_000),
    metricsToken: r.get('METRICS_TOKEN'),
  };
}

function readTrustProxy(r: EnvReader): boolean | number | string[] {
  const raw = r.get('TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    if (family === 0 || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > maxBits))) {
      r.problem(
        `TRUST_PROXY must be false, true, a hop count or a comma-separated list of addresses/CIDRs (bad entry "${entry}")`,
      );
      return false;
    }
  }
  return entries;
}

export function readWeb(r: EnvReader): WebConfig {
  const mapTileUrl = r.str('MAP_TILE_URL', 'https://tile.openstreetmap.org/{z}/{x}/{y}.png');
  if (!/^https?:\/\/[^\s"'<>]+$/.test(mapTileUrl) || !mapTileUrl.includes('{z}')) {
    r.problem('MAP_TILE_URL must be an http(s) URL template with {z}, {x} and {y}');
  }
  return { mapTileUrl };
}

/** Windows at most 7d: the in-process limiter's entries expire on a timer. */
export function readRateLimits(r: EnvReader): RateLimitsConfig {
  return {
    global: r.rateLimit('RATE_LIMIT_GLOBAL', '100/15m', '7d'),
    login: r.rateLimit('RATE_LIMIT_LOGIN', '5/15m', '7d'),
    loginSendOtp: r.rateLimit('RATE_LIMIT_LOGIN_SEND_OTP', '3/5m', '7d'),
    registerSendOtp: r.rateLimit('RATE_LIMIT_REGISTER_SEND_OTP', '3/5m', '7d'),
    osmand: r.rateLimit('RATE_LIMIT_OSMAND', '120/1m', '7d'),
  };
}
