// Cache-Control: no-store on every answer to a request that carried credentials (contract section 19,
// as amended by issue 39): package JSON, lists, CSV, proof images, errors, the metrics; public answers
// (countries, the tracking link, the web pages) keep theirs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { testRedisUrl } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post } from './packages-helpers.js';
import { multipart, png } from './proof-helpers.js';

const METRICS_TOKEN = 'metrics-token-0123456789-cache';

describe('Cache-Control: no-store on authenticated answers', () => {
  let t: TestApp;
  let business: TestUser;
  let otherBusiness: TestUser;
  let driver: TestUser;
  let admin: TestUser;
  let packageId: string;
  let trackingToken: string;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'off', METRICS_TOKEN }, redis: Boolean(testRedisUrl) });
    business = await createUser(t, { role: 'BUSINESS' });
    otherBusiness = await createUser(t, { role: 'BUSINESS' });
    admin = await createUser(t, { role: 'ADMIN' });
    driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const created = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
    assert.equal(created.statusCode, 201, created.body);
    packageId = created.json().id;
    trackingToken = created.json().trackingUrl.split('/t/')[1];
    assert.equal(
      (await post(t, `/api/packages/${packageId}/assign`, admin.headers, { driverId: driver.id })).statusCode,
      200,
    );
    assert.equal((await post(t, `/api/packages/${packageId}/pickup`, driver.headers)).statusCode, 200);
    const form = multipart([
      { name: 'signature', value: await png(), filename: 'signature.png', contentType: 'image/png' },
    ]);
    const proof = await t.app.inject({
      method: 'POST',
      url: `/api/packages/${packageId}/proof`,
      headers: { ...driver.headers, ...form.headers },
      payload: form.payload,
    });
    assert.equal(proof.statusCode, 200, proof.body);
  });
  after(async () => t.close());

  test('JSON, lists, CSV, proof images, a 404 and the upload itself answer no-store', async () => {
    const answers = {
      me: await get(t, '/api/auth/me', business.headers),
      package: await get(t, `/api/packages/${packageId}`, business.headers),
      list: await get(t, '/api/packages', business.headers),
      invoices: await get(t, '/api/businesses/me/invoices', business.headers),
      csv: await get(
        t,
        `/api/businesses/me/statement?from=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}&format=csv`,
        business.headers,
      ),
      signature: await get(t, `/api/packages/${packageId}/proof/signature`, business.headers),
      someoneElses: await get(t, `/api/packages/${packageId}`, otherBusiness.headers),
      wrongRole: await get(t, '/api/admin/users', business.headers),
      pickup: await post(t, `/api/packages/${packageId}/start`, driver.headers),
    };
    assert.equal(answers.csv.headers['content-type'], 'text/csv; charset=utf-8', answers.csv.body);
    assert.equal(answers.signature.headers['content-type'], 'image/png');
    assert.equal(answers.someoneElses.statusCode, 404);
    assert.equal(answers.wrongRole.statusCode, 403);
    for (const [name, res] of Object.entries(answers)) {
      assert.ok(res.statusCode < 500, `${name}: ${res.statusCode} ${res.body}`);
      assert.equal(res.headers['cache-control'], 'no-store', name);
    }
  });

  test('the metrics, read with the metrics token, answer no-store', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('a rejected token gets no-store too (credentials were sent)', async () => {
    const res = await get(t, '/api/auth/me', { authorization: 'Bearer not-a-token' });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('public answers keep their caching: countries, the tracking link, health', async () => {
    for (const url of ['/api/countries', `/api/tracking/${trackingToken}`, '/health']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.equal(res.headers['cache-control'], undefined, url);
    }
  });
});
