import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

describe('business and company profiles', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  test('a business reads and changes its own profile only', async () => {
    const b = await createUser(t, {
      role: 'BUSINESS',
      businessName: 'Mama Mboga Ltd',
      firstName: 'Achieng',
      lastName: 'Otieno',
    });
    const other = await createUser(t, { role: 'BUSINESS', businessName: 'Other Co' });
    const res = await t.app.inject({ method: 'GET', url: '/api/businesses/me', headers: b.headers });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(
      { ...body, createdAt: typeof body.createdAt, updatedAt: typeof body.updatedAt },
      {
        id: b.id,
        businessName: 'Mama Mboga Ltd',
        businessAddress: null,
        email: b.email,
        phone: b.phone,
        firstName: 'Achieng',
        lastName: 'Otieno',
        countryId: b.countryId,
        status: 'ACTIVE',
        createdAt: 'string',
        updatedAt: 'string',
      },
    );
    const patched = await t.app.inject({
      method: 'PATCH',
      url: '/api/businesses/me',
      headers: b.headers,
      payload: { businessName: 'Mama Mboga Express', businessAddress: 'Moi Avenue 12, Nairobi' },
    });
    assert.equal(patched.statusCode, 200);
    assert.equal(patched.json().businessName, 'Mama Mboga Express');
    assert.equal(patched.json().businessAddress, 'Moi Avenue 12, Nairobi');
    const untouched = await t.app.inject({ method: 'GET', url: '/api/businesses/me', headers: other.headers });
    assert.equal(untouched.json().businessName, 'Other Co', "another business's profile did not change");

    for (const [payload, message] of [
      [{ status: 'ACTIVE' }, 'body has an unknown property "status"'],
      [{ businessName: '' }, 'body.businessName must NOT have fewer than 1 characters'],
      [{}, 'body must NOT have fewer than 1 properties'],
    ] as const) {
      const bad = await t.app.inject({ method: 'PATCH', url: '/api/businesses/me', headers: b.headers, payload });
      assert.deepEqual(bad.json(), { statusCode: 400, message, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    }
    const company = await createUser(t, { role: 'COMPANY' });
    const wrong = await t.app.inject({ method: 'GET', url: '/api/businesses/me', headers: company.headers });
    assert.deepEqual(wrong.json(), {
      statusCode: 403,
      message: 'This action requires role BUSINESS',
      error: 'Forbidden',
      code: 'WRONG_ROLE',
    });
  });

  test('a company reads and renames itself, and lists only its own drivers with availability and location', async () => {
    const c = await createUser(t, { role: 'COMPANY', companyName: 'Boda Fleet' });
    const rival = await createUser(t, { role: 'COMPANY', companyName: 'Rival Fleet' });
    const me = await t.app.inject({ method: 'GET', url: '/api/companies/me', headers: c.headers });
    assert.equal(me.json().companyName, 'Boda Fleet');
    assert.equal(me.json().id, c.id);
    const renamed = await t.app.inject({
      method: 'PATCH',
      url: '/api/companies/me',
      headers: c.headers,
      payload: { companyName: 'Boda Fleet Kenya' },
    });
    assert.equal(renamed.json().companyName, 'Boda Fleet Kenya');
    const bad = await t.app.inject({
      method: 'PATCH',
      url: '/api/companies/me',
      headers: c.headers,
      payload: { companyName: 'x', role: 'ADMIN' },
    });
    assert.deepEqual(bad.json(), {
      statusCode: 400,
      message: 'body has an unknown property "role"',
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });

    const mine: TestUser[] = [];
    for (let i = 0; i < 3; i++) {
      mine.push(await createUser(t, { role: 'DRIVER', driver: { companyId: c.id } }));
      t.clock.advance(10);
    }
    const theirs = await createUser(t, { role: 'DRIVER', driver: { companyId: rival.id } });
    await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/availability',
      headers: mine[0].headers,
      payload: { status: 'ONLINE' },
    });
    await t.app.inject({
      method: 'POST',
      url: '/api/drivers/me/location',
      headers: mine[0].headers,
      payload: { lat: 0.3, lng: 32.6 },
    });

    const page1 = await t.app.inject({ method: 'GET', url: '/api/companies/me/drivers?limit=2', headers: c.headers });
    assert.equal(page1.statusCode, 200);
    const p1 = page1.json();
    assert.equal(p1.items.length, 2);
    assert.ok(p1.nextCursor);
    const page2 = await t.app.inject({
      method: 'GET',
      url: `/api/companies/me/drivers?limit=2&cursor=${p1.nextCursor}`,
      headers: c.headers,
    });
    const p2 = page2.json();
    assert.equal(p2.nextCursor, null);
    const listed = [...p1.items, ...p2.items];
    assert.deepEqual(listed.map((d: { id: string }) => d.id).sort(), mine.map((d) => d.id).sort());
    assert.ok(!listed.some((d: { id: string }) => d.id === theirs.id), "a rival's driver is never listed");
    const first = listed.find((d: { id: string }) => d.id === mine[0].id);
    assert.equal(first.availability, 'ONLINE');
    assert.equal(first.location.lat, 0.3);
    assert.equal(first.companyId, c.id);

    const badCursor = await t.app.inject({
      method: 'GET',
      url: '/api/companies/me/drivers?cursor=zzz',
      headers: c.headers,
    });
    assert.deepEqual(badCursor.json(), {
      statusCode: 400,
      message: 'Invalid cursor',
      error: 'Bad Request',
      code: 'INVALID_CURSOR',
    });
    const driverCall = await t.app.inject({
      method: 'GET',
      url: '/api/companies/me/drivers',
      headers: mine[1].headers,
    });
    assert.equal(driverCall.statusCode, 403);
  });
});
