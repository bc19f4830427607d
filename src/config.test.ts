import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ConfigError, durationSettings, loadConfig } from './config.js';
import { formatDuration } from './config/durations.js';

test('defaults follow the contract', () => {
  const c = loadConfig({});
  assert.equal(c.server.port, 3000);
  assert.equal(c.server.host, '0.0.0.0');
  assert.equal(c.server.dataDir, './data');
  assert.equal(c.database.url, undefined);
  assert.equal(c.database.connectTimeoutMs, 5000);
  assert.equal(c.auth.accessTokenTtlMs, 15 * 60_000);
  assert.equal(c.auth.refreshTokenTtlMs, 7 * 86_400_000);
  assert.equal(c.auth.rememberMeRefreshTokenTtlMs, 30 * 86_400_000);
  assert.equal(c.auth.loginSessionTtlMs, 10 * 60_000);
  assert.equal(c.auth.otpTtlMs, 5 * 60_000);
  assert.equal(c.auth.otpMaxAttempts, 5);
  assert.equal(c.auth.otpMaxResends, 3);
  assert.equal(c.sms.transport, 'console');
  assert.equal(c.sms.file, 'data/sms.log');
  assert.deepEqual(c.rateLimits.global, { max: 100, windowMs: 900_000 });
  assert.deepEqual(c.rateLimits.login, { max: 5, windowMs: 900_000 });
  assert.deepEqual(c.rateLimits.loginSendOtp, { max: 3, windowMs: 300_000 });
  assert.deepEqual(c.rateLimits.registerSendOtp, { max: 3, windowMs: 300_000 });
  assert.equal(c.server.trustProxy, false);
  assert.equal(c.drivers.locationTtlMs, 120_000);
  assert.deepEqual(c.webhooks.retryScheduleMs.slice(0, 3), [5000, 30_000, 120_000]);
  assert.equal(c.webhooks.retryScheduleMs.length, 10);
  assert.equal(c.webhooks.timeoutMs, 10_000);
  assert.equal(c.webhooks.allowHttp, true);
  assert.equal(c.webhooks.allowPrivateTargets, true);
  assert.equal(c.webhooks.workerPort, 9465);
  assert.equal(c.webhooks.signatureHeader, 'X-Service-Signature');
  assert.equal(c.server.logLevel, 'info');
  assert.deepEqual(c.dispatch, {
    mode: 'offer',
    offerTtlMs: 20_000,
    radiusMeters: 5000,
    maxRadiusMeters: 15_000,
    retryIntervalMs: 30_000,
    maxReleases: 3,
    batchMaxDetourMs: 480_000,
  });
  assert.equal(c.server.requestTimeoutMs, 30_000);
  assert.equal(c.server.headersTimeoutMs, 10_000);
  assert.equal(c.server.keepAliveTimeoutMs, 72_000);
  assert.equal(c.server.maxConnections, 20_000);
  assert.equal(c.server.wsMaxPerDriver, 2);
  assert.equal(c.server.metricsToken, undefined);
});

test('dispatch settings: mode, durations and distances', () => {
  const c = loadConfig({
    DISPATCH_MODE: 'broadcast',
    DISPATCH_OFFER_TTL: '45s',
    DISPATCH_RADIUS: '800m',
    DISPATCH_MAX_RADIUS: '2.5km',
    DISPATCH_RETRY_INTERVAL: '1m',
    DISPATCH_MAX_RELEASES: '0',
    BATCH_MAX_DETOUR: '5m',
  });
  assert.deepEqual(c.dispatch, {
    mode: 'broadcast',
    offerTtlMs: 45_000,
    radiusMeters: 800,
    maxRadiusMeters: 2500,
    retryIntervalMs: 60_000,
    maxReleases: 0,
    batchMaxDetourMs: 300_000,
  });
  assert.throws(
    () => loadConfig({ DISPATCH_MAX_RELEASES: '-1' }),
    /DISPATCH_MAX_RELEASES must be a whole number from 0 to 1000/,
  );
  assert.throws(
    () => loadConfig({ DISPATCH_MODE: 'nearest', DISPATCH_RADIUS: 'far', DISPATCH_OFFER_TTL: '0s' }),
    (err: unknown) => {
      const problems = (err as ConfigError).problems.join('\n');
      return (
        /DISPATCH_MODE must be one of offer, broadcast, off/.test(problems) &&
        /DISPATCH_RADIUS must be a distance/.test(problems) &&
        /DISPATCH_OFFER_TTL/.test(problems)
      );
    },
  );
});

test('slow-client limits are configurable', () => {
  const c = loadConfig({
    REQUEST_TIMEOUT: '5s',
    HEADERS_TIMEOUT: '2s',
    KEEP_ALIVE_TIMEOUT: '10s',
    MAX_CONNECTIONS: '500',
    WS_MAX_PER_DRIVER: '1',
    METRICS_TOKEN: 'tok',
  });
  assert.deepEqual(
    [
      c.server.requestTimeoutMs,
      c.server.headersTimeoutMs,
      c.server.keepAliveTimeoutMs,
      c.server.maxConnections,
      c.server.wsMaxPerDriver,
      c.server.metricsToken,
    ],
    [5000, 2000, 10_000, 500, 1, 'tok'],
  );
  assert.throws(
    () => loadConfig({ MAX_CONNECTIONS: '0', WS_MAX_PER_DRIVER: 'two' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 2);
      return true;
    },
  );
});

test('one error names every bad variable', () => {
  try {
    loadConfig({
      PORT: 'abc',
      ACCESS_TOKEN_TTL: '15 minutes',
      RATE_LIMIT_LOGIN: 'five',
      JWT_SECRET: 'short',
      TRUST_PROXY: 'not-an-ip',
      SMS_TRANSPORT: 'pigeon',
      WEBHOOK_ALLOW_HTTP: 'maybe',
      ADMIN_EMAIL: 'a@example.com',
    });
    assert.fail('expected a ConfigError');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    const text = err.message;
    for (const name of [
      'PORT',
      'ACCESS_TOKEN_TTL',
      'RATE_LIMIT_LOGIN',
      'JWT_SECRET',
      'TRUST_PROXY',
      'SMS_TRANSPORT',
      'WEBHOOK_ALLOW_HTTP',
      'ADMIN_PASSWORD',
    ]) {
      assert.match(text, new RegExp(name), `${name} should be named`);
    }
    assert.equal(err.problems.length, 8);
  }
});

test('production refuses unsafe defaults and flips webhook safety', () => {
  assert.throws(
    () => loadConfig({ NODE_ENV: 'production' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /DATABASE_URL is required/);
      assert.match(err.message, /JWT_SECRET is required/);
      assert.match(err.message, /SMS_TRANSPORT=console is refused/);
      return true;
    },
  );
  const c = loadConfig({
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://db/app',
    JWT_SECRET: 'kP3v9Qz7Lw2mXr8Tn5Yb1Hc6Jd4Fg0Ae-Us_Io',
    SMS_TRANSPORT: 'http',
    SMS_HTTP_URL: 'https://sms.example.com/send',
  });
  assert.equal(c.webhooks.allowHttp, false);
  assert.equal(c.webhooks.allowPrivateTargets, false);
});

test('production refuses a weak JWT_SECRET and the file SMS transport unless allowed, naming the variables', () => {
  const base = {
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://db/app',
    SMS_TRANSPORT: 'http',
    SMS_HTTP_URL: 'https://sms.example.com/send',
  };
  for (const weak of ['x'.repeat(32), 'change-me-please-change-me-please-123', 'abababababababababababababababab']) {
    assert.throws(() => loadConfig({ ...base, JWT_SECRET: weak }), /JWT_SECRET looks weak/);
  }
  const strong = 'kP3v9Qz7Lw2mXr8Tn5Yb1Hc6Jd4Fg0Ae-Us_Io';
  assert.throws(
    () => loadConfig({ ...base, JWT_SECRET: strong, SMS_TRANSPORT: 'file' }),
    /SMS_ALLOW_FILE_IN_PRODUCTION/,
  );
  assert.equal(
    loadConfig({ ...base, JWT_SECRET: strong, SMS_TRANSPORT: 'file', SMS_ALLOW_FILE_IN_PRODUCTION: 'true' }).sms
      .transport,
    'file',
  );
  // Outside production the development defaults stay usable.
  assert.equal(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).auth.jwtSecret, 'x'.repeat(32));
});

test('the provider SMS transports need their credentials, and name the missing ones', () => {
  assert.throws(
    () => loadConfig({ SMS_TRANSPORT: 'twilio', TWILIO_ACCOUNT_SID: 'AC1' }),
    /TWILIO_AUTH_TOKEN, TWILIO_FROM required when SMS_TRANSPORT=twilio/,
  );
  assert.throws(
    () => loadConfig({ SMS_TRANSPORT: 'africastalking' }),
    /AT_USERNAME, AT_API_KEY required when SMS_TRANSPORT=africastalking/,
  );
  assert.throws(
    () => loadConfig({ SMS_TRANSPORT: 'carrier-pigeon' }),
    /SMS_TRANSPORT must be one of console, file, http, twilio, africastalking/,
  );
  const twilio = loadConfig({
    SMS_TRANSPORT: 'twilio',
    TWILIO_ACCOUNT_SID: 'AC1',
    TWILIO_AUTH_TOKEN: 't',
    TWILIO_FROM: '+15005550006',
  });
  assert.deepEqual(twilio.sms.twilio, {
    accountSid: 'AC1',
    authToken: 't',
    from: '+15005550006',
    baseUrl: 'https://api.twilio.com',
  });
  const sandbox = loadConfig({ SMS_TRANSPORT: 'africastalking', AT_USERNAME: 'sandbox', AT_API_KEY: 'k' });
  assert.equal(sandbox.sms.africasTalking?.baseUrl, 'https://api.sandbox.africastalking.com');
  const live = loadConfig({ SMS_TRANSPORT: 'africastalking', AT_USERNAME: 'acme', AT_API_KEY: 'k', AT_FROM: 'ACME' });
  assert.deepEqual(live.sms.africasTalking, {
    username: 'acme',
    apiKey: 'k',
    from: 'ACME',
    baseUrl: 'https://api.africastalking.com',
  });
});

test('rate limits take off, trust proxy takes hops and CIDRs', () => {
  const c = loadConfig({ RATE_LIMIT_GLOBAL: 'off', TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' });
  assert.equal(c.rateLimits.global, null);
  assert.deepEqual(c.server.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).server.trustProxy, 2);
});

test('pricing: defaults of section 18, distances in m or km, the surge cap with one decimal', () => {
  assert.deepEqual(loadConfig({}).pricing, {
    quoteTtlMs: 600_000,
    surgeCellMeters: 2000,
    surgeIntervalMs: 60_000,
    surgeMaxTenths: 20,
    surgeAccountCap: 3,
    maxTripDistanceMeters: 300_000,
  });
  const c = loadConfig({
    QUOTE_TTL: '5m',
    SURGE_CELL: '1500m',
    SURGE_INTERVAL: '30s',
    SURGE_MAX: '3.5',
    MAX_TRIP_DISTANCE: '50km',
  });
  assert.deepEqual(c.pricing, {
    quoteTtlMs: 300_000,
    surgeCellMeters: 1500,
    surgeIntervalMs: 30_000,
    surgeMaxTenths: 35,
    surgeAccountCap: 3,
    maxTripDistanceMeters: 50_000,
  });
  assert.equal(loadConfig({ SURGE_CELL: '2.5km' }).pricing.surgeCellMeters, 2500);
  assert.throws(
    () =>
      loadConfig({
        QUOTE_TTL: 'soon',
        SURGE_CELL: '2 miles',
        SURGE_INTERVAL: '0s',
        SURGE_MAX: '1.25',
        MAX_TRIP_DISTANCE: '10m',
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      for (const name of ['QUOTE_TTL', 'SURGE_CELL', 'SURGE_INTERVAL', 'SURGE_MAX', 'MAX_TRIP_DISTANCE'])
        assert.match(err.message, new RegExp(name));
      assert.equal(err.problems.length, 5);
      return true;
    },
  );
  assert.throws(() => loadConfig({ SURGE_MAX: '0.9' }), /SURGE_MAX/);
});

test('tracking: links on PUBLIC_BASE_URL (default this port on localhost), TRACKING_INTERVAL a duration', () => {
  assert.deepEqual(loadConfig({ PORT: '8080' }).tracking, { publicBaseUrl: 'http://localhost:8080', intervalMs: 3000 });
  assert.deepEqual(loadConfig({ PUBLIC_BASE_URL: 'https://track.example.com/', TRACKING_INTERVAL: '5s' }).tracking, {
    publicBaseUrl: 'https://track.example.com',
    intervalMs: 5000,
  });
  assert.equal(
    loadConfig({ PUBLIC_BASE_URL: 'https://example.com/deliveries/' }).tracking.publicBaseUrl,
    'https://example.com/deliveries',
  );
  for (const bad of ['example.com', 'ftp://example.com', 'https://example.com/?a=1', 'https://user:pw@example.com']) {
    assert.throws(() => loadConfig({ PUBLIC_BASE_URL: bad }), /PUBLIC_BASE_URL must be an http\(s\) URL/, bad);
  }
  assert.throws(() => loadConfig({ TRACKING_INTERVAL: 'often' }), /TRACKING_INTERVAL must be a duration/);
});

test('stream caps: STREAMS_PER_ACCOUNT (20) and STREAMS_PER_IP (200), positive whole numbers', () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.server.streamsPerAccount, defaults.server.streamsPerIp], [20, 200]);
  const set = loadConfig({ STREAMS_PER_ACCOUNT: '5', STREAMS_PER_IP: '5000' });
  assert.deepEqual([set.server.streamsPerAccount, set.server.streamsPerIp], [5, 5000]);
  assert.throws(
    () => loadConfig({ STREAMS_PER_ACCOUNT: '0', STREAMS_PER_IP: 'off' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.problems, [
        'STREAMS_PER_ACCOUNT must be a whole number from 1 to 1000000 (got "0")',
        'STREAMS_PER_IP must be a whole number from 1 to 10000000 (got "off")',
      ]);
      return true;
    },
  );
});

/** The configuration is refused with exactly these problems. */
function refused(env: Record<string, string>, problems: string[]) {
  assert.throws(
    () => loadConfig(env),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.problems, problems);
      return true;
    },
  );
}

// Contract section 12: a variable set alone never stops the service because of a default the
// operator did not touch; two set values that contradict each other are refused, naming both.
test('headers and request timeouts: the untouched one follows the one set; both set and contradicting are refused', () => {
  const timeouts = (env: Record<string, string>) => {
    const c = loadConfig(env);
    return [c.server.headersTimeoutMs, c.server.requestTimeoutMs];
  };
  assert.deepEqual(timeouts({ REQUEST_TIMEOUT: '5s' }), [5000, 5000]);
  assert.deepEqual(timeouts({ HEADERS_TIMEOUT: '45s' }), [45_000, 45_000]);
  assert.deepEqual(timeouts({ REQUEST_TIMEOUT: '5s', HEADERS_TIMEOUT: '5s' }), [5000, 5000]);
  refused({ REQUEST_TIMEOUT: '5s', HEADERS_TIMEOUT: '6s' }, [
    'HEADERS_TIMEOUT (6s) must not exceed REQUEST_TIMEOUT (5s)',
  ]);
});

test('dispatch radius and its maximum: the untouched one follows the one set; both set and contradicting are refused', () => {
  const radii = (env: Record<string, string>) => {
    const c = loadConfig(env).dispatch;
    return [c.radiusMeters, c.maxRadiusMeters];
  };
  assert.deepEqual(radii({ DISPATCH_RADIUS: '20km' }), [20_000, 20_000]);
  assert.deepEqual(radii({ DISPATCH_MAX_RADIUS: '2km' }), [2000, 2000]);
  assert.deepEqual(radii({ DISPATCH_RADIUS: '8km' }), [8000, 15_000]);
  refused({ DISPATCH_RADIUS: '10km', DISPATCH_MAX_RADIUS: '5km' }, [
    'DISPATCH_RADIUS (10km) must not exceed DISPATCH_MAX_RADIUS (5km)',
  ]);
});

test('token lifetimes: access <= refresh <= remember-me; untouched ones follow, set ones that contradict are refused', () => {
  const ttls = (env: Record<string, string>) => {
    const c = loadConfig(env);
    return [c.auth.accessTokenTtlMs, c.auth.refreshTokenTtlMs, c.auth.rememberMeRefreshTokenTtlMs];
  };
  const [m, d] = [60_000, 86_400_000];
  assert.deepEqual(ttls({ REFRESH_TOKEN_TTL: '5m' }), [5 * m, 5 * m, 30 * d]);
  assert.deepEqual(ttls({ REFRESH_TOKEN_TTL: '60d' }), [15 * m, 60 * d, 60 * d]);
  assert.deepEqual(ttls({ REMEMBER_ME_REFRESH_TOKEN_TTL: '1d' }), [15 * m, 1 * d, 1 * d]);
  assert.deepEqual(ttls({ REMEMBER_ME_REFRESH_TOKEN_TTL: '10m' }), [10 * m, 10 * m, 10 * m]);
  assert.deepEqual(ttls({ ACCESS_TOKEN_TTL: '1d' }), [1 * d, 7 * d, 30 * d]);
  refused({ ACCESS_TOKEN_TTL: '1d', REFRESH_TOKEN_TTL: '1h' }, [
    'ACCESS_TOKEN_TTL (1d) must not exceed REFRESH_TOKEN_TTL (1h)',
  ]);
  refused({ REFRESH_TOKEN_TTL: '40d', REMEMBER_ME_REFRESH_TOKEN_TTL: '30d' }, [
    'REFRESH_TOKEN_TTL (40d) must not exceed REMEMBER_ME_REFRESH_TOKEN_TTL (30d)',
  ]);
  // Not neighbours: the one between them cannot follow both.
  refused({ ACCESS_TOKEN_TTL: '1d', REMEMBER_ME_REFRESH_TOKEN_TTL: '1h' }, [
    'ACCESS_TOKEN_TTL (1d) must not exceed REMEMBER_ME_REFRESH_TOKEN_TTL (1h)',
  ]);
});

test('code and login session lifetimes: the untouched one follows the one set; both set and contradicting are refused', () => {
  const ttls = (env: Record<string, string>) => {
    const c = loadConfig(env);
    return [c.auth.otpTtlMs, c.auth.loginSessionTtlMs];
  };
  assert.deepEqual(ttls({ LOGIN_SESSION_TTL: '2m' }), [120_000, 120_000]);
  assert.deepEqual(ttls({ OTP_TTL: '30m' }), [1_800_000, 1_800_000]);
  refused({ OTP_TTL: '15m', LOGIN_SESSION_TTL: '10m' }, ['OTP_TTL (15m) must not exceed LOGIN_SESSION_TTL (10m)']);
});

test('a bad value does not also count as a contradiction', () => {
  refused({ REQUEST_TIMEOUT: '5s', HEADERS_TIMEOUT: 'soon' }, [
    'HEADERS_TIMEOUT must be a duration such as 500ms, 30s, 15m, 2h or 7d (got "soon")',
  ]);
});

test('a duration above its maximum is refused, naming the variable and its maximum', () => {
  // Before: 30d for the connect timeout ended the process; a 30d surge interval ran every millisecond.
  refused({ DATABASE_CONNECT_TIMEOUT: '30d' }, ['DATABASE_CONNECT_TIMEOUT must be at most 5m (got "30d")']);
  refused({ SURGE_INTERVAL: '30d' }, ['SURGE_INTERVAL must be at most 1h (got "30d")']);
  refused({ RATE_LIMIT_LOGIN: '5/30d' }, ['RATE_LIMIT_LOGIN must have a window of at most 7d (got "5/30d")']);
  refused({ WEBHOOK_RETRY_SCHEDULE: '5s,30d' }, [
    'WEBHOOK_RETRY_SCHEDULE entries must be at most 7d (bad entry "30d")',
  ]);
});

// Dates compared in the database, never a timer: these may exceed what a Node timer takes.
// SCHEDULE_MAX_AHEAD bounds how far ahead a window may start: never a timer's delay (the scheduler's timer is capped).
const NOT_TIMERS = new Set(['REFRESH_TOKEN_TTL', 'REMEMBER_ME_REFRESH_TOKEN_TTL', 'SCHEDULE_MAX_AHEAD']);
const TIMER_LIMIT_MS = 2 ** 31 - 1;

test('every duration variable has a maximum: accepted at it, refused above it (30d too), documented', () => {
  const settings = durationSettings();
  const names = settings.map((s) => s.name);
  for (const known of [
    'DATABASE_CONNECT_TIMEOUT',
    'REQUEST_TIMEOUT',
    'KEEP_ALIVE_TIMEOUT',
    'OTP_TTL',
    'RATE_LIMIT_GLOBAL',
    'WEBHOOK_RETRY_SCHEDULE',
    'TRACKING_INTERVAL',
  ]) {
    assert.ok(names.includes(known), known);
  }
  assert.equal(new Set(names).size, names.length, 'each variable once');
  const docs = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8').split('\n');
  for (const { name, maxMs, kind } of settings) {
    const write = (ms: number) => (kind === 'rate-limit' ? `1/${formatDuration(ms)}` : formatDuration(ms));
    const max = formatDuration(maxMs);
    if (!NOT_TIMERS.has(name)) assert.ok(maxMs <= TIMER_LIMIT_MS, `${name}: ${max} is more than a timer takes`);
    assert.doesNotThrow(() => loadConfig({ [name]: write(maxMs) }), name);
    for (const tooLong of [...new Set([maxMs + 1, 30 * 86_400_000])].filter((ms) => ms > maxMs)) {
      assert.throws(
        () => loadConfig({ [name]: write(tooLong) }),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError, name);
          assert.equal(err.problems.length, 1, name);
          assert.ok(err.problems[0]!.startsWith(name) && err.problems[0]!.includes(`at most ${max}`), err.problems[0]);
          return true;
        },
        `${name}=${write(tooLong)}`,
      );
    }
    const row = docs.find((line) => line.startsWith(`| \`${name}\` |`));
    assert.ok(
      row?.includes(`at most \`${max}\``),
      `docs/configuration.md gives ${name}'s maximum (at most \`${max}\`)`,
    );
  }
});

test('Web Push: VAPID keys are validated and set together; the test-only switches are refused in production', () => {
  const c = loadConfig({});
  assert.deepEqual(c.push, {
    vapid: undefined,
    subject: 'mailto:admin@localhost',
    timeoutMs: 10_000,
    concurrency: 50,
    allowHttp: false,
    allowPrivateTargets: false,
  });
  // A real pair: 65-byte uncompressed point, 32-byte scalar.
  const publicKey = `BA${'A'.repeat(85)}`;
  const privateKey = 'A'.repeat(43);
  const given = loadConfig({
    VAPID_PUBLIC_KEY: publicKey,
    VAPID_PRIVATE_KEY: privateKey,
    VAPID_SUBJECT: 'https://ops.example.com/contact',
    PUSH_TIMEOUT: '3s',
    PUSH_CONCURRENCY: '8',
  });
  assert.deepEqual(given.push.vapid, { publicKey, privateKey, subject: 'https://ops.example.com/contact' });
  assert.equal(given.push.timeoutMs, 3000);
  assert.equal(given.push.concurrency, 8);
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };
  assert.deepEqual(problems({ VAPID_PUBLIC_KEY: publicKey }), [
    'VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY must be set together',
  ]);
  assert.deepEqual(problems({ VAPID_PUBLIC_KEY: 'short', VAPID_PRIVATE_KEY: 'x+y' }), [
    'VAPID_PUBLIC_KEY must be an uncompressed P-256 public key, base64url (65 bytes, 87 characters)',
    'VAPID_PRIVATE_KEY must be a P-256 private key, base64url (32 bytes, 43 characters)',
  ]);
  assert.deepEqual(problems({ VAPID_SUBJECT: 'admin@example.com' }), [
    'VAPID_SUBJECT must be a mailto: address or an https: URL (got "admin@example.com")',
  ]);
  assert.deepEqual(problems({ PUSH_TIMEOUT: '2m', PUSH_CONCURRENCY: '0' }), [
    'PUSH_TIMEOUT must be at most 1m (got "2m")',
    'PUSH_CONCURRENCY must be a whole number from 1 to 1000 (got "0")',
  ]);
  const production = {
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://db/x',
    JWT_SECRET: 'Zq8#vT2!kLm9@pW4$rX7^nB3&cY6*dF1(gH5)',
    SMS_TRANSPORT: 'http',
    SMS_HTTP_URL: 'https://sms.example.com',
  };
  assert.deepEqual(problems({ ...production, PUSH_ALLOW_HTTP: 'true', PUSH_ALLOW_PRIVATE_TARGETS: 'true' }), [
    'PUSH_ALLOW_HTTP=true is refused in production',
    'PUSH_ALLOW_PRIVATE_TARGETS=true is refused in production',
  ]);
  assert.equal(
    loadConfig(production).push.vapid,
    undefined,
    'production without keys: push off (deps generates none with DATABASE_URL)',
  );
});

test('MAX_PLAUSIBLE_SPEED: 250 km/h by default, a number of km/h, or off', () => {
  assert.equal(loadConfig({}).drivers.maxPlausibleSpeedKmh, 250);
  assert.equal(loadConfig({ MAX_PLAUSIBLE_SPEED: '120.5' }).drivers.maxPlausibleSpeedKmh, 120.5);
  assert.equal(loadConfig({ MAX_PLAUSIBLE_SPEED: 'OFF' }).drivers.maxPlausibleSpeedKmh, null);
  for (const value of ['0', '5', 'fast', '-250', '250km/h', '1e9']) {
    assert.throws(
      () => loadConfig({ MAX_PLAUSIBLE_SPEED: value }),
      (err: ConfigError) => err.problems.some((p) => p.startsWith('MAX_PLAUSIBLE_SPEED')),
      value,
    );
  }
});

test('ratings and tips: RATING_ALERT_BELOW 1.0 to 5.0 with one decimal, TIP_MAX_SHARE as 50% or 0.5', () => {
  assert.deepEqual(loadConfig({}).ratings, { alertBelowTenths: 40, tipMaxShareBasisPoints: 5000 });
  assert.deepEqual(loadConfig({ RATING_ALERT_BELOW: '3.5', TIP_MAX_SHARE: '25%' }).ratings, {
    alertBelowTenths: 35,
    tipMaxShareBasisPoints: 2500,
  });
  assert.deepEqual(loadConfig({ RATING_ALERT_BELOW: '5', TIP_MAX_SHARE: '0.125' }).ratings, {
    alertBelowTenths: 50,
    tipMaxShareBasisPoints: 1250,
  });
  for (const value of ['0.9', '5.1', '4.25', 'four', '-1']) {
    assert.throws(
      () => loadConfig({ RATING_ALERT_BELOW: value }),
      (err: ConfigError) => err.problems.some((p) => p.startsWith('RATING_ALERT_BELOW')),
      value,
    );
  }
  for (const value of ['0', '0%', '101%', '1.5', 'half', '50']) {
    assert.throws(
      () => loadConfig({ TIP_MAX_SHARE: value }),
      (err: ConfigError) => err.problems.some((p) => p.startsWith('TIP_MAX_SHARE')),
      value,
    );
  }
});

test('geocoder: off without GEOCODER_URL; an http(s) URL; nominatim or photon', () => {
  assert.deepEqual(loadConfig({}).geocoder, {
    url: undefined,
    kind: 'nominatim',
    timeoutMs: 5000,
    cacheTtlMs: 600_000,
  });
  assert.deepEqual(
    loadConfig({ GEOCODER_URL: 'https://geo.example.org/nominatim/', GEOCODER_KIND: 'PHOTON', GEOCODER_TIMEOUT: '2s' })
      .geocoder,
    {
      url: 'https://geo.example.org/nominatim',
      kind: 'photon',
      timeoutMs: 2000,
      cacheTtlMs: 600_000,
    },
  );
  for (const env of [
    { GEOCODER_URL: 'ftp://x' },
    { GEOCODER_URL: 'not a url' },
    { GEOCODER_KIND: 'google' },
    { GEOCODER_TIMEOUT: '2m' },
  ]) {
    assert.throws(() => loadConfig(env), ConfigError, JSON.stringify(env));
  }
});

test('proof decoding: PROOF_MAX_DECODED_SIZE (96MB, 32MB to 1024MB) and PROOF_DECODE_CONCURRENCY (2, 1 to 64)', () => {
  const c = loadConfig({});
  assert.equal(c.proof.maxDecodedBytes, 96 * 1024 * 1024);
  assert.equal(c.proof.decodeConcurrency, 2);
  const given = loadConfig({ PROOF_MAX_DECODED_SIZE: '256MB', PROOF_DECODE_CONCURRENCY: '4' });
  assert.deepEqual([given.proof.maxDecodedBytes, given.proof.decodeConcurrency], [256 * 1024 * 1024, 4]);
  try {
    loadConfig({ PROOF_MAX_DECODED_SIZE: '8MB', PROOF_DECODE_CONCURRENCY: '0' });
    assert.fail('accepted');
  } catch (err) {
    assert.deepEqual((err as ConfigError).problems, [
      'PROOF_MAX_DECODED_SIZE must be a size such as 512KB or 8MB, from 32MB to 1024MB (got "8MB")',
      'PROOF_DECODE_CONCURRENCY must be a whole number from 1 to 64 (got "0")',
    ]);
  }
});
