import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countryId, createUser, TEST_PASSWORD, uniquePhone, type TestUser } from './helpers/factories.js';
import { buildSmsTestApp, wrongCode, type SmsTestApp } from './auth-support.js';
import { buildTestApp } from './helpers/app.js';

const NEW_PASSWORD = 'a-much-better-passphrase';

describe('accounts and authentication', () => {
  let t: SmsTestApp;
  let admin: TestUser;
  let kenya: string;

  before(async () => {
    t = await buildSmsTestApp();
    admin = await createUser(t, { role: 'ADMIN' });
    kenya = await countryId(t);
  });
  after(async () => t.close());

  const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/api${url}`, payload, headers });
  const me = (token: string) =>
    t.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });

  async function startLogin(identifier: string, password = TEST_PASSWORD, rememberMe?: boolean) {
    const res = await post('/auth/login', {
      identifier,
      password,
      ...(rememberMe === undefined ? {} : { rememberMe }),
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { success: boolean; sessionId: string; phone: string; message: string };
  }
  async function login(identifier: string, password = TEST_PASSWORD, rememberMe?: boolean) {
    const s = await startLogin(identifier, password, rememberMe);
    const res = await post('/auth/login/verify-otp', {
      sessionId: s.sessionId,
      phone: s.phone,
      code: t.lastCode(s.phone),
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { accessToken: string; refreshToken: string; user: Record<string, unknown> };
  }
  async function registerCode(phone: string) {
    const res = await post('/auth/register/send-otp', { phone });
    assert.equal(res.statusCode, 200, res.body);
    return { sessionId: res.json().sessionId as string, code: t.lastCode(phone) };
  }
  const email = () => `u-${Math.random().toString(36).slice(2, 10)}@example.com`;

  test('the integrator flow: register a business, an admin approves it, login, code, bearer', async () => {
    const phone = uniquePhone();
    const sent = await post('/auth/register/send-otp', { phone });
    assert.equal(sent.statusCode, 200);
    assert.deepEqual(Object.keys(sent.json()).sort(), ['message', 'phone', 'sessionId', 'success']);
    assert.equal(sent.json().phone, phone);
    const address = `Acme-${Math.random().toString(36).slice(2, 8)}@Example.com`;
    const reg = await post('/auth/register', {
      sessionId: sent.json().sessionId,
      phone,
      code: t.lastCode(phone),
      email: address,
      password: 'shipping-things-daily',
      firstName: 'Ada',
      lastName: 'Okafor',
      role: 'BUSINESS',
      countryId: kenya,
      businessName: 'Acme Deliveries',
      businessAddress: '1 Moi Avenue, Nairobi',
    });
    assert.equal(reg.statusCode, 201, reg.body);
    const body = reg.json();
    assert.equal(body.success, true);
    assert.equal(body.accessToken, undefined);
    assert.equal(body.refreshToken, undefined);
    assert.deepEqual(Object.keys(body.user).sort(), [
      'countryId',
      'createdAt',
      'email',
      'firstName',
      'id',
      'isEmailVerified',
      'isPhoneVerified',
      'lastName',
      'locale',
      'phone',
      'role',
      'status',
    ]);
    assert.equal(body.user.role, 'BUSINESS');
    assert.equal(body.user.status, 'PENDING_APPROVAL');
    assert.equal(body.user.isPhoneVerified, true);
    const profile = await t.db
      .selectFrom('business_profiles')
      .selectAll()
      .where('user_id', '=', body.user.id)
      .executeTakeFirstOrThrow();
    assert.equal(profile.business_name, 'Acme Deliveries');

    // Not usable before approval: the right password gets 403 naming the state.
    const early = await post('/auth/login', { identifier: address, password: 'shipping-things-daily' });
    assert.equal(early.statusCode, 403);
    assert.deepEqual(early.json(), {
      statusCode: 403,
      message: 'Account is pending approval',
      error: 'Forbidden',
      code: 'ACCOUNT_PENDING_APPROVAL',
    });

    const approved = await post(`/admin/users/${body.user.id}/approve`, {}, admin.headers);
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().status, 'ACTIVE');
    assert.match(t.messages().at(-1)!.text, /approved/);

    // E-mail is matched case-insensitively.
    const session = await startLogin(address.toLowerCase(), 'shipping-things-daily');
    assert.equal(session.success, true);
    assert.equal(session.phone, phone);
    assert.match(session.sessionId, /^[0-9a-f-]{36}$/);
    const code = t.lastCode(phone);
    assert.match(code, /^\d{6}$/);
    const verified = await post('/auth/login/verify-otp', { sessionId: session.sessionId, phone, code });
    assert.equal(verified.statusCode, 200, verified.body);
    const tokens = verified.json();
    assert.equal(tokens.success, true);
    assert.match(tokens.refreshToken, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(tokens.user.id, body.user.id);
    assert.equal(tokens.user.role, 'BUSINESS');

    const who = await me(tokens.accessToken);
    assert.equal(who.statusCode, 200);
    assert.equal(who.json().id, body.user.id);
    assert.equal(who.json().status, 'ACTIVE');

    // Codes and refresh tokens are stored only as hashes.
    const stored = await t.db
      .selectFrom('otp_sessions')
      .selectAll()
      .where('id', '=', session.sessionId)
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.code_hash, code);
    assert.ok(!stored.code_hash.includes(code));
    const authSession = await t.db
      .selectFrom('auth_sessions')
      .selectAll()
      .where('user_id', '=', body.user.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(authSession.refresh_token_hash, tokens.refreshToken);
    const user = await t.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', body.user.id)
      .executeTakeFirstOrThrow();
    assert.match(user.password_hash, /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
  });

  test('a customer is active at once and gets tokens; a driver gets its profile', async () => {
    const phone = uniquePhone();
    const { sessionId, code } = await registerCode(phone);
    const res = await post('/auth/register', {
      sessionId,
      phone,
      code,
      email: email(),
      password: 'riding-around-town',
      firstName: 'C',
      lastName: 'D',
      role: 'CUSTOMER',
      countryId: kenya,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().user.status, 'ACTIVE');
    assert.equal((await me(res.json().accessToken)).statusCode, 200);
    const refreshed = await post('/auth/refresh', { refreshToken: res.json().refreshToken });
    assert.equal(refreshed.statusCode, 200);

    const company = await createUser(t, { role: 'COMPANY' });
    const dphone = uniquePhone();
    const d = await registerCode(dphone);
    const driver = await post('/auth/register', {
      sessionId: d.sessionId,
      phone: dphone,
      code: d.code,
      email: email(),
      password: 'driving-all-night',
      firstName: 'E',
      lastName: 'F',
      role: 'DRIVER',
      countryId: kenya,
      vehicleType: 'BIKE',
      vehiclePlate: 'KMEA 123A',
      companyId: company.id,
      serviceTypes: ['PACKAGE_DELIVERY'],
    });
    assert.equal(driver.statusCode, 201, driver.body);
    assert.equal(driver.json().user.status, 'PENDING_APPROVAL');
    const profile = await t.db
      .selectFrom('driver_profiles')
      .selectAll()
      .where('user_id', '=', driver.json().user.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(profile.service_types, ['PACKAGE_DELIVERY']);
    assert.equal(profile.company_id, company.id);

    const cphone = uniquePhone();
    const c = await registerCode(cphone);
    const comp = await post('/auth/register', {
      sessionId: c.sessionId,
      phone: cphone,
      code: c.code,
      email: email(),
      password: 'fleet-of-vans-99',
      firstName: 'G',
      lastName: 'H',
      role: 'COMPANY',
      countryId: kenya,
      companyName: 'Fleet Ltd',
    });
    assert.equal(comp.statusCode, 201, comp.body);
    assert.equal(comp.json().user.status, 'PENDING_APPROVAL');
  });

  test('registration errors: 400, 401, 404, 409', async () => {
    const taken = await createUser(t);
    const dup = await post('/auth/register/send-otp', { phone: taken.phone });
    assert.deepEqual(dup.json(), {
      statusCode: 409,
      message: 'Phone number is already registered',
      error: 'Conflict',
      code: 'PHONE_TAKEN',
    });
    const badPhone = await post('/auth/register/send-otp', { phone: '0712345678' });
    assert.equal(badPhone.statusCode, 400);
    assert.equal(badPhone.json().code, 'INVALID_PHONE');
    assert.equal((await post('/auth/register/send-otp', { phone: '+15555550100' })).statusCode, 400);
    const extra = await post('/auth/register/send-otp', { phone: uniquePhone(), role: 'ADMIN' });
    assert.deepEqual(extra.json(), {
      statusCode: 400,
      message: 'body has an unknown property "role"',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });

    const phone = uniquePhone();
    const { sessionId, code } = await registerCode(phone);
    const base = {
      sessionId,
      phone,
      code,
      email: email(),
      password: 'a-fine-password',
      firstName: 'A',
      lastName: 'B',
      role: 'CUSTOMER',
      countryId: kenya,
    };

    const asAdmin = await post('/auth/register', { ...base, role: 'ADMIN' });
    assert.deepEqual(asAdmin.json(), {
      statusCode: 400,
      message: 'body.role must be one of CUSTOMER, DRIVER, BUSINESS, COMPANY',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });
    const withStatus = await post('/auth/register', { ...base, status: 'ACTIVE' });
    assert.equal(withStatus.statusCode, 400);
    const short = await post('/auth/register', { ...base, password: 'short' });
    assert.equal(short.statusCode, 400);
    const common = await post('/auth/register', { ...base, password: 'Password123' });
    assert.deepEqual(common.json(), {
      statusCode: 400,
      message: 'body.password is too common; choose another',
      error: 'Bad Request',
      code: 'PASSWORD_TOO_COMMON',
    });
    const noName = await post('/auth/register', { ...base, role: 'BUSINESS' });
    assert.deepEqual(noName.json(), {
      statusCode: 400,
      message: 'body.businessName is required for role BUSINESS',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });
    const notAllowed = await post('/auth/register', { ...base, vehicleType: 'CAR' });
    assert.deepEqual(notAllowed.json(), {
      statusCode: 400,
      message: 'body.vehicleType is not allowed for role CUSTOMER',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });
    const badEmail = await post('/auth/register', { ...base, email: 'not-an-email' });
    assert.equal(badEmail.statusCode, 400);

    const wrong = await post('/auth/register', { ...base, code: wrongCode(code) });
    assert.deepEqual(wrong.json(), {
      statusCode: 401,
      message: 'Invalid code',
      error: 'Unauthorized',
      code: 'INVALID_OTP',
    });
    const otherPhone = await post('/auth/register', { ...base, phone: uniquePhone() });
    assert.equal(otherPhone.statusCode, 401);

    const noCountry = await post('/auth/register', { ...base, countryId: '00000000-0000-4000-8000-000000000000' });
    assert.deepEqual(noCountry.json(), {
      statusCode: 404,
      message: 'Country not found',
      error: 'Not Found',
      code: 'COUNTRY_NOT_FOUND',
    });
    const noCompany = await post('/auth/register', {
      ...base,
      role: 'DRIVER',
      vehicleType: 'CAR',
      vehiclePlate: 'KAA 1',
      companyId: '00000000-0000-4000-8000-000000000000',
    });
    assert.equal(noCompany.json().code, 'COMPANY_NOT_FOUND');
    const emailTaken = await post('/auth/register', { ...base, email: taken.email.toUpperCase() });
    assert.deepEqual(emailTaken.json(), {
      statusCode: 409,
      message: 'E-mail is already registered',
      error: 'Conflict',
      code: 'EMAIL_TAKEN',
    });

    // The failures above did not use up the code.
    const ok = await post('/auth/register', base);
    assert.equal(ok.statusCode, 201, ok.body);
    const again = await post('/auth/register', { ...base, email: email() });
    assert.equal(again.statusCode, 401);
    assert.equal(again.json().code, 'OTP_SESSION_INVALID');
  });

  test('login errors: unknown identifier and wrong password give the same 401; states give 403', async () => {
    const user = await createUser(t);
    const unknown = await post('/auth/login', { identifier: 'nobody@example.com', password: TEST_PASSWORD });
    const wrong = await post('/auth/login', { identifier: user.email, password: 'not-the-password' });
    const expected = {
      statusCode: 401,
      message: 'Invalid credentials',
      error: 'Unauthorized',
      code: 'INVALID_CREDENTIALS',
    };
    assert.deepEqual(unknown.json(), expected);
    assert.deepEqual(wrong.json(), expected);
    assert.equal(unknown.body, wrong.body);

    const byPhone = await startLogin(user.phone);
    assert.equal(byPhone.phone, user.phone);

    assert.equal((await post('/auth/login', { identifier: user.email })).statusCode, 400);
    assert.equal(
      (await post('/auth/login', { identifier: user.email, password: TEST_PASSWORD, role: 'ADMIN' })).statusCode,
      400,
    );
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: '{"identifier":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notJson.statusCode, 400);

    for (const [status, message] of [
      ['REJECTED', 'Account has been rejected'],
      ['SUSPENDED', 'Account is suspended'],
    ] as const) {
      const u = await createUser(t, { status, role: 'BUSINESS' });
      const res = await post('/auth/login', { identifier: u.email, password: TEST_PASSWORD });
      assert.deepEqual(res.json(), { statusCode: 403, message, error: 'Forbidden', code: `ACCOUNT_${status}` });
      const bad = await post('/auth/login', { identifier: u.email, password: 'wrong-password-x' });
      assert.equal(bad.statusCode, 401);
    }
  });

  test('an unknown identifier takes about as long as a wrong password', async () => {
    const user = await createUser(t);
    const time = async (identifier: string) => {
      const started = performance.now();
      await post('/auth/login', { identifier, password: 'not-the-password' });
      return performance.now() - started;
    };
    await time('warm-up@example.com');
    const unknown: number[] = [];
    const known: number[] = [];
    for (let i = 0; i < 3; i++) {
      unknown.push(await time(`nobody-${i}@example.com`));
      known.push(await time(user.email));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[1];
    // Both run one argon2id verification; without the dummy hash the unknown case would be ~100x faster.
    assert.ok(median(unknown) > median(known) / 3, `unknown ${median(unknown)} ms vs known ${median(known)} ms`);
  });

  test('five wrong codes kill the login session, even for the right code', async () => {
    const user = await createUser(t);
    const s = await startLogin(user.email);
    const code = t.lastCode(user.phone);
    for (let i = 1; i <= 4; i++) {
      const res = await post('/auth/login/verify-otp', {
        sessionId: s.sessionId,
        phone: s.phone,
        code: wrongCode(code),
      });
      assert.deepEqual(res.json(), {
        statusCode: 401,
        message: 'Invalid code',
        error: 'Unauthorized',
        code: 'INVALID_OTP',
      });
    }
    const fifth = await post('/auth/login/verify-otp', {
      sessionId: s.sessionId,
      phone: s.phone,
      code: wrongCode(code),
    });
    assert.deepEqual(fifth.json(), {
      statusCode: 401,
      message: 'Too many wrong codes; start again',
      error: 'Unauthorized',
      code: 'OTP_ATTEMPTS_EXCEEDED',
    });
    const right = await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code });
    assert.equal(right.statusCode, 401);
    assert.equal(right.json().code, 'OTP_ATTEMPTS_EXCEEDED');
    const resend = await post('/auth/login/send-otp', { sessionId: s.sessionId, phone: s.phone });
    assert.equal(resend.statusCode, 401);
  });

  test('a resend voids the old code, never resets the wrong-code count, and is limited', async () => {
    const user = await createUser(t);
    const s = await startLogin(user.email);
    const first = t.lastCode(user.phone);
    for (let i = 0; i < 4; i++) {
      await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code: wrongCode(first) });
    }
    const resent = await post('/auth/login/send-otp', { sessionId: s.sessionId, phone: s.phone });
    assert.equal(resent.statusCode, 200, resent.body);
    assert.deepEqual(resent.json(), { success: true, message: 'A new verification code was sent to your phone' });
    const second = t.lastCode(user.phone);
    // One more wrong code is the fifth: the session dies even though a new code was sent.
    const old = second === first ? wrongCode(second) : first;
    const res = await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code: old });
    assert.equal(res.json().code, 'OTP_ATTEMPTS_EXCEEDED');
    assert.equal(
      (await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code: second })).statusCode,
      401,
    );

    const s2 = await startLogin(user.email);
    const before = t.lastCode(user.phone);
    for (let i = 0; i < 3; i++) {
      assert.equal((await post('/auth/login/send-otp', { sessionId: s2.sessionId, phone: s2.phone })).statusCode, 200);
    }
    const fourth = await post('/auth/login/send-otp', { sessionId: s2.sessionId, phone: s2.phone });
    assert.equal(fourth.statusCode, 429);
    assert.equal(fourth.json().code, 'OTP_RESEND_LIMIT');
    assert.ok(Number(fourth.headers['retry-after']) > 0);
    const latest = t.lastCode(user.phone);
    if (latest !== before) {
      const stale = await post('/auth/login/verify-otp', { sessionId: s2.sessionId, phone: s2.phone, code: before });
      assert.deepEqual(stale.json(), {
        statusCode: 401,
        message: 'Invalid code',
        error: 'Unauthorized',
        code: 'INVALID_OTP',
      });
    }
    const ok = await post('/auth/login/verify-otp', { sessionId: s2.sessionId, phone: s2.phone, code: latest });
    assert.equal(ok.statusCode, 200, ok.body);
    const used = await post('/auth/login/verify-otp', { sessionId: s2.sessionId, phone: s2.phone, code: latest });
    assert.deepEqual(used.json(), {
      statusCode: 401,
      message: 'Verification session is invalid or has expired; start again',
      error: 'Unauthorized',
      code: 'OTP_SESSION_INVALID',
    });
  });

  test('a code is single use even when two requests race with it', async () => {
    const user = await createUser(t);
    const s = await startLogin(user.email);
    const payload = { sessionId: s.sessionId, phone: s.phone, code: t.lastCode(user.phone) };
    const results = await Promise.all([
      post('/auth/login/verify-otp', payload),
      post('/auth/login/verify-otp', payload),
      post('/auth/login/verify-otp', payload),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401, 401]);
  });

  test('expired code, expired session, mismatched phone and unknown session are 401', async () => {
    const user = await createUser(t);
    const s = await startLogin(user.email);
    const code = t.lastCode(user.phone);
    const mismatch = await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: uniquePhone(), code });
    assert.equal(mismatch.json().code, 'OTP_SESSION_INVALID');
    const unknown = await post('/auth/login/verify-otp', {
      sessionId: '00000000-0000-4000-8000-000000000000',
      phone: s.phone,
      code,
    });
    assert.equal(unknown.statusCode, 401);
    const malformed = await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code: '12ab56' });
    assert.equal(malformed.statusCode, 400);

    t.clock.advance(5 * 60_000 + 1000);
    const expired = await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code });
    assert.deepEqual(expired.json(), {
      statusCode: 401,
      message: 'Code has expired; request a new one',
      error: 'Unauthorized',
      code: 'OTP_EXPIRED',
    });
    assert.equal((await post('/auth/login/send-otp', { sessionId: s.sessionId, phone: s.phone })).statusCode, 200);
    const fresh = t.lastCode(user.phone);
    t.clock.advance(5 * 60_000);
    // The 10-minute login session is over, whatever the code.
    const late = await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code: fresh });
    assert.equal(late.json().code, 'OTP_SESSION_INVALID');
  });

  test('ten wrong passwords in a row lock the password step for 15 minutes', async () => {
    const user = await createUser(t);
    for (let i = 0; i < 10; i++) {
      const res = await post('/auth/login', { identifier: user.email, password: `wrong-password-${i}` });
      assert.equal(res.statusCode, 401, `attempt ${i + 1}`);
    }
    const locked = await post('/auth/login', { identifier: user.email, password: TEST_PASSWORD });
    assert.equal(locked.statusCode, 429);
    assert.deepEqual(locked.json(), {
      statusCode: 429,
      message: 'Too many wrong passwords; this account is locked for a while',
      error: 'Too Many Requests',
      code: 'ACCOUNT_LOCKED',
    });
    assert.equal(locked.headers['retry-after'], '900');
    t.clock.advance(15 * 60_000 + 1000);
    await startLogin(user.email);
  });

  test('a correct password resets the wrong-password count', async () => {
    const user = await createUser(t);
    for (let i = 0; i < 9; i++) await post('/auth/login', { identifier: user.email, password: `wrong-password-${i}` });
    await startLogin(user.email);
    for (let i = 0; i < 9; i++) await post('/auth/login', { identifier: user.email, password: `wrong-password-${i}` });
    await startLogin(user.email);
  });

  test('at most ten codes per phone number per hour', async () => {
    const user = await createUser(t);
    for (let i = 0; i < 10; i++) await startLogin(user.email);
    const eleventh = await post('/auth/login', { identifier: user.email, password: TEST_PASSWORD });
    assert.equal(eleventh.statusCode, 429);
    assert.equal(eleventh.json().code, 'OTP_PHONE_LIMIT');
    assert.ok(Number(eleventh.headers['retry-after']) > 3500);
    t.clock.advance(3_600_000);
    await startLogin(user.email);
  });

  test('refresh gives a new access token; lifetimes follow rememberMe', async () => {
    const user = await createUser(t);
    const short = await login(user.email, TEST_PASSWORD);
    const long = await login(user.email, TEST_PASSWORD, true);
    const res = await post('/auth/refresh', { refreshToken: short.refreshToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(Object.keys(res.json()).sort(), ['accessToken', 'success']);
    assert.equal((await me(res.json().accessToken)).statusCode, 200);
    const unknown = await post('/auth/refresh', { refreshToken: '6c0f7a6e-8a43-4d0e-9d33-000000000000' });
    assert.deepEqual(unknown.json(), {
      statusCode: 401,
      message: 'Refresh token is invalid or has expired',
      error: 'Unauthorized',
      code: 'INVALID_REFRESH_TOKEN',
    });
    assert.equal((await post('/auth/refresh', {})).statusCode, 400);

    t.clock.advance(7 * 86_400_000 + 1000);
    assert.equal((await post('/auth/refresh', { refreshToken: short.refreshToken })).statusCode, 401);
    assert.equal((await post('/auth/refresh', { refreshToken: long.refreshToken })).statusCode, 200);
    t.clock.advance(23 * 86_400_000);
    assert.equal((await post('/auth/refresh', { refreshToken: long.refreshToken })).statusCode, 401);
  });

  test('logout revokes the refresh token and, at once, the access tokens of that session', async () => {
    const user = await createUser(t);
    const a = await login(user.email);
    const b = await login(user.email);
    assert.equal((await me(a.accessToken)).statusCode, 200);
    const out = await post('/auth/logout', { refreshToken: a.refreshToken });
    assert.deepEqual(out.json(), { success: true, message: 'Logged out' });
    const after = await me(a.accessToken);
    assert.deepEqual(after.json(), {
      statusCode: 401,
      message: 'Session has been revoked',
      error: 'Unauthorized',
      code: 'SESSION_REVOKED',
    });
    assert.equal((await post('/auth/refresh', { refreshToken: a.refreshToken })).statusCode, 401);
    // Another session of the same account is untouched.
    assert.equal((await me(b.accessToken)).statusCode, 200);
    // Unknown and already revoked tokens get the same answer.
    assert.equal((await post('/auth/logout', { refreshToken: a.refreshToken })).statusCode, 200);
    assert.equal((await post('/auth/logout', { refreshToken: 'whatever' })).statusCode, 200);
  });

  test('GET /auth/me needs a valid bearer token', async () => {
    const none = await t.app.inject({ method: 'GET', url: '/api/auth/me' });
    assert.deepEqual(none.json(), {
      statusCode: 401,
      message: 'Missing bearer token',
      error: 'Unauthorized',
      code: 'MISSING_TOKEN',
    });
    const bad = await me('not.a.token');
    assert.deepEqual(bad.json(), {
      statusCode: 401,
      message: 'Invalid access token',
      error: 'Unauthorized',
      code: 'INVALID_TOKEN',
    });
    const pending = await createUser(t, { role: 'DRIVER', status: 'PENDING_APPROVAL' });
    const res = await me(pending.token);
    assert.deepEqual(res.json(), {
      statusCode: 403,
      message: 'Account is pending approval',
      error: 'Forbidden',
      code: 'ACCOUNT_PENDING_APPROVAL',
    });
  });

  test('password reset: code to the phone, new password, every session revoked', async () => {
    const user = await createUser(t);
    const session = await login(user.email);
    const forgot = await post('/auth/password/forgot', { identifier: user.email });
    assert.equal(forgot.statusCode, 200);
    const body = forgot.json();
    assert.deepEqual(Object.keys(body).sort(), ['message', 'phone', 'sessionId', 'success']);
    assert.equal(body.phone, `+*******${user.phone.slice(-2)}`);
    const code = t.lastCode(user.phone);

    const common = await post('/auth/password/reset', {
      sessionId: body.sessionId,
      phone: body.phone,
      code,
      newPassword: 'qwerty123',
    });
    assert.equal(common.json().code, 'PASSWORD_TOO_COMMON');
    const wrong = await post('/auth/password/reset', {
      sessionId: body.sessionId,
      phone: body.phone,
      code: wrongCode(code),
      newPassword: NEW_PASSWORD,
    });
    assert.equal(wrong.statusCode, 401);
    const ok = await post('/auth/password/reset', {
      sessionId: body.sessionId,
      phone: body.phone,
      code,
      newPassword: NEW_PASSWORD,
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().success, true);
    assert.equal((await me(session.accessToken)).statusCode, 401);
    assert.equal((await post('/auth/refresh', { refreshToken: session.refreshToken })).statusCode, 401);
    assert.equal((await post('/auth/login', { identifier: user.email, password: TEST_PASSWORD })).statusCode, 401);
    await login(user.email, NEW_PASSWORD);
    const reuse = await post('/auth/password/reset', {
      sessionId: body.sessionId,
      phone: body.phone,
      code,
      newPassword: 'yet-another-passphrase',
    });
    assert.equal(reuse.statusCode, 401);

    // By phone: the phone is echoed in full (the caller gave it) and works in the reset.
    const byPhone = await post('/auth/password/forgot', { identifier: user.phone });
    assert.equal(byPhone.json().phone, user.phone);
    const reset2 = await post('/auth/password/reset', {
      sessionId: byPhone.json().sessionId,
      phone: user.phone,
      code: t.lastCode(user.phone),
      newPassword: 'third-time-lucky-pass',
    });
    assert.equal(reset2.statusCode, 200);
  });

  test('password forgot answers the same for an unknown account, and sends nothing', async () => {
    const count = t.messages().length;
    const res = await post('/auth/password/forgot', { identifier: 'ghost@example.com' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['message', 'phone', 'sessionId', 'success']);
    assert.equal(body.message, 'If the account exists, a reset code was sent to its phone');
    assert.match(body.phone, /^\+\*{7}\d{2}$/);
    assert.equal(t.messages().length, count);
    const reset = await post('/auth/password/reset', {
      sessionId: body.sessionId,
      phone: body.phone,
      code: '123456',
      newPassword: NEW_PASSWORD,
    });
    assert.equal(reset.statusCode, 401);
  });

  test('password change: current password required; other sessions revoked', async () => {
    const user = await createUser(t);
    const here = await login(user.email);
    const elsewhere = await login(user.email);
    const auth = { authorization: `Bearer ${here.accessToken}` };
    const noToken = await post('/auth/password/change', { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD });
    assert.equal(noToken.statusCode, 401);
    const wrong = await post(
      '/auth/password/change',
      { currentPassword: 'not-the-password', newPassword: NEW_PASSWORD },
      auth,
    );
    assert.deepEqual(wrong.json(), {
      statusCode: 401,
      message: 'Current password is incorrect',
      error: 'Unauthorized',
      code: 'INVALID_CREDENTIALS',
    });
    const short = await post('/auth/password/change', { currentPassword: TEST_PASSWORD, newPassword: 'short' }, auth);
    assert.equal(short.statusCode, 400);
    const ok = await post('/auth/password/change', { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }, auth);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal((await me(here.accessToken)).statusCode, 200);
    assert.equal((await me(elsewhere.accessToken)).statusCode, 401);
    await login(user.email, NEW_PASSWORD);
  });

  test('neither the password nor the code reaches the log', async () => {
    const user = await createUser(t);
    const from = t.logLines.length;
    const s = await startLogin(user.email);
    const code = t.lastCode(user.phone);
    await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code: wrongCode(code) });
    const ok = await post('/auth/login/verify-otp', { sessionId: s.sessionId, phone: s.phone, code });
    await post('/auth/logout', { refreshToken: ok.json().refreshToken });
    const lines = t.logLines.slice(from).join('\n');
    assert.ok(lines.length > 0, 'the requests were logged');
    assert.ok(!lines.includes(TEST_PASSWORD));
    assert.ok(!lines.includes(code));
    assert.ok(!lines.includes(ok.json().refreshToken));
    assert.ok(!lines.includes(ok.json().accessToken));
  });

  test('the sweep deletes code steps past their end and sends past the hourly window, nothing live', async () => {
    const { auth } = t.services;
    const old = uniquePhone();
    const stale = await registerCode(old);
    t.clock.advance(10 * 60_000 + 1); // past LOGIN_SESSION_TTL (10 minutes)
    const fresh = uniquePhone();
    const live = await registerCode(fresh);
    const rows = async () => ({
      steps: (
        await t.db
          .selectFrom('otp_sessions')
          .select('id')
          .where('id', 'in', [stale.sessionId, live.sessionId])
          .execute()
      ).map((r) => r.id),
      sends: (await t.db.selectFrom('otp_sends').select('phone').where('phone', 'in', [old, fresh]).execute())
        .map((r) => r.phone)
        .sort(),
    });
    // Other tests' rows expire too: the counts are at least ours.
    const first = await auth.purgeExpired();
    assert.ok(first.codeSteps >= 1, JSON.stringify(first));
    assert.deepEqual(await rows(), { steps: [live.sessionId], sends: [old, fresh].sort() });
    t.clock.advance(50 * 60_000); // the first send is now more than an hour old
    const second = await auth.purgeExpired();
    assert.ok(second.codeSteps >= 1 && second.sends >= 1, JSON.stringify(second));
    assert.deepEqual(await rows(), { steps: [], sends: [fresh] });

    // An instance purges when it starts, too (its clock: the real time, when this row had long expired).
    const expired = await registerCode(uniquePhone());
    await t.db
      .updateTable('otp_sessions')
      .set({ expires_at: new Date(Date.now() - 60_000) })
      .where('id', '=', expired.sessionId)
      .execute();
    const other = await buildTestApp({ database: t.database });
    try {
      const gone = async () =>
        !(await t.db.selectFrom('otp_sessions').select('id').where('id', '=', expired.sessionId).executeTakeFirst());
      for (let i = 0; i < 50 && !(await gone()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(await gone(), 'the starting instance purged the expired code step');
    } finally {
      await other.close();
    }
  });
});
