// Configuration: a pure function of the environment, validated at once, every bad variable named.
// One reader per group of variables; to add a variable, add it to Config and to its group's reader.
import { isIP } from 'node:net';
import path from 'node:path';
import type { RateLimitSpec } from './config/durations.js';
import { EnvReader, type DurationSetting, type Env } from './config/env-reader.js';

export type { RateLimitSpec };

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
  redisCluster:
    { nodes: { host: string; port: number }[]; username: string | undefined; password: string | undefined } | undefined;
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
    /** Per device key on the OsmAnd positions route (outside the global per-IP limit). */
    osmand: RateLimitSpec | null;
  };
  /** false, a hop count, or a list of trusted proxy addresses/CIDRs (Fastify's trustProxy). */
  trustProxy: boolean | number | string[];
  driverLocationTtlMs: number;
  /** km/h a position may imply from the last accepted one (contract section 19); null: not checked (MAX_PLAUSIBLE_SPEED=off). */
  maxPlausibleSpeedKmh: number | null;
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
  pricing: {
    quoteTtlMs: number;
    surgeCellMeters: number;
    surgeIntervalMs: number;
    surgeMaxTenths: number;
    surgeAccountCap: number;
    maxTripDistanceMeters: number;
  };
  logLevel: string;
  dispatch: {
    /** offer: each job offered to one driver at a time; broadcast: nearby pushes only; off: neither. */
    mode: DispatchMode;
    offerTtlMs: number;
    radiusMeters: number;
    maxRadiusMeters: number;
    retryIntervalMs: number;
    /** A job released more than this many times is flagged for an admin (contract section 13). */
    maxReleases: number;
  };
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
  /** Live tracking (contract section 14): links are publicBaseUrl + /t/ + token. */
  tracking: { publicBaseUrl: string; intervalMs: number };
  /**
   * Web Push (contract section 19). vapid: the keys from the environment; undefined means "generate
   * and keep them in DATA_DIR" on the embedded default, and push off anywhere else.
   */
  push: {
    vapid: { publicKey: string; privateKey: string; subject: string } | undefined;
    /** Used with generated keys (and by default): who the push services may contact. */
    subject: string;
    timeoutMs: number;
    concurrency: number;
    allowHttp: boolean;
    allowPrivateTargets: boolean;
  };
  /**
   * Ratings and tips (contract section 20): drivers whose average is below alertBelowTenths (40 is 4.0)
   * with at least 20 ratings are listed for admins; a tip is at most tipMaxShareBasisPoints of the price (5000 is 50 %).
   */
  ratings: { alertBelowTenths: number; tipMaxShareBasisPoints: number };
  /** Address search (GET /geocode): a Nominatim- or Photon-compatible service; off without a URL. */
  geocoder: { url: string | undefined; kind: 'nominatim' | 'photon'; timeoutMs: number; cacheTtlMs: number };
  /** Proof of delivery (contract section 19): each image's size cap, the upload's own timeout, the decoding bounds, where images are kept. */
  proof: {
    maxBytes: number;
    uploadTimeoutMs: number;
    maxDecodedBytes: number;
    decodeConcurrency: number;
    s3: S3Config | undefined;
  };
}

/** An S3-compatible bucket for the proof images (S3_BUCKET set); PostgreSQL keeps them otherwise. */
export interface S3Config {
  bucket: string;
  /** A custom endpoint (MinIO, R2, ...); undefined: AWS's own for the region. */
  endpoint: string | undefined;
  region: string;
  /** undefined: the SDK's default credential chain (environment, instance role, ...). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  forcePathStyle: boolean;
}

export type DispatchMode = 'offer' | 'broadcast' | 'off';
const DISPATCH_MODES: DispatchMode[] = ['offer', 'broadcast', 'off'];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

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

function readConfig(r: EnvReader): Config {
  const server = readServer(r);
  return {
    ...server,
    ...readDatabase(r, server),
    ...readRedis(r),
    ...readAuth(r, server),
    ...readSms(r, server),
    mapTileUrl: readMapTileUrl(r),
    rateLimits: readRateLimits(r),
    driverLocationTtlMs: r.duration('DRIVER_LOCATION_TTL', '2m', '1d'),
    maxPlausibleSpeedKmh: readMaxPlausibleSpeed(r),
    ...readWebhooks(r, server),
    pricing: readPricing(r),
    dispatch: readDispatch(r),
    tracking: readTracking(r, server),
    push: readPush(r, server),
    ratings: readRatings(r),
    geocoder: readGeocoder(r),
    proof: readProof(r),
  };
}

function readMaxPlausibleSpeed(r: EnvReader): number | null {
  const raw = r.str('MAX_PLAUSIBLE_SPEED', '250').trim();
  if (raw.toLowerCase() === 'off') return null;
  const kmh = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  if (kmh >= 10 && kmh <= 100_000) return kmh;
  r.problem(`MAX_PLAUSIBLE_SPEED must be a speed in km/h from 10 to 100000, or off (got "${raw}")`);
  return 250;
}

function readRatings(r: EnvReader): Config['ratings'] {
  const alertRaw = r.str('RATING_ALERT_BELOW', '4.0');
  let alertBelowTenths = 40;
  if (/^\d(\.\d)?$/.test(alertRaw) && Number(alertRaw) >= 1 && Number(alertRaw) <= 5)
    alertBelowTenths = Math.round(Number(alertRaw) * 10);
  else r.problem(`RATING_ALERT_BELOW must be a rating from 1.0 to 5.0 with at most one decimal (got "${alertRaw}")`);
  // 50% or 0.5: a share of the price from 1 % to 100 %, in basis points.
  const shareRaw = r.str('TIP_MAX_SHARE', '50%');
  let tipMaxShareBasisPoints = 5000;
  const percent = /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(shareRaw);
  const fraction = /^(0(?:\.\d{1,4})?|1(?:\.0{1,4})?)$/.exec(shareRaw);
  const bp = percent ? Math.round(Number(percent[1]) * 100) : fraction ? Math.round(Number(fraction[1]) * 10_000) : NaN;
  if (Number.isInteger(bp) && bp >= 100 && bp <= 10_000) tipMaxShareBasisPoints = bp;
  else r.problem(`TIP_MAX_SHARE must be a share of the price from 1% to 100%, written 50% or 0.5 (got "${shareRaw}")`);
  return { alertBelowTenths, tipMaxShareBasisPoints };
}

function readGeocoder(r: EnvReader): Config['geocoder'] {
  const raw = r.get('GEOCODER_URL');
  let url: string | undefined;
  if (raw !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(raw);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.hash)
      r.problem(`GEOCODER_URL must be an http(s) URL without a fragment (got "${raw}")`);
    else url = parsed.href.replace(/\/+$/, '');
  }
  return {
    url,
    kind: r.oneOf('GEOCODER_KIND', ['nominatim', 'photon'] as const, 'nominatim', { lowercase: true }),
    timeoutMs: r.duration('GEOCODER_TIMEOUT', '5s', '1m'),
    cacheTtlMs: r.duration('GEOCODER_CACHE_TTL', '10m', '1d'),
  };
}

const MB = 1024 * 1024;

function readProof(r: EnvReader): Config['proof'] {
  return {
    maxBytes: r.size('PROOF_MAX_SIZE', '8MB', 64 * 1024, 50 * MB),
    uploadTimeoutMs: r.duration('PROOF_UPLOAD_TIMEOUT', '120s', '1h'),
    // 96 MB: a 32-megapixel RGB photo (what an 8 MB JPEG from a phone camera holds) or a 1600 px
    // image of any depth; a 48-megapixel original or a decompression bomb is refused unread.
    maxDecodedBytes: r.size('PROOF_MAX_DECODED_SIZE', '96MB', 32 * MB, 1024 * MB),
    decodeConcurrency: r.int('PROOF_DECODE_CONCURRENCY', 2, 1, 64),
    s3: readS3(r),
  };
}

function readS3(r: EnvReader): S3Config | undefined {
  const bucket = r.get('S3_BUCKET');
  const endpoint = r.url('S3_ENDPOINT', ['http:', 'https:']);
  const accessKeyId = r.get('S3_ACCESS_KEY_ID');
  const secretAccessKey = r.get('S3_SECRET_ACCESS_KEY');
  const region = r.get('S3_REGION');
  const forcePathStyle = r.bool('S3_FORCE_PATH_STYLE', false);
  if (bucket === undefined) {
    const stray = [
      'S3_ENDPOINT',
      'S3_REGION',
      'S3_ACCESS_KEY_ID',
      'S3_SECRET_ACCESS_KEY',
      'S3_FORCE_PATH_STYLE',
    ].filter((name) => r.get(name) !== undefined);
    if (stray.length)
      r.problem(`${stray.join(', ')} set without S3_BUCKET (proof images go to S3 only when S3_BUCKET is set)`);
    return undefined;
  }
  // Bucket names as S3 takes them: 3 to 63 lowercase letters, digits, dots and dashes.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    r.problem(`S3_BUCKET must be a bucket name (3 to 63 lowercase letters, digits, dots and dashes; got "${bucket}")`);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined))
    r.problem('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  if (region !== undefined && !/^[a-z0-9-]{1,50}$/.test(region))
    r.problem(`S3_REGION must be a region name such as eu-west-1 (got "${region}")`);
  if (endpoint === undefined && region === undefined)
    r.problem('S3_REGION is required with S3_BUCKET when S3_ENDPOINT is not set');
  return {
    bucket,
    endpoint,
    // An S3-compatible server behind S3_ENDPOINT usually ignores the region; the signature still names one.
    region: region ?? 'us-east-1',
    credentials:
      accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined,
    forcePathStyle,
  };
}

function readServer(r: EnvReader) {
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
  } satisfies Partial<Config>;
}

type Server = ReturnType<typeof readServer>;

function readDatabase(r: EnvReader, { isProduction }: Server) {
  const databaseUrl = r.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  if (isProduction && !databaseUrl) r.problem('DATABASE_URL is required in production');
  return {
    databaseUrl,
    databaseConnectTimeoutMs: r.duration('DATABASE_CONNECT_TIMEOUT', '5s', '5m'),
  } satisfies Partial<Config>;
}

function readRedis(r: EnvReader) {
  let redisUrl: string | undefined;
  let redisCluster: Config['redisCluster'];
  const clusterNodes = r.get('REDIS_CLUSTER_NODES');
  const rawRedisUrl = r.get('REDIS_URL');
  if (rawRedisUrl?.startsWith('redis+cluster://')) {
    redisCluster = parseClusterUrl(rawRedisUrl);
    if (!redisCluster) r.problem('REDIS_URL must be redis+cluster://[user:password@]host:port,host:port,...');
  } else {
    redisUrl = r.url('REDIS_URL', ['redis:', 'rediss:']);
  }
  if (clusterNodes !== undefined) {
    const nodes = parseHostPorts(clusterNodes);
    if (!nodes) r.problem('REDIS_CLUSTER_NODES must be a comma-separated list of host:port');
    else if (rawRedisUrl !== undefined) r.problem('set either REDIS_URL or REDIS_CLUSTER_NODES, not both');
    else redisCluster = { nodes, username: undefined, password: undefined };
  }
  return { redisUrl, redisCluster, redisKeyPrefix: r.str('REDIS_KEY_PREFIX', 'rd:') } satisfies Partial<Config>;
}

function readAuth(r: EnvReader, { nodeEnv, isProduction }: Server) {
  const jwtSecret = r.get('JWT_SECRET');
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret, 'utf8') < 32)
    r.problem('JWT_SECRET must be at least 32 bytes');
  if (isProduction && !jwtSecret) r.problem('JWT_SECRET is required in production');
  else if (isProduction && jwtSecret !== undefined && weakSecret(jwtSecret)) {
    r.problem(
      'JWT_SECRET looks weak (a placeholder or few distinct characters): use 32+ random bytes, e.g. `openssl rand -base64 48`',
    );
  }
  // Authenticated requests do not look at the session's expiry: an access token must not outlive
  // its refresh token, and "remember me" never gives the shorter session.
  const [accessTokenTtlMs, refreshTokenTtlMs, rememberMeRefreshTokenTtlMs] = r.ascending([
    ['ACCESS_TOKEN_TTL', r.duration('ACCESS_TOKEN_TTL', '15m', '1d')],
    ['REFRESH_TOKEN_TTL', r.duration('REFRESH_TOKEN_TTL', '7d', '365d')],
    ['REMEMBER_ME_REFRESH_TOKEN_TTL', r.duration('REMEMBER_ME_REFRESH_TOKEN_TTL', '30d', '365d')],
  ]);
  // A code cannot be used once its login session has ended.
  const [otpTtlMs, loginSessionTtlMs] = r.ascending([
    ['OTP_TTL', r.duration('OTP_TTL', '5m', '1h')],
    ['LOGIN_SESSION_TTL', r.duration('LOGIN_SESSION_TTL', '10m', '1d')],
  ]);

  const adminEmail = r.get('ADMIN_EMAIL');
  const adminPhone = r.get('ADMIN_PHONE');
  const adminPassword = r.get('ADMIN_PASSWORD');
  const adminCount = [adminEmail, adminPhone, adminPassword].filter((v) => v !== undefined).length;
  // ADMIN_PHONE alone only names the phone of the first-run admin (development).
  if (adminCount > 0 && adminCount < 3 && !(adminCount === 1 && adminPhone !== undefined)) {
    r.problem('ADMIN_EMAIL, ADMIN_PHONE and ADMIN_PASSWORD must be set together');
  }
  return {
    jwtSecret,
    jwtIssuer: r.str('JWT_ISSUER', 'ride-delivery-backend'),
    jwtAudience: r.str('JWT_AUDIENCE', 'ride-delivery-api'),
    accessTokenTtlMs,
    refreshTokenTtlMs,
    rememberMeRefreshTokenTtlMs,
    loginSessionTtlMs,
    otpTtlMs,
    otpMaxAttempts: r.int('OTP_MAX_ATTEMPTS', 5, 1, 100),
    otpMaxResends: r.int('OTP_MAX_RESENDS', 3, 0, 100),
    admin: adminCount === 3 ? { email: adminEmail!, phone: adminPhone!, password: adminPassword! } : undefined,
    firstRunAdmin:
      nodeEnv === 'development' && adminCount < 3
        ? { email: 'admin@localhost', phone: adminPhone ?? '+254700000000' }
        : undefined,
  } satisfies Partial<Config>;
}

function readSms(r: EnvReader, { isProduction, dataDir }: Server) {
  const smsTransport = r.oneOf('SMS_TRANSPORT', SMS_TRANSPORTS, 'console');
  const smsHttpUrl = r.url('SMS_HTTP_URL', ['http:', 'https:']);
  if (smsTransport === 'http' && smsHttpUrl === undefined)
    r.problem('SMS_HTTP_URL is required when SMS_TRANSPORT=http');
  const required = (names: string[]) => {
    const missing = names.filter((name) => r.get(name) === undefined);
    if (missing.length) r.problem(`${missing.join(', ')} required when SMS_TRANSPORT=${smsTransport}`);
    return missing.length === 0;
  };
  const twilioBaseUrl = r.url('TWILIO_BASE_URL', ['http:', 'https:']) ?? 'https://api.twilio.com';
  const twilio =
    smsTransport === 'twilio' && required(['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'])
      ? {
          accountSid: r.get('TWILIO_ACCOUNT_SID')!,
          authToken: r.get('TWILIO_AUTH_TOKEN')!,
          from: r.get('TWILIO_FROM')!,
          baseUrl: twilioBaseUrl,
        }
      : undefined;
  const atBaseUrl = r.url('AT_BASE_URL', ['http:', 'https:']);
  const africasTalking =
    smsTransport === 'africastalking' && required(['AT_USERNAME', 'AT_API_KEY'])
      ? {
          username: r.get('AT_USERNAME')!,
          apiKey: r.get('AT_API_KEY')!,
          from: r.get('AT_FROM'),
          baseUrl:
            atBaseUrl ??
            (r.get('AT_USERNAME') === 'sandbox'
              ? 'https://api.sandbox.africastalking.com'
              : 'https://api.africastalking.com'),
        }
      : undefined;
  const allowFileInProduction = r.bool('SMS_ALLOW_FILE_IN_PRODUCTION', false);
  if (isProduction && smsTransport === 'console')
    r.problem('SMS_TRANSPORT=console is refused in production (use twilio, africastalking or http)');
  if (isProduction && smsTransport === 'file' && !allowFileInProduction) {
    r.problem('SMS_TRANSPORT=file is refused in production unless SMS_ALLOW_FILE_IN_PRODUCTION=true');
  }
  return {
    smsTransport,
    smsFile: r.str('SMS_FILE', path.join(dataDir, 'sms.log')),
    smsHttpUrl,
    smsHttpToken: r.get('SMS_HTTP_TOKEN'),
    sms: { twilio, africasTalking },
  } satisfies Partial<Config>;
}

function readMapTileUrl(r: EnvReader): string {
  const mapTileUrl = r.str('MAP_TILE_URL', 'https://tile.openstreetmap.org/{z}/{x}/{y}.png');
  if (!/^https?:\/\/[^\s"'<>]+$/.test(mapTileUrl) || !mapTileUrl.includes('{z}')) {
    r.problem('MAP_TILE_URL must be an http(s) URL template with {z}, {x} and {y}');
  }
  return mapTileUrl;
}

/** Windows at most 7d: the in-process limiter's entries expire on a timer. */
function readRateLimits(r: EnvReader): Config['rateLimits'] {
  return {
    global: r.rateLimit('RATE_LIMIT_GLOBAL', '100/15m', '7d'),
    login: r.rateLimit('RATE_LIMIT_LOGIN', '5/15m', '7d'),
    loginSendOtp: r.rateLimit('RATE_LIMIT_LOGIN_SEND_OTP', '3/5m', '7d'),
    registerSendOtp: r.rateLimit('RATE_LIMIT_REGISTER_SEND_OTP', '3/5m', '7d'),
    osmand: r.rateLimit('RATE_LIMIT_OSMAND', '120/1m', '7d'),
  };
}

function readWebhooks(r: EnvReader, { isProduction }: Server) {
  const webhookSignatureHeader = r.str('WEBHOOK_SIGNATURE_HEADER', 'X-Service-Signature');
  if (!/^[A-Za-z0-9-]{1,100}$/.test(webhookSignatureHeader)) {
    r.problem('WEBHOOK_SIGNATURE_HEADER must be a header name (letters, digits and dashes)');
  }
  return {
    webhookRetryScheduleMs: r.durationList('WEBHOOK_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,3h,6h,12h,24h', '7d'),
    webhookTimeoutMs: r.duration('WEBHOOK_TIMEOUT', '10s', '5m'),
    webhookAllowHttp: r.bool('WEBHOOK_ALLOW_HTTP', !isProduction),
    webhookAllowPrivateTargets: r.bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', !isProduction),
    webhookSignatureHeader,
    webhookWorkerInProcess: r.bool('WEBHOOK_WORKER_IN_PROCESS', true),
    workerPort: r.int('WORKER_PORT', 9465, 0, 65535),
  } satisfies Partial<Config>;
}

function readPricing(r: EnvReader): Config['pricing'] {
  const surgeMaxRaw = r.str('SURGE_MAX', '2.0');
  let surgeMaxTenths = 20;
  if (/^\d+(\.\d)?$/.test(surgeMaxRaw) && Number(surgeMaxRaw) >= 1 && Number(surgeMaxRaw) <= 10)
    surgeMaxTenths = Math.round(Number(surgeMaxRaw) * 10);
  else r.problem(`SURGE_MAX must be a multiplier from 1.0 to 10.0 with at most one decimal (got "${surgeMaxRaw}")`);
  return {
    quoteTtlMs: r.duration('QUOTE_TTL', '10m', '1d'),
    surgeCellMeters: r.distance('SURGE_CELL', '2km', 100, 50_000),
    surgeIntervalMs: r.duration('SURGE_INTERVAL', '1m', '1h'),
    surgeMaxTenths,
    surgeAccountCap: r.int('SURGE_ACCOUNT_CAP', 3, 1, 1_000_000),
    maxTripDistanceMeters: r.distance('MAX_TRIP_DISTANCE', '300km', 1000, 5_000_000),
  };
}

function readDispatch(r: EnvReader): Config['dispatch'] {
  const [radiusMeters, maxRadiusMeters] = r.ascending([
    ['DISPATCH_RADIUS', r.distance('DISPATCH_RADIUS', '5km', 1, 100_000)],
    ['DISPATCH_MAX_RADIUS', r.distance('DISPATCH_MAX_RADIUS', '15km', 1, 100_000)],
  ]);
  return {
    mode: r.oneOf('DISPATCH_MODE', DISPATCH_MODES, 'offer', { lowercase: true }),
    offerTtlMs: r.duration('DISPATCH_OFFER_TTL', '20s', '10m'),
    radiusMeters,
    maxRadiusMeters,
    retryIntervalMs: r.duration('DISPATCH_RETRY_INTERVAL', '30s', '1h'),
    maxReleases: r.int('DISPATCH_MAX_RELEASES', 3, 0, 1000),
  };
}

/** Web Push (contract section 19): VAPID keys are base64url, the public one an uncompressed P-256 point. */
function readPush(r: EnvReader, { isProduction }: Server): Config['push'] {
  const publicKey = r.get('VAPID_PUBLIC_KEY');
  const privateKey = r.get('VAPID_PRIVATE_KEY');
  const subject = r.str('VAPID_SUBJECT', 'mailto:admin@localhost');
  if (!/^(mailto:[^\s@]+@[^\s@]+|https:\/\/[^\s]+)$/.test(subject))
    r.problem(`VAPID_SUBJECT must be a mailto: address or an https: URL (got "${subject}")`);
  let vapid: Config['push']['vapid'];
  if ((publicKey === undefined) !== (privateKey === undefined)) {
    r.problem('VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY must be set together');
  } else if (publicKey !== undefined && privateKey !== undefined) {
    const publicOk = base64urlBytes(publicKey) === 65 && Buffer.from(publicKey, 'base64url')[0] === 4;
    if (!publicOk)
      r.problem('VAPID_PUBLIC_KEY must be an uncompressed P-256 public key, base64url (65 bytes, 87 characters)');
    if (base64urlBytes(privateKey) !== 32)
      r.problem('VAPID_PRIVATE_KEY must be a P-256 private key, base64url (32 bytes, 43 characters)');
    vapid = { publicKey, privateKey, subject };
  }
  const allowHttp = r.bool('PUSH_ALLOW_HTTP', false);
  const allowPrivateTargets = r.bool('PUSH_ALLOW_PRIVATE_TARGETS', false);
  // Real push services are public https endpoints: these exist for tests and development only.
  if (isProduction && allowHttp) r.problem('PUSH_ALLOW_HTTP=true is refused in production');
  if (isProduction && allowPrivateTargets) r.problem('PUSH_ALLOW_PRIVATE_TARGETS=true is refused in production');
  return {
    vapid,
    subject,
    timeoutMs: r.duration('PUSH_TIMEOUT', '10s', '1m'),
    concurrency: r.int('PUSH_CONCURRENCY', 50, 1, 1000),
    allowHttp,
    allowPrivateTargets,
  };
}

/** The length in bytes of a base64url string without padding, or -1 when it is not one. */
function base64urlBytes(value: string): number {
  return /^[A-Za-z0-9_-]+$/.test(value) ? Buffer.from(value, 'base64url').length : -1;
}

function readTracking(r: EnvReader, { port }: Server): Config['tracking'] {
  return { publicBaseUrl: publicBaseUrl(r, port), intervalMs: r.duration('TRACKING_INTERVAL', '3s', '10m') };
}

/** Tracking links are this + /t/ + a token: nothing after the path to append to. */
function publicBaseUrl(r: EnvReader, port: number): string {
  const raw = r.get('PUBLIC_BASE_URL');
  if (raw === undefined) return `http://localhost:${port}`;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username) {
    r.problem(`PUBLIC_BASE_URL must be an http(s) URL without query, fragment or credentials (got "${raw}")`);
    return `http://localhost:${port}`;
  }
  return url.href.replace(/\/+$/, '');
}

// A secret of 32+ bytes can still be guessable: a placeholder word repeated, or a handful of characters.
function weakSecret(secret: string): boolean {
  if (new Set(secret).size < 12) return true;
  return /change.?me|secret|password|example|placeholder/i.test(secret);
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
