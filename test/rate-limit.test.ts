import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, redisSkipReason, type TestApp } from './helpers/app.js';
import { createUser, uniquePhone } from './helpers/factories.js';

const LIMITED = { statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED' };

function assertLimited(
  res: { statusCode: number; headers: Record<string, unknown>; json(): any },
  limit: number,
  windowSeconds: number,
) {
  assert.equal(res.statusCode, 429);
  const body = res.json();
  assert.deepEqual({ ...body, message: undefined }, { ...LIMITED, message: undefined });
  assert.match(body.message, /^Too many requests; retry in \d+ seconds$/);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= windowSeconds, `retry-after ${retryAfter}`);
  assert.equal(res.headers['x-ratelimit-limit'], String(limit));
  assert.equal(res.headers['x-ratelimit-remaining'], '0');
  assert.ok(Number(res.headers['x-ratelimit-reset']) <= windowSeconds);
}

describe('per-route limits at the interface description numbers', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({
      env: { RATE_LIMIT_LOGIN: '5/15m', RATE_LIMIT_LOGIN_SEND_OTP: '3/5m', RATE_LIMIT_REGISTER_SEND_OTP: '3/5m' },
    });
  });
  after(async () => t.close());

  const post = (url: string, payload: object, remoteAddress: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/api${url}`, payload, remoteAddress, headers });

  test('POST /auth/login: 5 per 15 minutes per IP, the 6th is 429', async () => {
    const ip = '10.1.0.1';
    for (let i = 1; i <= 5; i++) {
      const res = await post('/auth/login', { identifier: 'nobody@example.com', password: 'whatever-it-is' }, ip);
      assert.equal(res.statusCode, 401, `request ${i}`);
      assert.equal(res.headers['x-ratelimit-limit'], '5');
      assert.equal(res.headers['x-ratelimit-remaining'], String(5 - i));
      assert.ok(Number(res.headers['x-ratelimit-reset']) <= 900);
    }
    assertLimited(
      await post('/auth/login', { identifier: 'nobody@example.com', password: 'whatever-it-is' }, ip),
      5,
      900,
    );
    // Another IP has its own count; X-Forwarded-For is ignored without TRUST_PROXY.
    const spoofed = await post('/auth/login', { identifier: 'x@example.com', password: 'y-y-y-y-y' }, ip, {
      'x-forwarded-for': '1.2.3.4',
    });
    assert.equal(spoofed.statusCode, 429);
    assert.equal(
      (await post('/auth/login', { identifier: 'x@example.com', password: 'y-y-y-y-y' }, '10.1.0.2')).statusCode,
      401,
    );
  });

  test('POST /auth/login/send-otp: 3 per 5 minutes per IP', async () => {
    const ip = '10.2.0.1';
    const body = { sessionId: '00000000-0000-4000-8000-000000000000', phone: '+254712345678' };
    for (let i = 1; i <= 3; i++) assert.equal((await post('/auth/login/send-otp', body, ip)).statusCode, 401);
    assertLimited(await post('/auth/login/send-otp', body, ip), 3, 300);
  });

  test('POST /auth/register/send-otp: 3 per 5 minutes; password/forgot the same numbers, counted apart', async () => {
    const ip = '10.3.0.1';
    for (let i = 1; i <= 3; i++)
      assert.equal((await post('/auth/register/send-otp', { phone: uniquePhone() }, ip)).statusCode, 200);
    assertLimited(await post('/auth/register/send-otp', { phone: uniquePhone() }, ip), 3, 300);
    for (let i = 1; i <= 3; i++)
      assert.equal((await post('/auth/password/forgot', { identifier: 'a@example.com' }, ip)).statusCode, 200);
    assertLimited(await post('/auth/password/forgot', { identifier: 'a@example.com' }, ip), 3, 300);
  });

  test('routes without a limit of their own carry no limit headers when the global limit is off', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: '10.1.0.1' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-ratelimit-limit'], undefined);
  });
});

describe('global limit', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_GLOBAL: '100/15m', RATE_LIMIT_LOGIN: '5/15m' } });
  });
  after(async () => t.close());

  test('100 requests per 15 minutes per IP on every /api route; /health and /metrics are not limited', async () => {
    const ip = '10.9.0.1';
    for (let i = 1; i <= 100; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: ip });
      assert.equal(res.statusCode, 200, `request ${i}`);
      assert.equal(res.headers['x-ratelimit-limit'], '100');
      assert.equal(res.headers['x-ratelimit-remaining'], String(100 - i));
    }
    assertLimited(await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: ip }), 100, 900);
    // Routes with their own limit count towards the global one too.
    assertLimited(
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { identifier: 'a@b.co', password: 'x' },
        remoteAddress: ip,
      }),
      100,
      900,
    );
    for (const url of ['/health', '/health/ready', '/metrics']) {
      const res = await t.app.inject({ method: 'GET', url, remoteAddress: ip });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    }
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: '10.9.0.2' })).statusCode,
      200,
    );
  });

  test('unknown /api paths count towards the global limit and keep the 404 shape', async () => {
    const ip = '10.9.0.3';
    const first = await t.app.inject({ method: 'GET', url: '/api/nope?x=1', remoteAddress: ip });
    assert.deepEqual(first.json(), {
      statusCode: 404,
      message: 'Route GET /api/nope not found',
      error: 'Not Found',
      code: 'ROUTE_NOT_FOUND',
    });
    assert.equal(first.headers['x-ratelimit-remaining'], '99');
    for (let i = 0; i < 99; i++) await t.app.inject({ method: 'GET', url: `/api/nope-${i}`, remoteAddress: ip });
    assertLimited(await t.app.inject({ method: 'GET', url: '/api/countries', remoteAddress: ip }), 100, 900);
  });
});

describe('TRUST_PROXY', () => {
  test('with a trusted proxy, the X-Forwarded-For client is the one counted', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_LOGIN: '2/15m', TRUST_PROXY: '127.0.0.1' } });
    try {
      const login = (xff: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { identifier: 'n@example.com', password: 'p-p-p-p-p' },
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': xff },
        });
      assert.equal((await login('203.0.113.1')).statusCode, 401);
      assert.equal((await login('203.0.113.1')).statusCode, 401);
      assert.equal((await login('203.0.113.1')).statusCode, 429);
      assert.equal((await login('203.0.113.2')).statusCode, 401);
    } finally {
      await t.close();
    }
  });
});

describe('TRUST_PROXY hop count', () => {
  test("TRUST_PROXY=1: the address the proxy in front added is the client; earlier entries (the client's own) are not", async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_LOGIN: '2/15m', TRUST_PROXY: '1' } });
    try {
      const login = (xff: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { identifier: 'n@example.com', password: 'p-p-p-p-p' },
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': xff },
        });
      assert.equal((await login('203.0.113.7')).statusCode, 401);
      assert.equal((await login('198.51.100.1, 203.0.113.7')).statusCode, 401);
      assert.equal((await login('198.51.100.2, 203.0.113.7')).statusCode, 429, 'a spoofed first entry changes nothing');
      assert.equal((await login('203.0.113.8')).statusCode, 401);
    } finally {
      await t.close();
    }
  });
});

describe('limits counted in Redis', { skip: redisSkipReason }, () => {
  test('two instances on one Redis share the login limit', async () => {
    const prefix = `test:rl-${Date.now().toString(36)}:`;
    const env = { RATE_LIMIT_LOGIN: '5/15m' };
    const a = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env });
    const b = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env, database: a.database });
    try {
      const login = (app: TestApp) =>
        app.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { identifier: 'n@example.com', password: 'p-p-p-p-p' },
          remoteAddress: '10.5.0.1',
        });
      for (let i = 0; i < 3; i++) assert.equal((await login(a)).statusCode, 401);
      for (let i = 0; i < 2; i++) assert.equal((await login(b)).statusCode, 401);
      assert.equal((await login(a)).statusCode, 429);
      assert.equal((await login(b)).statusCode, 429);
      const keys = await a.deps.redis!.keys(`${prefix}rl:*`);
      assert.ok(keys.length > 0, 'the counters live in Redis under the prefix');
    } finally {
      await b.close();
      await a.close();
      const { deleteRedisKeys } = await import('./helpers/app.js');
      await deleteRedisKeys(prefix);
    }
  });

  test('when Redis fails the limit still holds (in-process fallback)', async () => {
    const t = await buildTestApp({ redis: true, env: { RATE_LIMIT_LOGIN: '3/15m' } });
    try {
      const login = () =>
        t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { identifier: 'n@example.com', password: 'p-p-p-p-p' },
          remoteAddress: '10.6.0.1',
        });
      t.deps.redis!.disconnect();
      for (let i = 0; i < 3; i++) assert.equal((await login()).statusCode, 401, `request ${i + 1}`);
      const limited = await login();
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) >= 1);
    } finally {
      await t.close();
    }
  });
});

describe('revocation across instances', { skip: redisSkipReason }, () => {
  test('logout on one instance kills the access token on the other at once', async () => {
    const prefix = `test:rv-${Date.now().toString(36)}:`;
    const a = await buildTestApp({ redis: true, redisKeyPrefix: prefix });
    const b = await buildTestApp({ redis: true, redisKeyPrefix: prefix, database: a.database, clock: a.clock });
    try {
      const user = await createUser(a);
      const row = await a.db
        .selectFrom('auth_sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      // A refresh token we know: put its hash on the factory session.
      const { createHash, randomUUID } = await import('node:crypto');
      const refreshToken = randomUUID();
      await a.db
        .updateTable('auth_sessions')
        .set({ refresh_token_hash: createHash('sha256').update(refreshToken).digest('hex') })
        .where('id', '=', row.id)
        .execute();
      const me = (app: TestApp) => app.app.inject({ method: 'GET', url: '/api/auth/me', headers: user.headers });
      // B has the session cached as live.
      assert.equal((await me(b)).statusCode, 200);
      assert.equal(
        (await a.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refreshToken } })).statusCode,
        200,
      );
      let status = 0;
      for (let i = 0; i < 50 && status !== 401; i++) {
        status = (await me(b)).statusCode;
        if (status !== 401) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, 401);

      // Suspension on B revokes on A.
      const other = await createUser(a);
      assert.equal(
        (await a.app.inject({ method: 'GET', url: '/api/auth/me', headers: other.headers })).statusCode,
        200,
      );
      const admin = await createUser(a, { role: 'ADMIN' });
      const res = await b.app.inject({
        method: 'POST',
        url: `/api/admin/users/${other.id}/suspend`,
        headers: admin.headers,
        payload: { reason: 'x' },
      });
      assert.equal(res.statusCode, 200);
      let otherStatus = 0;
      for (let i = 0; i < 50 && otherStatus !== 401; i++) {
        otherStatus = (await a.app.inject({ method: 'GET', url: '/api/auth/me', headers: other.headers })).statusCode;
        if (otherStatus !== 401) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(otherStatus, 401);
    } finally {
      await b.close();
      await a.close();
      const { deleteRedisKeys } = await import('./helpers/app.js');
      await deleteRedisKeys(prefix);
    }
  });
});
