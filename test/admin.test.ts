import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp } from './helpers/app.js';
import { serverDatabaseUrl } from './helpers/database.js';
import { countryId, createUser, TEST_PASSWORD, uniquePhone, type TestUser } from './helpers/factories.js';
import { buildSmsTestApp, type SmsTestApp } from './auth-support.js';

describe('administration', () => {
  let t: SmsTestApp;
  let admin: TestUser;

  before(async () => {
    t = await buildSmsTestApp();
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers: object = admin.headers) =>
    t.app.inject({
      method,
      url: `/api${url}`,
      headers: headers as Record<string, string>,
      ...(payload ? { payload } : {}),
    });

  test('only ADMIN may use the admin routes', async () => {
    const target = await createUser(t, { role: 'BUSINESS', status: 'PENDING_APPROVAL' });
    for (const role of ['CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY'] as const) {
      const other = await createUser(t, { role });
      for (const [method, url, body] of [
        ['GET', '/admin/users', undefined],
        ['GET', `/admin/users/${target.id}`, undefined],
        ['POST', `/admin/users/${target.id}/approve`, undefined],
        ['POST', `/admin/users/${target.id}/suspend`, { reason: 'x' }],
        ['POST', '/admin/countries', { code: 'ZZ', name: 'Z', currency: 'ZZZ', dialCode: '+999' }],
      ] as const) {
        const res = await call(method, url, body, other.headers);
        assert.equal(res.statusCode, 403, `${role} ${method} ${url}`);
      }
    }
    assert.equal((await call('GET', '/admin/users', undefined, {})).statusCode, 401);
    assert.equal((await call('GET', `/admin/users/${target.id}`)).json().status, 'PENDING_APPROVAL');
  });

  test('list users by role and status, paginated newest first', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await createUser(t, { role: 'COMPANY', status: 'PENDING_APPROVAL', session: false })).id);
      t.clock.advance(10);
    }
    await createUser(t, { role: 'COMPANY', status: 'ACTIVE', session: false });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `role=COMPANY&status=PENDING_APPROVAL&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await call('GET', `/admin/users?${query}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      for (const u of body.items) {
        assert.equal(u.role, 'COMPANY');
        assert.equal(u.status, 'PENDING_APPROVAL');
        seen.push(u.id);
      }
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    assert.equal(new Set(seen).size, seen.length, 'no duplicates across pages');
    for (const id of made) assert.ok(seen.includes(id));
    assert.equal((await call('GET', '/admin/users?role=KING')).statusCode, 400);
    assert.equal((await call('GET', '/admin/users?cursor=garbage')).statusCode, 400);
    assert.equal((await call('GET', '/admin/users?limit=101')).statusCode, 400);
  });

  test('get one user: 404 unknown, 400 malformed', async () => {
    const res = await call('GET', '/admin/users/00000000-0000-4000-8000-000000000000');
    assert.deepEqual(res.json(), {
      statusCode: 404,
      message: 'User not found',
      error: 'Not Found',
      code: 'USER_NOT_FOUND',
    });
    assert.equal((await call('GET', '/admin/users/not-a-uuid')).statusCode, 400);
  });

  test('approve, reject, suspend, reactivate, and 409 when a transition does not apply', async () => {
    const u = await createUser(t, { role: 'DRIVER', status: 'PENDING_APPROVAL' });
    const noReason = await call('POST', `/admin/users/${u.id}/reject`, {});
    assert.equal(noReason.statusCode, 400);
    const rejected = await call('POST', `/admin/users/${u.id}/reject`, { reason: 'Plate does not match the papers' });
    assert.equal(rejected.statusCode, 200);
    assert.equal(rejected.json().status, 'REJECTED');
    const row = await t.db.selectFrom('users').select('status_reason').where('id', '=', u.id).executeTakeFirstOrThrow();
    assert.equal(row.status_reason, 'Plate does not match the papers');
    const again = await call('POST', `/admin/users/${u.id}/reject`, { reason: 'x' });
    assert.deepEqual(again.json(), {
      statusCode: 409,
      message: 'Cannot reject an account whose status is REJECTED',
      error: 'Conflict',
      code: 'INVALID_STATUS_TRANSITION',
    });
    const reactivate = await call('POST', `/admin/users/${u.id}/reactivate`);
    assert.equal(reactivate.statusCode, 409);
    const before = t.messages().length;
    const approved = await call('POST', `/admin/users/${u.id}/approve`);
    assert.equal(approved.json().status, 'ACTIVE');
    const sms = t.messages().slice(before);
    assert.equal(sms.length, 1);
    assert.equal(sms[0].to, u.phone);
    assert.equal((await call('POST', `/admin/users/${u.id}/approve`)).statusCode, 409);
    assert.equal((await call('POST', `/admin/users/00000000-0000-4000-8000-000000000000/approve`)).statusCode, 404);
    const suspended = await call('POST', `/admin/users/${u.id}/suspend`, { reason: 'Complaints' });
    assert.equal(suspended.json().status, 'SUSPENDED');
    const back = await call('POST', `/admin/users/${u.id}/reactivate`);
    assert.equal(back.json().status, 'ACTIVE');
    const self = await call('POST', `/admin/users/${admin.id}/suspend`, { reason: 'oops' });
    assert.equal(self.statusCode, 409);
  });

  test('suspension revokes every session of the account at once', async () => {
    const u = await createUser(t, { role: 'BUSINESS' });
    const me = () => t.app.inject({ method: 'GET', url: '/api/auth/me', headers: u.headers });
    assert.equal((await me()).statusCode, 200);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { identifier: u.email, password: TEST_PASSWORD },
    });
    const s = login.json();
    const verified = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login/verify-otp',
      payload: { sessionId: s.sessionId, phone: s.phone, code: t.lastCode(u.phone) },
    });
    const second = verified.json();
    assert.equal((await call('POST', `/admin/users/${u.id}/suspend`, { reason: 'Fraud' })).statusCode, 200);
    assert.deepEqual((await me()).json(), {
      statusCode: 401,
      message: 'Session has been revoked',
      error: 'Unauthorized',
      code: 'SESSION_REVOKED',
    });
    const other = await t.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { authorization: `Bearer ${second.accessToken}` },
    });
    assert.equal(other.statusCode, 401);
    assert.equal(
      (await t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: second.refreshToken } }))
        .statusCode,
      401,
    );
    const live = await t.db
      .selectFrom('auth_sessions')
      .select('id')
      .where('user_id', '=', u.id)
      .where('revoked_at', 'is', null)
      .execute();
    assert.equal(live.length, 0);
    const relogin = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { identifier: u.email, password: TEST_PASSWORD },
    });
    assert.equal(relogin.json().message, 'Account is suspended');
  });

  test('create accounts of any role, ADMIN included', async () => {
    const kenya = await countryId(t);
    const phone = uniquePhone();
    const email = `admin-${phone.slice(-6)}@example.com`;
    const res = await call('POST', '/admin/users', {
      email,
      phone,
      password: 'a-long-admin-passphrase',
      firstName: 'New',
      lastName: 'Admin',
      role: 'ADMIN',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().role, 'ADMIN');
    assert.equal(res.json().status, 'ACTIVE');
    assert.equal(res.json().countryId, null);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { identifier: email, password: 'a-long-admin-passphrase' },
    });
    assert.equal(login.statusCode, 200);

    const dup = await call('POST', '/admin/users', {
      email: email.toUpperCase(),
      phone: uniquePhone(),
      password: 'a-long-admin-passphrase',
      firstName: 'A',
      lastName: 'B',
      role: 'CUSTOMER',
    });
    assert.equal(dup.statusCode, 409);
    const biz = await call('POST', '/admin/users', {
      email: `biz-${phone.slice(-6)}@example.com`,
      phone: uniquePhone(),
      password: 'a-long-biz-passphrase',
      firstName: 'A',
      lastName: 'B',
      role: 'BUSINESS',
      countryId: kenya,
    });
    assert.equal(biz.json().message, 'body.businessName is required for role BUSINESS');
    const noCountry = await call('POST', '/admin/users', {
      email: `c-${phone.slice(-6)}@example.com`,
      phone: uniquePhone(),
      password: 'a-long-c-passphrase',
      firstName: 'A',
      lastName: 'B',
      role: 'CUSTOMER',
      countryId: '00000000-0000-4000-8000-000000000000',
    });
    assert.equal(noCountry.statusCode, 404);
  });

  test('countries: create and change; 409 duplicate code; 404 unknown', async () => {
    const created = await call('POST', '/admin/countries', {
      code: 'ZM',
      name: 'Zambia',
      currency: 'ZMW',
      dialCode: '+260',
    });
    assert.equal(created.statusCode, 201, created.body);
    const country = created.json() as Record<string, string>;
    assert.match(country.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...country, id: 'x' },
      {
        id: 'x',
        code: 'ZM',
        name: 'Zambia',
        currency: 'ZMW',
        dialCode: '+260',
        codMax: 100_000,
        minorUnits: 2,
        // None given: UTC until an admin sets the country's zone (section 22).
        timeZone: 'UTC',
        // None given: English until an admin sets the country's language (section 27).
        defaultLocale: 'en',
      },
    );
    const dup = await call('POST', '/admin/countries', {
      code: 'ZM',
      name: 'Zambia',
      currency: 'ZMW',
      dialCode: '+260',
    });
    assert.deepEqual(dup.json(), {
      statusCode: 409,
      message: 'Country ZM already exists',
      error: 'Conflict',
      code: 'COUNTRY_EXISTS',
    });
    assert.equal(
      (await call('POST', '/admin/countries', { code: 'zm', name: 'Z', currency: 'ZMW', dialCode: '+260' })).statusCode,
      400,
    );
    const patched = await call('PATCH', `/admin/countries/${created.json().id}`, { name: 'Republic of Zambia' });
    assert.equal(patched.json().name, 'Republic of Zambia');
    const list = await t.app.inject({ method: 'GET', url: '/api/countries' });
    assert.ok(list.json().items.some((c: { name: string }) => c.name === 'Republic of Zambia'));
    assert.equal((await call('PATCH', `/admin/countries/${created.json().id}`, { code: 'KE' })).statusCode, 409);
    assert.equal((await call('PATCH', `/admin/countries/${created.json().id}`, {})).statusCode, 400);
    const missing = await call('PATCH', '/admin/countries/00000000-0000-4000-8000-000000000000', { name: 'X' });
    assert.deepEqual(missing.json(), {
      statusCode: 404,
      message: 'Country not found',
      error: 'Not Found',
      code: 'COUNTRY_NOT_FOUND',
    });
  });

  test("countries carry their currency's ISO 4217 minor units (PKR 2, IQD 3, where browsers say 0); a currency not in ISO 4217 is refused", async () => {
    const pk = await call('POST', '/admin/countries', {
      code: 'PK',
      name: 'Pakistan',
      currency: 'PKR',
      dialCode: '+92',
    });
    assert.equal(pk.statusCode, 201, pk.body);
    assert.equal(pk.json().minorUnits, 2);
    const iq = await call('POST', '/admin/countries', { code: 'IQ', name: 'Iraq', currency: 'IQD', dialCode: '+964' });
    assert.equal(iq.json().minorUnits, 3);
    const items: { code: string; currency: string; minorUnits: number }[] = (
      await t.app.inject({ method: 'GET', url: '/api/countries' })
    ).json().items;
    const units = Object.fromEntries(items.map((c) => [c.code, c.minorUnits]));
    assert.deepEqual([units.PK, units.IQ, units.KE, units.UG], [2, 3, 2, 0]);

    const unknown = {
      statusCode: 400,
      message: 'XYZ is not an ISO 4217 currency',
      error: 'Bad Request',
      code: 'UNKNOWN_CURRENCY',
    };
    const refused = await call('POST', '/admin/countries', {
      code: 'XY',
      name: 'Nowhere',
      currency: 'XYZ',
      dialCode: '+999',
    });
    assert.deepEqual(refused.json(), unknown);
    assert.deepEqual((await call('PATCH', `/admin/countries/${pk.json().id}`, { currency: 'XYZ' })).json(), unknown);
    // Not a currency of a country: precious metals and the testing code have no minor unit.
    assert.equal(
      (await call('PATCH', `/admin/countries/${pk.json().id}`, { currency: 'XAU' })).json().code,
      'UNKNOWN_CURRENCY',
    );
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/countries' }))
        .json()
        .items.find((c: { code: string }) => c.code === 'PK').currency,
      'PKR',
    );
    const changed = await call('PATCH', `/admin/countries/${pk.json().id}`, { currency: 'KWD' });
    assert.equal(changed.json().minorUnits, 3);
  });
});

describe('admin bootstrap', () => {
  test('ADMIN_EMAIL/PHONE/PASSWORD create the admin once; a second start changes nothing', async () => {
    const env = {
      ADMIN_EMAIL: 'Root@Example.com',
      ADMIN_PHONE: '+254700000001',
      ADMIN_PASSWORD: 'bootstrap-admin-pass',
    };
    const first = await buildTestApp({ env });
    try {
      const second = await buildTestApp({
        env: { ...env, ADMIN_PASSWORD: 'a-different-password' },
        database: first.database,
      });
      await second.close();
      const rows = await first.db
        .selectFrom('users')
        .select(['role', 'status', 'email'])
        .where('role', '=', 'ADMIN')
        .execute();
      assert.deepEqual(rows, [{ role: 'ADMIN', status: 'ACTIVE', email: 'Root@Example.com' }]);
      const login = await first.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { identifier: 'root@example.com', password: 'bootstrap-admin-pass' },
      });
      assert.equal(login.statusCode, 200, login.body);
    } finally {
      await first.close();
    }
  });

  test(
    'npm run admin:create creates an admin (and refuses a duplicate)',
    { skip: serverDatabaseUrl ? 'covered with PGlite' : false },
    () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'rd-admin-cli-'));
      try {
        const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: '', NODE_ENV: 'development', LOG_LEVEL: 'silent' };
        const args = [
          '--import',
          'tsx',
          'src/cli/admin-create.ts',
          '--email',
          'cli@example.com',
          '--phone',
          '+254711000111',
          '--password',
          'cli-admin-passphrase',
          '--first-name',
          'Cli',
        ];
        const run = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
        assert.equal(run.status, 0, run.stderr);
        const user = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
        assert.equal(user.role, 'ADMIN');
        assert.equal(user.firstName, 'Cli');
        assert.ok(!run.stdout.includes('cli-admin-passphrase'));
        const dup = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
        assert.equal(dup.status, 1);
        assert.match(dup.stderr, /E-mail is already registered/);
        const missing = spawnSync(
          process.execPath,
          ['--import', 'tsx', 'src/cli/admin-create.ts', '--email', 'x@example.com'],
          { env, encoding: 'utf8' },
        );
        assert.equal(missing.status, 2);
        assert.match(missing.stderr, /usage: npm run admin:create/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
