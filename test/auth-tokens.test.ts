import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT, UnsecuredJWT } from 'jose';
import { buildTestApp, TEST_JWT_SECRET, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

describe('access token verification', () => {
  let t: TestApp;
  let user: TestUser;
  const key = new TextEncoder().encode(TEST_JWT_SECRET);

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t, { role: 'BUSINESS' });
  });
  after(async () => t.close());

  const me = (token: string) =>
    t.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
  const invalid = { statusCode: 401, message: 'Invalid access token', error: 'Unauthorized', code: 'INVALID_TOKEN' };

  function claims(overrides: { iss?: string; aud?: string; exp?: number } = {}) {
    const now = Math.floor(t.clock.now().getTime() / 1000);
    return new SignJWT({ role: user.role, sid: user.sessionId })
      .setSubject(user.id)
      .setJti('11111111-1111-4111-8111-111111111111')
      .setIssuedAt(now)
      .setExpirationTime(overrides.exp ?? now + 600)
      .setIssuer(overrides.iss ?? t.deps.config.auth.jwtIssuer)
      .setAudience(overrides.aud ?? t.deps.config.auth.jwtAudience);
  }

  test('a token made like ours is accepted (the forgeries below differ only in what they test)', async () => {
    const token = await claims().setProtectedHeader({ alg: 'HS256' }).sign(key);
    assert.equal((await me(token)).statusCode, 200);
    assert.equal((await me(user.token)).statusCode, 200);
  });

  test('alg none is refused', async () => {
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const token = new UnsecuredJWT({ role: user.role, sid: user.sessionId, jti: 'x' })
      .setSubject(user.id)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setIssuer(t.deps.config.auth.jwtIssuer)
      .setAudience(t.deps.config.auth.jwtAudience)
      .encode();
    assert.deepEqual((await me(token)).json(), invalid);
    // The same with a signature part that looks real.
    const [header, payload] = token.split('.');
    assert.deepEqual((await me(`${header}.${payload}.${'A'.repeat(43)}`)).json(), invalid);
  });

  test('another algorithm with the same key (HS512) is refused', async () => {
    const token = await claims().setProtectedHeader({ alg: 'HS512' }).sign(key);
    assert.deepEqual((await me(token)).json(), invalid);
  });

  test('a wrong audience or issuer is refused', async () => {
    const aud = await claims({ aud: 'another-api' }).setProtectedHeader({ alg: 'HS256' }).sign(key);
    assert.deepEqual((await me(aud)).json(), invalid);
    const iss = await claims({ iss: 'someone-else' }).setProtectedHeader({ alg: 'HS256' }).sign(key);
    assert.deepEqual((await me(iss)).json(), invalid);
  });

  test('a tampered payload or signature, or another key, is refused', async () => {
    const [header, payload, signature] = user.token.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...decoded, role: 'ADMIN' })).toString('base64url');
    assert.deepEqual((await me(`${header}.${forged}.${signature}`)).json(), invalid);
    const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
    assert.deepEqual((await me(`${header}.${payload}.${flipped}`)).json(), invalid);
    const otherKey = await claims()
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('x'.repeat(48)));
    assert.deepEqual((await me(otherKey)).json(), invalid);
  });

  test('an expired token is refused', async () => {
    const fresh = (await t.tokens.signAccess({ userId: user.id, role: user.role, sessionId: user.sessionId })).token;
    assert.equal((await me(fresh)).statusCode, 200);
    t.clock.advance(15 * 60_000 + 1000);
    assert.deepEqual((await me(fresh)).json(), {
      statusCode: 401,
      message: 'Access token has expired',
      error: 'Unauthorized',
      code: 'TOKEN_EXPIRED',
    });
  });

  test('a role that may not act gets 403', async () => {
    const customer = await createUser(t, { role: 'CUSTOMER' });
    const res = await t.app.inject({ method: 'GET', url: '/api/admin/users', headers: customer.headers });
    assert.deepEqual(res.json(), {
      statusCode: 403,
      message: 'This action requires role ADMIN',
      error: 'Forbidden',
      code: 'WRONG_ROLE',
    });
  });
});
