// Serving the installed apps without a browser (src/http/web-console.ts): the driver app at /driver/
// (contract section 19) and the customer app at /app/ (section 20), each its page for every path
// under its folder, its service worker and manifest revalidated every time, the console's paths
// untouched. test/driver-app.test.ts and test/customer-app.test.ts drive the apps themselves.
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

const APPS = [
  { dir: 'driver', title: 'Driver', console: ['/drivers', '/driverless'] },
  { dir: 'app', title: 'Rides', console: ['/apps', '/application', '/approvals'] },
];

describe('serving the installed apps', () => {
  const dist = mkdtempSync(path.join(tmpdir(), 'rd-web-apps-'));
  const app = Fastify();
  before(async () => {
    mkdirSync(path.join(dist, 'assets'));
    writeFileSync(path.join(dist, 'index.html'), '<title>Delivery console</title>');
    for (const { dir, title } of APPS) {
      mkdirSync(path.join(dist, dir));
      writeFileSync(
        path.join(dist, `${dir}/index.html`),
        `<title>${title}</title><link rel="manifest" href="/${dir}/manifest.webmanifest">`,
      );
      writeFileSync(path.join(dist, `${dir}/sw.js`), 'self.addEventListener("fetch", () => {});');
      writeFileSync(
        path.join(dist, `${dir}/manifest.webmanifest`),
        `{"name":"${title}","start_url":"/${dir}/","scope":"/${dir}/","display":"standalone"}`,
      );
    }
    const consolePage = await registerWebConsole(app as unknown as App, loadConfig({}), dist);
    registerErrorHandling(app, { consolePage });
  });
  after(async () => {
    await app.close();
    rmSync(dist, { recursive: true, force: true });
  });

  for (const { dir, title } of APPS) {
    test(`every path under /${dir}/ gets the ${title} page with the console headers; /${dir} redirects into the scope`, async () => {
      for (const url of [`/${dir}/`, `/${dir}/jobs/123`, `/${dir}/?from=homescreen`]) {
        const res = await app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        assert.match(res.body, new RegExp(`<title>${title}</title>`), url);
        assert.equal(res.headers['cache-control'], 'no-cache');
        const csp = res.headers['content-security-policy'] as string;
        assert.match(csp, /connect-src 'self'/);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      }
      const bare = await app.inject({ method: 'GET', url: `/${dir}` });
      assert.equal(bare.statusCode, 308);
      assert.equal(bare.headers.location, `/${dir}/`);
      const withQuery = await app.inject({ method: 'GET', url: `/${dir}?x=1` });
      assert.equal(withQuery.headers.location, `/${dir}/?x=1`);
    });

    test(`/${dir}/: the service worker and the manifest are revalidated every time, with their types`, async () => {
      const sw = await app.inject({ method: 'GET', url: `/${dir}/sw.js` });
      assert.equal(sw.statusCode, 200);
      assert.match(sw.headers['content-type'] as string, /javascript/);
      assert.equal(sw.headers['cache-control'], 'no-cache');
      assert.match(sw.headers['content-security-policy'] as string, /script-src 'self'/);
      const manifest = await app.inject({ method: 'GET', url: `/${dir}/manifest.webmanifest` });
      assert.equal(manifest.statusCode, 200);
      assert.match(manifest.headers['content-type'] as string, /application\/manifest\+json/);
      assert.equal(manifest.headers['cache-control'], 'no-cache');
      assert.equal(manifest.json().scope, `/${dir}/`);
    });
  }

  test("the console's paths (/drivers, /apps included) keep the console's page; /api keeps its 404", async () => {
    for (const url of ['/', '/deliveries/1', ...APPS.flatMap((a) => a.console)]) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(res.body, /Delivery console/, url);
    }
    for (const url of ['/api/driver/', '/api/app/']) {
      const api = await app.inject({ method: 'GET', url });
      assert.equal(api.statusCode, 404);
      assert.equal(api.json().code, 'ROUTE_NOT_FOUND');
    }
  });
});
