// METRICS_TOKEN: with it set, GET /metrics needs that bearer token; production warns when it is unset.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';

const TOKEN = 'metrics-token-0123456789';
const WARNING = 'METRICS_TOKEN is unset: GET /metrics is open to anyone who can reach this port';
// What production requires; the database itself is the test's (passed to createDeps).
const PRODUCTION = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://unused.invalid/db',
  SMS_TRANSPORT: 'http',
  SMS_HTTP_URL: 'http://127.0.0.1:9/sms',
};

const warnings = (t: TestApp) =>
  t.logLines
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((l) => l.level === 40)
    .map((l) => l.msg);

describe('metrics token', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN } });
  });
  after(async () => t.close());

  test('without the token, or with a wrong one, /metrics is 401 in the error shape', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.headers['www-authenticate'], 'Bearer');
    assert.deepEqual(missing.json(), {
      statusCode: 401,
      error: 'Unauthorized',
      message: 'GET /metrics requires the metrics bearer token',
      code: 'MISSING_TOKEN',
    });
    for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN]) {
      const wrong = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });
      assert.equal(wrong.statusCode, 401, authorization);
      assert.ok(!wrong.body.includes('http_request'), 'no metrics leak');
    }
  });

  test('with the token, /metrics answers Prometheus text; health stays open', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.headers['content-type'] as string, /^text\/plain/);
    assert.match(ok.body, /# TYPE /);
    assert.equal((await t.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 200);
  });

  test('production warns at start when METRICS_TOKEN is unset, and not when it is set', async () => {
    const open = await buildTestApp({ env: PRODUCTION });
    try {
      assert.deepEqual(
        warnings(open).filter((m) => m === WARNING),
        [WARNING],
      );
      assert.equal(
        (await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode,
        200,
        'unset: open, as before',
      );
    } finally {
      await open.close();
    }
    const guarded = await buildTestApp({ env: { ...PRODUCTION, METRICS_TOKEN: TOKEN } });
    try {
      assert.ok(!warnings(guarded).includes(WARNING));
    } finally {
      await guarded.close();
    }
    assert.ok(!warnings(t).includes(WARNING), 'development does not warn');
  });
});
