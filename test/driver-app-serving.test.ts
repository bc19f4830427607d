// Serving the driver app at /driver/ (src/http/web-console.ts, contract section 19) without a browser:
// its page for every path under /driver/, the service worker and the manifest revalidated every
// time, the console's paths untouched. test/driver-app.test.ts drives the app itself.
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

describe('serving the driver app', () => {
  const dist = mkdtempSync(path.join(tmpdir(), 'rd-web-driver-'));
  const app = Fastify();
  before(async () => {
    mkdirSync(path.join(dist, 'assets'));
    mkdirSync(path.join(dist, 'driver'));
    writeFileSync(path.join(dist, 'index.html'), '<title>Delivery console</title>');
    writeFileSync(path.join(dist, 'driver/index.html'), '<title>Driver</title><link rel="manifest" href="/driver/manifest.webmanifest">');
    writeFileSync(path.join(dist, 'driver/sw.js'), 'self.addEventListener("fetch", () => {});');
    writeFileSync(path.join(dist, 'driver/manifest.webmanifest'), '{"name":"Driver","start_url":"/driver/","scope":"/driver/","display":"standalone"}');
    const consolePage = await registerWebConsole(app as unknown as App, loadConfig({}), dist);
    registerErrorHandling(app, { consolePage });
  });
  after(async () => {
    await app.close();
    rmSync(dist, { recursive: true, force: true });
  });

  test('every path under /driver/ gets the driver page with the console headers; /driver redirects into the scope', async () => {
    for (const url of ['/driver/', '/driver/jobs/123', '/driver/?from=homescreen']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(res.body, /<title>Driver<\/title>/, url);
      assert.equal(res.headers['cache-control'], 'no-cache');
      const csp = res.headers['content-security-policy'] as string;
      assert.match(csp, /connect-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    }
    const bare = await app.inject({ method: 'GET', url: '/driver' });
    assert.equal(bare.statusCode, 308);
    assert.equal(bare.headers.location, '/driver/');
    const withQuery = await app.inject({ method: 'GET', url: '/driver?x=1' });
    assert.equal(withQuery.headers.location, '/driver/?x=1');
  });

  test('the service worker and the manifest are revalidated every time, with their types', async () => {
    const sw = await app.inject({ method: 'GET', url: '/driver/sw.js' });
    assert.equal(sw.statusCode, 200);
    assert.match(sw.headers['content-type'] as string, /javascript/);
    assert.equal(sw.headers['cache-control'], 'no-cache');
    assert.match(sw.headers['content-security-policy'] as string, /script-src 'self'/);
    const manifest = await app.inject({ method: 'GET', url: '/driver/manifest.webmanifest' });
    assert.equal(manifest.statusCode, 200);
    assert.match(manifest.headers['content-type'] as string, /application\/manifest\+json/);
    assert.equal(manifest.headers['cache-control'], 'no-cache');
    assert.equal(manifest.json().scope, '/driver/');
  });

  test("the console's paths (/drivers included) keep the console's page; /api keeps its 404", async () => {
    for (const url of ['/', '/drivers', '/driverless', '/deliveries/1']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(res.body, /Delivery console/, url);
    }
    const api = await app.inject({ method: 'GET', url: '/api/driver/' });
    assert.equal(api.statusCode, 404);
    assert.equal(api.json().code, 'ROUTE_NOT_FOUND');
  });
});
