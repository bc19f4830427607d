// One driver's earnings report for an admin and for the driver's company (contract section 21):
// GET /admin/drivers/:driverId/earnings and GET /companies/me/drivers/:driverId/earnings give the
// JSON and CSV the driver gets from GET /drivers/me/earnings; another company's driver is 404.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, setDriverPosition } from './packages-helpers.js';

/** A flat tariff: every job costs 12,000 whatever the distance; 15 % commission. */
const TARIFF = {
  base: 10_000,
  perKm: 0,
  perMinute: 0,
  minimum: 0,
  bookingFee: 2_000,
  cancellationFee: 5_000,
  commissionRate: 1500,
};
const PRICE = 12_000;

const driverNotFound = { statusCode: 404, error: 'Not Found', code: 'DRIVER_NOT_FOUND', message: 'Driver not found' };

describe("a driver's earnings report for an admin and the driver's company", () => {
  let t: TestApp;
  let admin: TestUser;
  let business: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let rider: TestUser;
  let freelancer: TestUser;
  let otherRider: TestUser;
  const window = '?from=2020-01-01&to=2020-01-02';

  const admins = (driverId: string, query = '') => `/api/admin/drivers/${driverId}/earnings${query}`;
  const companys = (driverId: string, query = '') => `/api/companies/me/drivers/${driverId}/earnings${query}`;

  /** A package by the business, taken and delivered by the driver (broadcast: the driver accepts it). */
  const deliver = async (driver: TestUser, overrides: Record<string, unknown> = {}) => {
    const created = await post(t, '/api/packages', business.headers, packageBody(business.countryId, overrides));
    assert.equal(created.statusCode, 201, created.body);
    for (const action of ['accept', 'pickup', 'start', 'deliver']) {
      const res = await post(t, `/api/packages/${created.json().id}/${action}`, driver.headers);
      assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
    }
  };

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS' });
    company = await createUser(t, { role: 'COMPANY' });
    otherCompany = await createUser(t, { role: 'COMPANY' });
    rider = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'BIKE', companyId: company.id },
    });
    freelancer = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    otherRider = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'VAN', companyId: otherCompany.id },
    });
    for (const d of [rider, freelancer, otherRider]) await setDriverPosition(t, d.id, -1.2864, 36.8172);
    for (const vehicleType of ['BIKE', 'VAN']) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/admin/tariffs/${business.countryId}/${vehicleType}`,
        headers: admin.headers,
        payload: TARIFF,
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    // The company's rider: a CASH and an ACCOUNT delivery; the other company's rider: one on account.
    await deliver(rider, { paymentMethod: 'CASH' });
    await deliver(rider);
    await deliver(otherRider, { vehicleType: 'VAN' });
  });
  after(async () => t.close());

  test("an admin gets the driver's own JSON report, for the default window and a given one", async () => {
    const own = await get(t, '/api/drivers/me/earnings', rider.headers);
    assert.equal(own.statusCode, 200, own.body);
    const report = own.json();
    assert.equal(report.driverId, rider.id);
    assert.deepEqual(
      report.jobs.map((j: { kind: string; amount: number; cashCollected: number }) => [
        j.kind,
        j.amount,
        j.cashCollected,
      ]),
      [
        ['COMPLETED', PRICE, PRICE],
        ['COMPLETED', PRICE, 0],
      ],
    );
    const byAdmin = await get(t, admins(rider.id), admin.headers);
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    assert.deepEqual(byAdmin.json(), report);

    // A window of its own, here the other company's rider and a period before any job.
    const day = t.clock.now().toISOString().slice(0, 10);
    const query = `?from=${day}&to=${encodeURIComponent(new Date(t.clock.now().getTime() + 60_000).toISOString())}`;
    const theirs = (await get(t, `/api/drivers/me/earnings${query}`, otherRider.headers)).json();
    assert.equal(theirs.jobs.length, 1);
    assert.deepEqual((await get(t, admins(otherRider.id, query), admin.headers)).json(), theirs);
    const empty = (await get(t, admins(rider.id, window), admin.headers)).json();
    assert.deepEqual(
      [empty.from, empty.to, empty.jobs, empty.totals],
      ['2020-01-01T00:00:00.000Z', '2020-01-02T00:00:00.000Z', [], []],
    );
    assert.deepEqual(empty.balances, report.balances, 'the balance is the current one whatever the window');
    // An upper-case id is the same driver.
    assert.deepEqual((await get(t, admins(rider.id.toUpperCase()), admin.headers)).json(), report);
    // The period's rules are the driver's report's.
    const from = new Date(t.clock.now().getTime() - 93 * 86_400_000).toISOString();
    const long = await get(t, admins(rider.id, `?from=${encodeURIComponent(from)}`), admin.headers);
    assert.equal(long.statusCode, 400);
    assert.equal(long.json().code, 'EARNINGS_PERIOD_TOO_LONG');
  });

  test('CSV with Accept: text/csv or format=csv, the same rows as the driver gets; format=json wins over Accept', async () => {
    const own = await t.app.inject({
      method: 'GET',
      url: '/api/drivers/me/earnings',
      headers: { ...rider.headers, accept: 'text/csv' },
    });
    assert.equal(own.statusCode, 200);
    for (const [url, headers] of [
      [admins(rider.id), { ...admin.headers, accept: 'text/csv' }],
      [admins(rider.id, '?format=csv'), admin.headers],
      [companys(rider.id), { ...company.headers, accept: 'text/csv' }],
      [companys(rider.id, '?format=csv'), company.headers],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.match(res.headers['content-type'] as string, /^text\/csv; charset=utf-8/);
      assert.match(
        res.headers['content-disposition'] as string,
        new RegExp(`^attachment; filename="earnings-${rider.id}-\\d{4}-\\d{2}-\\d{2}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
      );
      assert.equal(res.body, own.body, url);
    }
    const rows: Record<string, string>[] = parse(own.body, { columns: true });
    assert.deepEqual(
      rows.map((r) => r.type),
      ['JOB', 'JOB', 'TOTAL', 'BALANCE'],
    );
    const json = await t.app.inject({
      method: 'GET',
      url: admins(rider.id, '?format=json'),
      headers: { ...admin.headers, accept: 'text/csv' },
    });
    assert.match(json.headers['content-type'] as string, /^application\/json/);
    assert.equal(json.json().driverId, rider.id);
  });

  test("a company sees its own driver's report; another company's driver, a driver of none, a non-driver and an unknown id are 404", async () => {
    const own = (await get(t, '/api/drivers/me/earnings', rider.headers)).json();
    const res = await get(t, companys(rider.id), company.headers);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), own);
    const empty = (await get(t, companys(rider.id, window), company.headers)).json();
    assert.deepEqual(empty.jobs, []);

    for (const [who, id] of [
      ["another company's driver", otherRider.id],
      ['a driver of no company', freelancer.id],
      ['the company itself', company.id],
      ['a business', business.id],
      ['an unknown id', randomUUID()],
    ] as const) {
      const denied = await get(t, companys(id), company.headers);
      assert.equal(denied.statusCode, 404, who);
      assert.deepEqual(denied.json(), driverNotFound, who);
      // The CSV too: nothing of the report leaks.
      const csv = await t.app.inject({ method: 'GET', url: companys(id, '?format=csv'), headers: company.headers });
      assert.equal(csv.statusCode, 404, `${who} (CSV)`);
    }
    // The other company sees its own and not ours.
    assert.equal((await get(t, companys(otherRider.id), otherCompany.headers)).statusCode, 200);
    assert.deepEqual((await get(t, companys(rider.id), otherCompany.headers)).json(), driverNotFound);
  });

  test('an admin: an unknown id or an account that is no driver is 404, a bad id 400', async () => {
    for (const id of [randomUUID(), business.id, company.id]) {
      const res = await get(t, admins(id), admin.headers);
      assert.equal(res.statusCode, 404, id);
      assert.deepEqual(res.json(), driverNotFound);
    }
    // A driver of no company is any driver to an admin.
    assert.equal((await get(t, admins(freelancer.id), admin.headers)).statusCode, 200);
    for (const url of [admins('not-a-uuid'), companys('not-a-uuid'), admins(`${rider.id}x`)]) {
      const res = await get(t, url, url.includes('/admin/') ? admin.headers : company.headers);
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().code, 'VALIDATION_FAILED', url);
      assert.match(res.json().message, /driverId/, url);
    }
  });

  test('roles: a driver, a business or a company calling the admin route is 403, a driver or an admin calling the company route 403, no token 401', async () => {
    for (const user of [rider, business, company]) {
      const res = await get(t, admins(rider.id), user.headers);
      assert.equal(res.statusCode, 403, user.role);
      assert.deepEqual(res.json(), {
        statusCode: 403,
        error: 'Forbidden',
        code: 'WRONG_ROLE',
        message: 'This action requires role ADMIN',
      });
    }
    for (const user of [rider, admin, business]) {
      const res = await get(t, companys(rider.id), user.headers);
      assert.equal(res.statusCode, 403, user.role);
      assert.deepEqual(res.json(), {
        statusCode: 403,
        error: 'Forbidden',
        code: 'WRONG_ROLE',
        message: 'This action requires role COMPANY',
      });
    }
    for (const url of [admins(rider.id), companys(rider.id)])
      assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 401);
  });
});
