// Serving the web console (src/http/web-console.ts) and the development first run (contract
// section 3), without a browser: test/console.test.ts drives the console itself.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../src/config.js';
import type { App } from '../src/http/context.js';
import { registerErrorHandling } from '../src/http/errors.js';
import { registerWebConsole, tileOrigin } from '../src/http/web-console.js';
import { buildTestApp, type TestApp } from './helpers/app.js';

describe('serving the web console', () => {
  const dist = mkdtempSync(path.join(tmpdir(), 'rd-web-'));
  const app = Fastify();
  before(async () => {
    mkdirSync(path.join(dist, 'assets'));
    writeFileSync(
      path.join(dist, 'index.html'),
      '<meta name="map-tile-url" content="%MAP_TILE_URL%"><script type="module" src="/assets/app.js"></script>',
    );
    writeFileSync(path.join(dist, 'assets/app.js'), 'console.log(1)');
    const config = loadConfig({ MAP_TILE_URL: 'https://{s}.tiles.example.org/{z}/{x}/{y}.png?a=1&b=2' });
    const consolePage = await registerWebConsole(app as unknown as App, config, dist);
    registerErrorHandling(app, { consolePage });
    app.get('/api/known', async () => ({ ok: true }));
  });
  after(async () => {
    await app.close();
    rmSync(dist, { recursive: true, force: true });
  });

  test('any path outside /api and the operational routes gets index.html with a strict CSP', async () => {
    for (const url of ['/', '/deliveries/123', '/t/some-token']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(res.headers['content-type'] as string, /text\/html/);
      const csp = res.headers['content-security-policy'] as string;
      assert.match(csp, /script-src 'self';/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(csp, /img-src 'self' data: https:\/\/\*\.tiles\.example\.org/);
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      // The tile URL reaches the page escaped, as an attribute.
      assert.match(res.body, /content="https:\/\/\{s\}\.tiles\.example\.org\/\{z\}\/\{x\}\/\{y\}\.png\?a=1&amp;b=2"/);
    }
    const asset = await app.inject({ method: 'GET', url: '/assets/app.js' });
    assert.equal(asset.statusCode, 200);
    assert.match(asset.headers['cache-control'] as string, /immutable/);
  });

  test('/api, /health and /metrics keep the API 404 in the error shape; other methods too', async () => {
    for (const url of ['/api/nope', '/api', '/health/nope', '/metrics/x']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().code, 'ROUTE_NOT_FOUND');
    }
    assert.equal((await app.inject({ method: 'POST', url: '/deliveries' })).statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: '/api/known' })).statusCode, 200);
  });

  test('not built: 503 saying how to build it', async () => {
    const bare = Fastify();
    const consolePage = await registerWebConsole(bare as unknown as App, loadConfig({}), path.join(dist, 'missing'));
    registerErrorHandling(bare, { consolePage });
    const res = await bare.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /npm run build:web/);
    await bare.close();
  });

  test('tile origins', () => {
    assert.equal(tileOrigin('https://tile.openstreetmap.org/{z}/{x}/{y}.png'), 'https://tile.openstreetmap.org');
    assert.equal(tileOrigin('http://localhost:8080/{z}/{x}/{y}.png'), 'http://localhost:8080');
    assert.throws(() => loadConfig({ MAP_TILE_URL: 'javascript:alert(1)' }), /MAP_TILE_URL/);
  });
});

describe('development first run', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  test('only in development, with no bootstrap admin configured', () => {
    assert.deepEqual(loadConfig({ NODE_ENV: 'development' }).auth.firstRunAdmin, {
      email: 'admin@localhost',
      phone: '+254700000000',
    });
    assert.deepEqual(loadConfig({ NODE_ENV: 'development', ADMIN_PHONE: '+254711999999' }).auth.firstRunAdmin, {
      email: 'admin@localhost',
      phone: '+254711999999',
    });
    assert.equal(loadConfig({ NODE_ENV: 'test' }).auth.firstRunAdmin, undefined);
    assert.equal(
      loadConfig({
        NODE_ENV: 'development',
        ADMIN_EMAIL: 'a@b.co',
        ADMIN_PHONE: '+254711999999',
        ADMIN_PASSWORD: 'long enough pass',
      }).auth.firstRunAdmin,
      undefined,
    );
    assert.throws(() => loadConfig({ ADMIN_EMAIL: 'a@b.co' }), /must be set together/);
  });

  test('creates admin@localhost once, with a generated password that logs in; never again', async () => {
    const password = await t.services.admin.ensureFirstRunAdmin({ email: 'admin@localhost', phone: '+254700000000' });
    assert.ok(password && password.length >= 16);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { identifier: 'admin@localhost', password },
    });
    assert.equal(login.statusCode, 200);
    assert.equal(
      await t.services.admin.ensureFirstRunAdmin({ email: 'admin@localhost', phone: '+254700000000' }),
      undefined,
    );
    const admins = await t.db.selectFrom('users').select('email').where('role', '=', 'ADMIN').execute();
    assert.deepEqual(
      admins.map((a) => a.email),
      ['admin@localhost'],
    );
  });
});
