// Headers of issue 39: Permissions-Policy on the web pages (console, driver app, customer app, the
// tracking page) and Strict-Transport-Security on every answer to a request that came over https,
// as seen through TRUST_PROXY (a client that is not a trusted proxy cannot claim https).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../src/config.js';
import type { App } from '../src/http/context.js';
import { registerErrorHandling } from '../src/http/errors.js';
import { registerWebConsole } from '../src/http/web-console.js';
import { buildTestApp, type TestApp } from './helpers/app.js';

const PERMISSIONS_POLICY =
  'geolocation=(self), camera=(self), screen-wake-lock=(self), microphone=(), payment=(), usb=()';
const HSTS = 'max-age=31536000; includeSubDomains';

describe('Permissions-Policy on the web pages', () => {
  const dist = mkdtempSync(path.join(tmpdir(), 'rd-web-'));
  const app = Fastify();
  before(async () => {
    for (const dir of ['', 'assets', 'driver', 'app']) mkdirSync(path.join(dist, dir), { recursive: true });
    for (const dir of ['', 'driver', 'app'])
      writeFileSync(path.join(dist, dir, 'index.html'), `<title>${dir || 'console'}</title>`);
    writeFileSync(path.join(dist, 'driver', 'sw.js'), 'self.addEventListener("fetch", () => {})');
    const consolePage = await registerWebConsole(app as unknown as App, loadConfig({}), dist);
    registerErrorHandling(app, { consolePage });
  });
  after(async () => {
    await app.close();
    rmSync(dist, { recursive: true, force: true });
  });

  test('the console, the tracking page, the driver and customer apps and their files', async () => {
    for (const url of [
      '/',
      '/deliveries',
      '/t/some-token',
      '/driver/',
      '/driver/jobs',
      '/app/',
      '/app/book',
      '/driver/sw.js',
    ]) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['permissions-policy'], PERMISSIONS_POLICY, url);
    }
  });
});

describe('Strict-Transport-Security', () => {
  let plain: TestApp;
  let proxied: TestApp;
  before(async () => {
    plain = await buildTestApp();
    proxied = await buildTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
  });
  after(async () => {
    await plain.close();
    await proxied.close();
  });

  const https = { 'x-forwarded-proto': 'https' };

  test('over plain http: none', async () => {
    for (const url of ['/api/countries', '/health', '/']) {
      assert.equal(
        (await proxied.app.inject({ method: 'GET', url })).headers['strict-transport-security'],
        undefined,
        url,
      );
    }
  });

  test('https as a trusted proxy says: on every answer, errors and web pages included', async () => {
    for (const url of ['/api/countries', '/health', '/api/nope', '/api/auth/me', '/']) {
      const res = await proxied.app.inject({ method: 'GET', url, headers: https });
      assert.equal(res.headers['strict-transport-security'], HSTS, `${url} ${res.statusCode}`);
    }
  });

  test('X-Forwarded-Proto from a client that is not a trusted proxy: none', async () => {
    const untrusted = await proxied.app.inject({
      method: 'GET',
      url: '/api/countries',
      headers: https,
      remoteAddress: '203.0.113.7',
    });
    assert.equal(untrusted.statusCode, 200);
    assert.equal(untrusted.headers['strict-transport-security'], undefined);
    // TRUST_PROXY=false (the default) trusts nobody.
    const noProxy = await plain.app.inject({ method: 'GET', url: '/api/countries', headers: https });
    assert.equal(noProxy.headers['strict-transport-security'], undefined);
  });
});
