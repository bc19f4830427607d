// Section 1: no text field of the API takes control characters; free-text fields take line breaks.
// Decided by validation (400 VALIDATION_FAILED) before any lookup, so nothing is revealed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { countryId, createUser, uniquePhone, type TestUser } from './helpers/factories.js';
import { packageBody, stop } from './packages-helpers.js';

describe('control characters', () => {
  let t: TestApp;
  let business: TestUser;
  let admin: TestUser;
  let ke: string;
  before(async () => {
    t = await buildTestApp();
    business = await createUser(t, { role: 'BUSINESS' });
    admin = await createUser(t, { role: 'ADMIN' });
    ke = await countryId(t);
  });
  after(async () => t.close());

  const send = (
    method: 'POST' | 'PATCH' | 'GET',
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ) => t.app.inject({ method, url: `/api${url}`, payload: payload as object, headers });

  const refused = (res: Awaited<ReturnType<typeof send>>, where: RegExp) => {
    assert.equal(res.statusCode, 400, res.body);
    const body = res.json() as { code: string; message: string };
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.match(body.message, where);
    assert.match(body.message, /must not contain control characters/);
  };

  test('each control character is refused in a one-line field (registration, before the code is looked at)', async () => {
    const base = {
      sessionId: '00000000-0000-4000-8000-000000000000',
      phone: uniquePhone(),
      code: '123456',
      email: 'probe@example.com',
      password: 'a-long-enough-password',
      lastName: 'Probe',
      role: 'CUSTOMER',
      countryId: ke,
    };
    for (const c of ['\u0000', '\u0001', '\u0007', '\t', '\n', '\r', '\u001b', '\u001f', '\u007f']) {
      refused(await send('POST', '/auth/register', { ...base, firstName: `Pro${c}be` }), /body\.firstName/);
    }
    // The same request without one is judged on its merits: the session id exists nowhere.
    const clean = await send('POST', '/auth/register', { ...base, firstName: 'Probe' });
    assert.equal(clean.statusCode, 401);
  });

  test('login, forgot password and the profile refuse them too', async () => {
    refused(
      await send('POST', '/auth/login', { identifier: 'a\u0000b', password: 'whatever-long' }),
      /body\.identifier/,
    );
    refused(await send('POST', '/auth/password/forgot', { identifier: `${business.email}\u0000` }), /body\.identifier/);
    refused(
      await send('PATCH', '/businesses/me', { businessName: 'Acme\u0008' }, business.headers),
      /body\.businessName/,
    );
  });

  test('nested fields of a package: contacts refuse them, notes and the parcel description take line breaks only', async () => {
    const bad = packageBody(ke, { pickup: stop(-1.28, 36.82, { contactName: 'Ann\u0000' }) });
    refused(await send('POST', '/packages', bad, business.headers), /body\.pickup\.contactName/);
    const badNotes = packageBody(ke, { dropoff: stop(-1.29, 36.83, { notes: 'gate\u0000code' }) });
    refused(await send('POST', '/packages', badNotes, business.headers), /body\.dropoff\.notes/);
    const ok = packageBody(ke, { dropoff: stop(-1.29, 36.83, { notes: 'Blue gate.\r\nRing twice,\tthen wait.' }) });
    const created = await send('POST', '/packages', ok, business.headers);
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(
      (created.json() as { dropoff: { notes: string } }).dropoff.notes,
      'Blue gate.\r\nRing twice,\tthen wait.',
    );
  });

  test('webhook descriptions, admin reasons and query strings', async () => {
    refused(
      await send(
        'POST',
        '/webhooks',
        { url: 'https://example.com/hook', description: 'bad\u001btext' },
        business.headers,
      ),
      /body\.description/,
    );
    const user = await createUser(t, { role: 'DRIVER', status: 'PENDING_APPROVAL' });
    refused(
      await send('POST', `/admin/users/${user.id}/reject`, { reason: 'no\u0000' }, admin.headers),
      /body\.reason/,
    );
    refused(
      await send('GET', '/admin/users?role=DRIVER&cursor=%00abc', undefined, admin.headers),
      /querystring\.cursor/,
    );
  });
});
