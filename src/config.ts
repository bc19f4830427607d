// Configuration: a pure function of the environment, validated at once, every bad variable named.
import { isIP } from 'node:net';
import path from 'node:path';
import { parseDuration, parseRateLimit, type RateLimitSpec } from './shared/durations.js';

export type SmsTransport = 'console' | 'file' | 'http' | 'twilio' | 'africastalking';
const SMS_TRANSPORTS: SmsTransport[] = ['console', 'file', 'http', 'twilio', 'africastalking'];

export interface Config {
  port: number;
  host: string;
  nodeEnv: string;
  isProduction: boolean;
  dataDir: string;
  databaseUrl: string | undefined;
  /** How long a statement waits for a database connection before it fails (503). */
  databaseConnectTimeoutMs: number;
  /** A single Redis (redis:// or rediss://). */
  redisUrl: string | undefined;
  /** A Redis Cluster: its seed nodes (REDIS_CLUSTER_NODES or a redis+cluster:// URL), and the password if any. */
  redisCluster: { nodes: { host: string; port: number }[]; username: string | undefined; password: string | undefined } | undefined;
  redisKeyPrefix: string;
  /** undefined in development until deps fill it from DATA_DIR/jwt-secret. */
  jwtSecret: string | undefined;
  jwtIssuer: string;
  jwtAudience: string;
  accessTokenTtlMs: number;
  refreshTokenTtlMs: number;
  rememberMeRefreshTokenTtlMs: number;
  loginSessionTtlMs: number;
  otpTtlMs: number;
  otpMaxAttempts: number;
  otpMaxResends: number;
  smsTransport: SmsTransport;
  smsFile: string;
  smsHttpUrl: string | undefined;
  smsHttpToken: string | undefined;
  /** Provider credentials, set for the transport that uses them. */
  sms: {
    twilio: { accountSid: string; authToken: string; from: string; baseUrl: string } | undefined;
    africasTalking: { username: string; apiKey: string; from: string | undefined; baseUrl: string } | undefined;
  };
  admin: { email: string; phone: string; password: string } | undefined;
  /** Development only, with no bootstrap admin configured: the first start creates admin@localhost with this phone. */
  firstRunAdmin: { email: string; phone: string } | undefined;
  /** Raster tile URL template for the web console's maps ({z}/{x}/{y}, optional {s}). */
  mapTileUrl: string;
  rateLimits: {
    global: RateLimitSpec | null;
    login: RateLimitSpec | null;
    loginSendOtp: RateLimitSpec | null;
    registerSendOtp: RateLimitSpec | null;
  };
  /** false, a hop count, or a list of trusted proxy addresses/CIDRs (Fastify's trustProxy). */
  trustProxy: boolean | number | string[];
  driverLocationTtlMs: number;
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  webhookAllowHttp: boolean;
  webhookAllowPrivateTargets: boolean;
  webhookSignatureHeader: string;
  /** Whether the API process also runs the webhook worker (`npm run worker` runs it alone). */
  webhookWorkerInProcess: boolean;
  /** Where `npm run worker` serves /health, /health/ready and /metrics. */
  workerPort: number;
  /** Pricing (contract section 18): distances in metres, the surge cap in tenths (20 is ×2.0). */
  pricing: { quoteTtlMs: number; surgeCellMeters: number; surgeIntervalMs: number; surgeMaxTenths: number; surgeAccountCap: number; maxTripDistanceMeters: number };
  logLevel: string;
  dispatch: {
    /** offer: each job offered to one driver at a time; broadcast: nearby pushes only; off: neither. */
    mode: DispatchMode;
    offerTtlMs: number;
    radiusMeters: number;
    maxRadiusMeters: number;
    retryIntervalMs: number;
  };
  /** Slow clients: the whole request within requestTimeoutMs, its headers within headersTimeoutMs. */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  wsMaxPerDriver: number;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>`. */
  metricsToken: string | undefined;
  /** Live tracking (contract section 14): links are publicBaseUrl + /t/ + token. */
  tracking: { publicBaseUrl: string; intervalMs: number };
}

export type DispatchMode = 'offer' | 'broadcast' | 'off';
const DISPATCH_MODES: DispatchMode[] = ['offer', 'broadcast', 'off'];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const get = (name: string) => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const str = (name: string, fallback: string) => get(name) ?? fallback;
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const duration = (name: string, fallback: string) => {
    const raw = get(name) ?? fallback;
    const ms = parseDuration(raw);
    if (ms === undefined || ms <= 0) {
      problems.push(`${name} must be a duration such as 500ms, 30s, 15m, 2h or 7d (got "${raw}")`);
      return parseDuration(fallback)!;
    }
    return ms;
  };
  const bool = (name: string, fallback: boolean) => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const rateLimit = (name: string, fallback: string) => {
    const raw = get(name) ?? fallback;
    const spec = parseRateLimit(raw);
    if (spec === undefined) {
      problems.push(`${name} must be N/window such as 100/15m, or off (got "${raw}")`);
      return parseRateLimit(fallback) ?? null;
    }
    return spec;
  };
  const distance = (name: string, fallbackMeters: number) => {
    const raw = get(name);
    if (raw === undefined) return fallbackMeters;
    const match = /^(\d+(?:\.\d+)?)\s*(m|km)$/i.exec(raw);
    const meters = match ? Number(match[1]) * (match[2]!.toLowerCase() === 'km' ? 1000 : 1) : NaN;
    if (!(meters >= 1 && meters <= 100_000)) {
      problems.push(`${name} must be a distance such as 800m or 5km, at most 100km (got "${raw}")`);
      return fallbackMeters;
    }
    return Math.round(meters);
  };
  const url = (name: string, protocols: string[]) => {
    const raw = get(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error();
      return raw;
    } catch {
      problems.push(`${name} must be a ${protocols.join(' or ')} URL`);
      return undefined;
    }
  };

  const nodeEnv = str('NODE_ENV', 'development');
  const dispatchMode = str('DISPATCH_MODE', 'offer').toLowerCase() as DispatchMode;
  if (!DISPATCH_MODES.includes(dispatchMode)) problems.push(`DISPATCH_MODE must be one of ${DISPATCH_MODES.join(', ')} (got "${get('DISPATCH_MODE')}")`);
  const dispatchRadius = distance('DISPATCH_RADIUS', 5000);
  const dispatchMaxRadius = distance('DISPATCH_MAX_RADIUS', 15_000);
  const isProduction = nodeEnv === 'production';

  const port = int('PORT', 3000, 0, 65535);
  const host = str('HOST', '0.0.0.0');
  const dataDir = str('DATA_DIR', './data');
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  let redisUrl: string | undefined;
  let redisCluster: Config['redisCluster'];
  const clusterNodes = get('REDIS_CLUSTER_NODES');
  const rawRedisUrl = get('REDIS_URL');
  if (rawRedisUrl?.startsWith('redis+cluster://')) {
    redisCluster = parseClusterUrl(rawRedisUrl);
    if (!redisCluster) problems.push('REDIS_URL must be redis+cluster://[user:password@]host:port,host:port,...');
  } else {
    redisUrl = url('REDIS_URL', ['redis:', 'rediss:']);
  }
  if (clusterNodes !== undefined) {
    const nodes = parseHostPorts(clusterNodes);
    if (!nodes) problems.push('REDIS_CLUSTER_NODES must be a comma-separated list of host:port');
    else if (rawRedisUrl !== undefined) problems.push('set either REDIS_URL or REDIS_CLUSTER_NODES, not both');
    else redisCluster = { nodes, username: undefined, password: undefined };
  }
  const redisKeyPrefix = str('REDIS_KEY_PREFIX', 'rd:');

  const jwtSecret = get('JWT_SECRET');
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret, 'utf8') < 32) {
    problems.push('JWT_SECRET must be at least 32 bytes');
  }

  const smsRaw = str('SMS_TRANSPORT', 'console');
  let smsTransport: SmsTransport = 'console';
  if ((SMS_TRANSPORTS as string[]).includes(smsRaw)) smsTransport = smsRaw as SmsTransport;
  else problems.push(`SMS_TRANSPORT must be one of ${SMS_TRANSPORTS.join(', ')} (got "${smsRaw}")`);
  const smsHttpUrl = url('SMS_HTTP_URL', ['http:', 'https:']);
  const smsHttpToken = get('SMS_HTTP_TOKEN');
  if (smsTransport === 'http' && smsHttpUrl === undefined) problems.push('SMS_HTTP_URL is required when SMS_TRANSPORT=http');
  const required = (names: string[]) => {
    const missing = names.filter((name) => get(name) === undefined);
    if (missing.length) problems.push(`${missing.join(', ')} required when SMS_TRANSPORT=${smsTransport}`);
    return missing.length === 0;
  };
  const twilioBaseUrl = url('TWILIO_BASE_URL', ['http:', 'https:']) ?? 'https://api.twilio.com';
  const twilio =
    smsTransport === 'twilio' && required(['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'])
      ? { accountSid: get('TWILIO_ACCOUNT_SID')!, authToken: get('TWILIO_AUTH_TOKEN')!, from: get('TWILIO_FROM')!, baseUrl: twilioBaseUrl }
      : undefined;
  const atBaseUrl = url('AT_BASE_URL', ['http:', 'https:']);
  const africasTalking =
    smsTransport === 'africastalking' && required(['AT_USERNAME', 'AT_API_KEY'])
      ? {
          username: get('AT_USERNAME')!,
          apiKey: get('AT_API_KEY')!,
          from: get('AT_FROM'),
          baseUrl: atBaseUrl ?? (get('AT_USERNAME') === 'sandbox' ? 'https://api.sandbox.africastalking.com' : 'https://api.africastalking.com'),
        }
      : undefined;
  const smsAllowFileInProduction = bool('SMS_ALLOW_FILE_IN_PRODUCTION', false);

  const adminEmail = get('ADMIN_EMAIL');
  const adminPhone = get('ADMIN_PHONE');
  const adminPassword = get('ADMIN_PASSWORD');
  const adminCount = [adminEmail, adminPhone, adminPassword].filter((v) => v !== undefined).length;
  // ADMIN_PHONE alone only names the phone of the first-run admin (development).
  if (adminCount > 0 && adminCount < 3 && !(adminCount === 1 && adminPhone !== undefined)) {
    problems.push('ADMIN_EMAIL, ADMIN_PHONE and ADMIN_PASSWORD must be set together');
  }

  const mapTileUrl = str('MAP_TILE_URL', 'https://tile.openstreetmap.org/{z}/{x}/{y}.png');
  if (!/^https?:\/\/[^\s"'<>]+$/.test(mapTileUrl) || !mapTileUrl.includes('{z}')) {
    problems.push('MAP_TILE_URL must be an http(s) URL template with {z}, {x} and {y}');
  }

  const trustProxy = parseTrustProxy(get('TRUST_PROXY'), problems);

  const scheduleRaw = str('WEBHOOK_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,3h,6h,12h,24h');
  const webhookRetryScheduleMs: number[] = [];
  for (const part of scheduleRaw.split(',')) {
    const ms = parseDuration(part);
    if (ms === undefined) {
      problems.push(`WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of durations (bad entry "${part}")`);
      break;
    }
    webhookRetryScheduleMs.push(ms);
  }

  const signatureHeader = str('WEBHOOK_SIGNATURE_HEADER', 'X-Service-Signature');
  if (!/^[A-Za-z0-9-]{1,100}$/.test(signatureHeader)) {
    problems.push('WEBHOOK_SIGNATURE_HEADER must be a header name (letters, digits and dashes)');
  }

  const requestTimeoutMs = duration('REQUEST_TIMEOUT', '30s');
  const headersTimeoutMs = duration('HEADERS_TIMEOUT', '10s');
  // Node refuses a headers timeout longer than the request timeout.
  if (headersTimeoutMs > requestTimeoutMs) problems.push('HEADERS_TIMEOUT must not be longer than REQUEST_TIMEOUT');
  const parseMetres = (raw: string) => {
    const match = /^(\d+(?:\.\d+)?)\s*(m|km)$/i.exec(raw);
    return match ? Math.round(Number(match[1]) * (match[2].toLowerCase() === 'km' ? 1000 : 1)) : NaN;
  };
  const metres = (name: string, fallback: string, min: number, max: number) => {
    const raw = get(name) ?? fallback;
    const value = parseMetres(raw);
    if (!(value >= min && value <= max)) {
      problems.push(`${name} must be a distance such as 500m or 2km, from ${min}m to ${max / 1000}km (got "${raw}")`);
      return parseMetres(fallback);
    }
    return value;
  };
  const surgeMaxRaw = str('SURGE_MAX', '2.0');
  let surgeMaxTenths = 20;
  if (/^\d+(\.\d)?$/.test(surgeMaxRaw) && Number(surgeMaxRaw) >= 1 && Number(surgeMaxRaw) <= 10) surgeMaxTenths = Math.round(Number(surgeMaxRaw) * 10);
  else problems.push(`SURGE_MAX must be a multiplier from 1.0 to 10.0 with at most one decimal (got "${surgeMaxRaw}")`);

  const logLevel = str('LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const config: Config = {
    port,
    host,
    nodeEnv,
    isProduction,
    dataDir,
    databaseUrl,
    databaseConnectTimeoutMs: duration('DATABASE_CONNECT_TIMEOUT', '5s'),
    redisUrl,
    redisCluster,
    redisKeyPrefix,
    jwtSecret,
    jwtIssuer: str('JWT_ISSUER', 'ride-delivery-backend'),
    jwtAudience: str('JWT_AUDIENCE', 'ride-delivery-api'),
    accessTokenTtlMs: duration('ACCESS_TOKEN_TTL', '15m'),
    refreshTokenTtlMs: duration('REFRESH_TOKEN_TTL', '7d'),
    rememberMeRefreshTokenTtlMs: duration('REMEMBER_ME_REFRESH_TOKEN_TTL', '30d'),
    loginSessionTtlMs: duration('LOGIN_SESSION_TTL', '10m'),
    otpTtlMs: duration('OTP_TTL', '5m'),
    otpMaxAttempts: int('OTP_MAX_ATTEMPTS', 5, 1, 100),
    otpMaxResends: int('OTP_MAX_RESENDS', 3, 0, 100),
    smsTransport,
    smsFile: str('SMS_FILE', path.join(dataDir, 'sms.log')),
    smsHttpUrl,
    smsHttpToken,
    sms: { twilio, africasTalking },
    admin: adminCount === 3 ? { email: adminEmail!, phone: adminPhone!, password: adminPassword! } : undefined,
    firstRunAdmin: nodeEnv === 'development' && adminCount < 3 ? { email: 'admin@localhost', phone: adminPhone ?? '+254700000000' } : undefined,
    mapTileUrl,
    rateLimits: {
      global: rateLimit('RATE_LIMIT_GLOBAL', '100/15m'),
      login: rateLimit('RATE_LIMIT_LOGIN', '5/15m'),
      loginSendOtp: rateLimit('RATE_LIMIT_LOGIN_SEND_OTP', '3/5m'),
      registerSendOtp: rateLimit('RATE_LIMIT_REGISTER_SEND_OTP', '3/5m'),
    },
    trustProxy,
    driverLocationTtlMs: duration('DRIVER_LOCATION_TTL', '2m'),
    webhookRetryScheduleMs,
    webhookTimeoutMs: duration('WEBHOOK_TIMEOUT', '10s'),
    webhookAllowHttp: bool('WEBHOOK_ALLOW_HTTP', !isProduction),
    webhookAllowPrivateTargets: bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', !isProduction),
    webhookSignatureHeader: signatureHeader,
    webhookWorkerInProcess: bool('WEBHOOK_WORKER_IN_PROCESS', true),
    workerPort: int('WORKER_PORT', 9465, 0, 65535),
    pricing: {
      quoteTtlMs: duration('QUOTE_TTL', '10m'),
      surgeCellMeters: metres('SURGE_CELL', '2km', 100, 50_000),
      surgeIntervalMs: duration('SURGE_INTERVAL', '1m'),
      surgeMaxTenths,
      surgeAccountCap: int('SURGE_ACCOUNT_CAP', 3, 1, 1_000_000),
      maxTripDistanceMeters: metres('MAX_TRIP_DISTANCE', '300km', 1000, 5_000_000),
    },
    logLevel,
    dispatch: {
      mode: dispatchMode,
      offerTtlMs: duration('DISPATCH_OFFER_TTL', '20s'),
      radiusMeters: dispatchRadius,
      maxRadiusMeters: dispatchMaxRadius,
      retryIntervalMs: duration('DISPATCH_RETRY_INTERVAL', '30s'),
    },
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: duration('KEEP_ALIVE_TIMEOUT', '72s'),
    maxConnections: int('MAX_CONNECTIONS', 20_000, 1, 10_000_000),
    wsMaxPerDriver: int('WS_MAX_PER_DRIVER', 2, 1, 1000),
    metricsToken: get('METRICS_TOKEN'),
    tracking: { publicBaseUrl: publicBaseUrl(get('PUBLIC_BASE_URL'), port, problems), intervalMs: duration('TRACKING_INTERVAL', '3s') },
  };
  if (dispatchMaxRadius < dispatchRadius) problems.push('DISPATCH_MAX_RADIUS must be at least DISPATCH_RADIUS');

  if (isProduction) {
    if (!databaseUrl) problems.push('DATABASE_URL is required in production');
    if (!jwtSecret) problems.push('JWT_SECRET is required in production');
    else if (weakSecret(jwtSecret)) problems.push('JWT_SECRET looks weak (a placeholder or few distinct characters): use 32+ random bytes, e.g. `openssl rand -base64 48`');
    if (smsTransport === 'console') problems.push('SMS_TRANSPORT=console is refused in production (use twilio, africastalking or http)');
    if (smsTransport === 'file' && !smsAllowFileInProduction) {
      problems.push('SMS_TRANSPORT=file is refused in production unless SMS_ALLOW_FILE_IN_PRODUCTION=true');
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

// A secret of 32+ bytes can still be guessable: a placeholder word repeated, or a handful of characters.
function publicBaseUrl(raw: string | undefined, port: number, problems: string[]): string {
  if (raw === undefined) return `http://localhost:${port}`;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username) {
    problems.push(`PUBLIC_BASE_URL must be an http(s) URL without query, fragment or credentials (got "${raw}")`);
    return `http://localhost:${port}`;
  }
  return url.href.replace(/\/+$/, '');
}

function weakSecret(secret: string): boolean {
  if (new Set(secret).size < 12) return true;
  return /change.?me|secret|password|example|placeholder/i.test(secret);
}

/** For entry points: the configuration, or the list of problems on stderr and exit code 1. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
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

function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string[] {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    if (family === 0 || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > maxBits))) {
      problems.push(`TRUST_PROXY must be false, true, a hop count or a comma-separated list of addresses/CIDRs (bad entry "${entry}")`);
      return false;
    }
  }
  return entries;
}

function parseHostPorts(raw: string): { host: string; port: number }[] | undefined {
  const nodes: { host: string; port: number }[] = [];
  for (const item of raw.split(',').map((part) => part.trim())) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) return undefined;
    nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return nodes.length ? nodes : undefined;
}

/** redis+cluster://[user:password@]host:port,host:port (URL cannot parse a list of hosts). */
function parseClusterUrl(raw: string): Config['redisCluster'] {
  const rest = raw.slice('redis+cluster://'.length).replace(/\/+$/, '');
  const at = rest.lastIndexOf('@');
  const auth = at >= 0 ? rest.slice(0, at) : undefined;
  const nodes = parseHostPorts(at >= 0 ? rest.slice(at + 1) : rest);
  if (!nodes) return undefined;
  let username: string | undefined;
  let password: string | undefined;
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    try {
      username = decodeURIComponent(colon >= 0 ? auth.slice(0, colon) : auth) || undefined;
      password = colon >= 0 ? decodeURIComponent(auth.slice(colon + 1)) || undefined : undefined;
    } catch {
      return undefined;
    }
  }
  return { nodes, username, password };
}
