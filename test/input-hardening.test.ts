// Bad input that passes a schema but not the database must be a 400, never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { packageBody, post } from './packages-helpers.js';

describe('input hardening', () => {
  let t: TestApp;
  let business: TestUser;
  before(async () => {
    t = await buildTestApp();
    business = await createUser(t, { role: 'BUSINESS' });
  });
  after(async () => t.close());

  const json = { 'content-type': 'application/json' };

  test('a NUL character in a string is a 400, before and after login', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: json,
      payload: '{"identifier":"a\\u0000b@example.com","password":"whatever-long"}',
    });
    assert.ok([400, 401].includes(login.statusCode), `got ${login.statusCode}`);
    const forgot = await t.app.inject({
      method: 'POST',
      url: '/api/auth/password/forgot',
      headers: json,
      payload: '{"identifier":"a\\u0000"}',
    });
    assert.ok(forgot.statusCode < 500, `got ${forgot.statusCode}`);
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: { ...json, ...business.headers },
      payload: '{"url":"https://example.com/hook","description":"bad\\u0000text"}',
    });
    assert.equal(hook.statusCode, 400);
    assert.equal(hook.json().error, 'Bad Request');
  });

  test('a urn:uuid: id is a 400, in a path and in a body', async () => {
    const path = await t.app.inject({
      method: 'GET',
      url: '/api/packages/urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      headers: business.headers,
    });
    assert.equal(path.statusCode, 400);
    assert.equal(path.json().code, 'VALIDATION_FAILED');
    const body = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login/send-otp',
      headers: json,
      payload: { sessionId: 'urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', phone: '+254712345678' },
    });
    assert.equal(body.statusCode, 400);
  });

  test('an upper-case id names the same package, and the package keeps its own id', async () => {
    const created = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
    assert.equal(created.statusCode, 201);
    const id: string = created.json().id;
    assert.equal(
      (await t.app.inject({ method: 'GET', url: `/api/packages/${id}`, headers: business.headers })).json().status,
      'PENDING',
    );
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/packages/${id.toUpperCase()}`,
      headers: business.headers,
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, id);
    const cancelled = await post(t, `/api/packages/${id.toUpperCase()}/cancel`, business.headers, {});
    assert.equal(cancelled.statusCode, 200);
    // The poll by the canonical id sees the change at once (the read cache is keyed by the lower-case id).
    assert.equal(
      (await t.app.inject({ method: 'GET', url: `/api/packages/${id}`, headers: business.headers })).json().status,
      'CANCELLED',
    );
  });

  test('Content-Type: application/json with an empty body is no body: fine where none is needed, a clear 400 where one is', async () => {
    const created = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
    const id: string = created.json().id;
    // cancel takes an optional body (a reason); clients that always send the JSON content type work.
    const cancelled = await t.app.inject({
      method: 'POST',
      url: `/api/packages/${id}/cancel`,
      headers: { ...json, ...business.headers },
      payload: '',
    });
    assert.equal(cancelled.statusCode, 200);
    assert.equal(cancelled.json().status, 'CANCELLED');
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/packages',
      headers: { ...json, ...business.headers },
      payload: '',
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().code, 'VALIDATION_FAILED');
    assert.match(missing.json().message, /body/);
    // Whitespace is not empty: it is invalid JSON, as before.
    const blank = await t.app.inject({
      method: 'POST',
      url: '/api/packages',
      headers: { ...json, ...business.headers },
      payload: ' ',
    });
    assert.equal(blank.statusCode, 400);
  });

  test('a crafted cursor is a 400', async () => {
    for (const raw of [
      ['2024-01-01T00:00:00Z', '------------------------------------'],
      ['-010000-01-01T00:00:00Z', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ]) {
      const cursor = Buffer.from(JSON.stringify(raw)).toString('base64url');
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/packages?cursor=${cursor}`,
        headers: business.headers,
      });
      assert.deepEqual(res.json(), {
        statusCode: 400,
        message: 'Invalid cursor',
        error: 'Bad Request',
        code: 'INVALID_CURSOR',
      });
    }
  });

  test('a date-time before 1970 is refused by validation', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/location',
      headers: { ...json, ...driver.headers },
      payload: { lat: 1, lng: 1, recordedAt: '0000-01-01T00:00:00Z' },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, 'body.recordedAt must be a valid date-time');
  });
});
