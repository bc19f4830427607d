import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';

test('defaults follow the contract', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3000);
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.dataDir, './data');
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.databaseConnectTimeoutMs, 5000);
  assert.equal(c.accessTokenTtlMs, 15 * 60_000);
  assert.equal(c.refreshTokenTtlMs, 7 * 86_400_000);
  assert.equal(c.rememberMeRefreshTokenTtlMs, 30 * 86_400_000);
  assert.equal(c.loginSessionTtlMs, 10 * 60_000);
  assert.equal(c.otpTtlMs, 5 * 60_000);
  assert.equal(c.otpMaxAttempts, 5);
  assert.equal(c.otpMaxResends, 3);
  assert.equal(c.smsTransport, 'console');
  assert.equal(c.smsFile, 'data/sms.log');
  assert.deepEqual(c.rateLimits.global, { max: 100, windowMs: 900_000 });
  assert.deepEqual(c.rateLimits.login, { max: 5, windowMs: 900_000 });
  assert.deepEqual(c.rateLimits.loginSendOtp, { max: 3, windowMs: 300_000 });
  assert.deepEqual(c.rateLimits.registerSendOtp, { max: 3, windowMs: 300_000 });
  assert.equal(c.trustProxy, false);
  assert.equal(c.driverLocationTtlMs, 120_000);
  assert.deepEqual(c.webhookRetryScheduleMs.slice(0, 3), [5000, 30_000, 120_000]);
  assert.equal(c.webhookRetryScheduleMs.length, 10);
  assert.equal(c.webhookTimeoutMs, 10_000);
  assert.equal(c.webhookAllowHttp, true);
  assert.equal(c.webhookAllowPrivateTargets, true);
  assert.equal(c.workerPort, 9465);
  assert.equal(c.webhookSignatureHeader, 'X-Service-Signature');
  assert.equal(c.logLevel, 'info');
  assert.deepEqual(c.dispatch, { mode: 'offer', offerTtlMs: 20_000, radiusMeters: 5000, maxRadiusMeters: 15_000, retryIntervalMs: 30_000 });
  assert.equal(c.requestTimeoutMs, 30_000);
  assert.equal(c.headersTimeoutMs, 10_000);
  assert.equal(c.keepAliveTimeoutMs, 72_000);
  assert.equal(c.maxConnections, 20_000);
  assert.equal(c.wsMaxPerDriver, 2);
  assert.equal(c.metricsToken, undefined);
});

test('dispatch settings: mode, durations and distances', () => {
  const c = loadConfig({ DISPATCH_MODE: 'broadcast', DISPATCH_OFFER_TTL: '45s', DISPATCH_RADIUS: '800m', DISPATCH_MAX_RADIUS: '2.5km', DISPATCH_RETRY_INTERVAL: '1m' });
  assert.deepEqual(c.dispatch, { mode: 'broadcast', offerTtlMs: 45_000, radiusMeters: 800, maxRadiusMeters: 2500, retryIntervalMs: 60_000 });
  assert.throws(
    () => loadConfig({ DISPATCH_MODE: 'nearest', DISPATCH_RADIUS: 'far', DISPATCH_OFFER_TTL: '0s' }),
    (err: unknown) => {
      const problems = (err as ConfigError).problems.join('\n');
      return /DISPATCH_MODE must be one of offer, broadcast, off/.test(problems) && /DISPATCH_RADIUS must be a distance/.test(problems) && /DISPATCH_OFFER_TTL/.test(problems);
    },
  );
  assert.throws(() => loadConfig({ DISPATCH_RADIUS: '10km', DISPATCH_MAX_RADIUS: '5km' }), /DISPATCH_MAX_RADIUS must be at least DISPATCH_RADIUS/);
});

test('slow-client limits are configurable; a headers timeout beyond the request timeout is refused', () => {
  const c = loadConfig({ REQUEST_TIMEOUT: '5s', HEADERS_TIMEOUT: '2s', KEEP_ALIVE_TIMEOUT: '10s', MAX_CONNECTIONS: '500', WS_MAX_PER_DRIVER: '1', METRICS_TOKEN: 'tok' });
  assert.deepEqual(
    [c.requestTimeoutMs, c.headersTimeoutMs, c.keepAliveTimeoutMs, c.maxConnections, c.wsMaxPerDriver, c.metricsToken],
    [5000, 2000, 10_000, 500, 1, 'tok'],
  );
  assert.throws(() => loadConfig({ REQUEST_TIMEOUT: '5s', HEADERS_TIMEOUT: '6s' }), /HEADERS_TIMEOUT must not be longer than REQUEST_TIMEOUT/);
  assert.throws(() => loadConfig({ MAX_CONNECTIONS: '0', WS_MAX_PER_DRIVER: 'two' }), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.problems.length, 2);
    return true;
  });
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
    for (const name of ['PORT', 'ACCESS_TOKEN_TTL', 'RATE_LIMIT_LOGIN', 'JWT_SECRET', 'TRUST_PROXY', 'SMS_TRANSPORT', 'WEBHOOK_ALLOW_HTTP', 'ADMIN_PASSWORD']) {
      assert.match(text, new RegExp(name), `${name} should be named`);
    }
    assert.equal(err.problems.length, 8);
  }
});

test('production refuses unsafe defaults and flips webhook safety', () => {
  assert.throws(() => loadConfig({ NODE_ENV: 'production' }), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /DATABASE_URL is required/);
    assert.match(err.message, /JWT_SECRET is required/);
    assert.match(err.message, /SMS_TRANSPORT=console is refused/);
    return true;
  });
  const c = loadConfig({
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://db/app',
    JWT_SECRET: 'kP3v9Qz7Lw2mXr8Tn5Yb1Hc6Jd4Fg0Ae-Us_Io',
    SMS_TRANSPORT: 'http',
    SMS_HTTP_URL: 'https://sms.example.com/send',
  });
  assert.equal(c.webhookAllowHttp, false);
  assert.equal(c.webhookAllowPrivateTargets, false);
});

test('production refuses a weak JWT_SECRET and the file SMS transport unless allowed, naming the variables', () => {
  const base = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/app', SMS_TRANSPORT: 'http', SMS_HTTP_URL: 'https://sms.example.com/send' };
  for (const weak of ['x'.repeat(32), 'change-me-please-change-me-please-123', 'abababababababababababababababab']) {
    assert.throws(() => loadConfig({ ...base, JWT_SECRET: weak }), /JWT_SECRET looks weak/);
  }
  const strong = 'kP3v9Qz7Lw2mXr8Tn5Yb1Hc6Jd4Fg0Ae-Us_Io';
  assert.throws(() => loadConfig({ ...base, JWT_SECRET: strong, SMS_TRANSPORT: 'file' }), /SMS_ALLOW_FILE_IN_PRODUCTION/);
  assert.equal(loadConfig({ ...base, JWT_SECRET: strong, SMS_TRANSPORT: 'file', SMS_ALLOW_FILE_IN_PRODUCTION: 'true' }).smsTransport, 'file');
  // Outside production the development defaults stay usable.
  assert.equal(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).jwtSecret, 'x'.repeat(32));
});

test('the provider SMS transports need their credentials, and name the missing ones', () => {
  assert.throws(() => loadConfig({ SMS_TRANSPORT: 'twilio', TWILIO_ACCOUNT_SID: 'AC1' }), /TWILIO_AUTH_TOKEN, TWILIO_FROM required when SMS_TRANSPORT=twilio/);
  assert.throws(() => loadConfig({ SMS_TRANSPORT: 'africastalking' }), /AT_USERNAME, AT_API_KEY required when SMS_TRANSPORT=africastalking/);
  assert.throws(() => loadConfig({ SMS_TRANSPORT: 'carrier-pigeon' }), /SMS_TRANSPORT must be one of console, file, http, twilio, africastalking/);
  const twilio = loadConfig({ SMS_TRANSPORT: 'twilio', TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+15005550006' });
  assert.deepEqual(twilio.sms.twilio, { accountSid: 'AC1', authToken: 't', from: '+15005550006', baseUrl: 'https://api.twilio.com' });
  const sandbox = loadConfig({ SMS_TRANSPORT: 'africastalking', AT_USERNAME: 'sandbox', AT_API_KEY: 'k' });
  assert.equal(sandbox.sms.africasTalking?.baseUrl, 'https://api.sandbox.africastalking.com');
  const live = loadConfig({ SMS_TRANSPORT: 'africastalking', AT_USERNAME: 'acme', AT_API_KEY: 'k', AT_FROM: 'ACME' });
  assert.deepEqual(live.sms.africasTalking, { username: 'acme', apiKey: 'k', from: 'ACME', baseUrl: 'https://api.africastalking.com' });
});

test('rate limits take off, trust proxy takes hops and CIDRs', () => {
  const c = loadConfig({ RATE_LIMIT_GLOBAL: 'off', TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' });
  assert.equal(c.rateLimits.global, null);
  assert.deepEqual(c.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
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
  const c = loadConfig({ QUOTE_TTL: '5m', SURGE_CELL: '1500m', SURGE_INTERVAL: '30s', SURGE_MAX: '3.5', MAX_TRIP_DISTANCE: '50km' });
  assert.deepEqual(c.pricing, { quoteTtlMs: 300_000, surgeCellMeters: 1500, surgeIntervalMs: 30_000, surgeMaxTenths: 35, surgeAccountCap: 3, maxTripDistanceMeters: 50_000 });
  assert.equal(loadConfig({ SURGE_CELL: '2.5km' }).pricing.surgeCellMeters, 2500);
  assert.throws(
    () => loadConfig({ QUOTE_TTL: 'soon', SURGE_CELL: '2 miles', SURGE_INTERVAL: '0s', SURGE_MAX: '1.25', MAX_TRIP_DISTANCE: '10m' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      for (const name of ['QUOTE_TTL', 'SURGE_CELL', 'SURGE_INTERVAL', 'SURGE_MAX', 'MAX_TRIP_DISTANCE']) assert.match(err.message, new RegExp(name));
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
  assert.equal(loadConfig({ PUBLIC_BASE_URL: 'https://example.com/deliveries/' }).tracking.publicBaseUrl, 'https://example.com/deliveries');
  for (const bad of ['example.com', 'ftp://example.com', 'https://example.com/?a=1', 'https://user:pw@example.com']) {
    assert.throws(() => loadConfig({ PUBLIC_BASE_URL: bad }), /PUBLIC_BASE_URL must be an http\(s\) URL/, bad);
  }
  assert.throws(() => loadConfig({ TRACKING_INTERVAL: 'often' }), /TRACKING_INTERVAL must be a duration/);
});
