// Cash on delivery (contract section 21): a business package's cashOnDelivery up to the country's
// codMax, the driver's cashCollected at delivery (400 missing, 409 COD_MISMATCH), the booking, and who
// sees the fields.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, setDriverPosition } from './packages-helpers.js';
import { assertBooks, balanceOf } from './payouts-helpers.js';

describe('cash on delivery', () => {
  let t: TestApp;
  let admin: TestUser;
  let business: TestUser;
  let customer: TestUser;
  let driver: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    await setDriverPosition(t, driver.id, -1.2864, 36.8172);
  });
  after(async () => t.close());

  const create = (by: TestUser, overrides: Record<string, unknown>) =>
    post(t, '/api/packages', by.headers, packageBody(by.countryId, overrides));

  test('codMax: seeded per currency (KES 130,000.00), set by an admin; above it 400; customers 400', async () => {
    const countries = await t.app.inject({ method: 'GET', url: '/api/countries' });
    const kenya = countries.json().items.find((c: { code: string }) => c.code === 'KE');
    assert.equal(kenya.codMax, 13_000_000);
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/api/admin/countries/${business.countryId}`,
      headers: admin.headers,
      payload: { codMax: 100_000 },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().codMax, 100_000);
    assert.equal(
      (
        await t.app.inject({
          method: 'PATCH',
          url: `/api/admin/countries/${business.countryId}`,
          headers: admin.headers,
          payload: { codMax: -1 },
        })
      ).statusCode,
      400,
    );

    const over = await create(business, { cashOnDelivery: { amount: 100_001 } });
    assert.equal(over.statusCode, 400);
    assert.equal(over.json().code, 'CASH_ON_DELIVERY_TOO_LARGE');
    assert.equal((await create(business, { cashOnDelivery: { amount: 0 } })).statusCode, 400);
    assert.equal((await create(business, { cashOnDelivery: { amount: 12.5 } })).statusCode, 400);
    assert.equal((await create(business, { cashOnDelivery: { amount: 100, currency: 'USD' } })).statusCode, 400);
    const byCustomer = await create(customer, { cashOnDelivery: { amount: 100 } });
    assert.equal(byCustomer.statusCode, 400);
    assert.equal(byCustomer.json().code, 'CASH_ON_DELIVERY_NOT_ALLOWED');
    const atMax = await create(business, { cashOnDelivery: { amount: 100_000 } });
    assert.equal(atMax.statusCode, 201);
    assert.deepEqual(atMax.json().cashOnDelivery, { amount: 100_000, currency: 'KES' });
    await post(t, `/api/packages/${atMax.json().id}/cancel`, business.headers);
  });

  test('the driver confirms cashCollected: missing 400, different 409 COD_MISMATCH (nothing booked), equal: delivered and booked', async () => {
    const created = await create(business, { cashOnDelivery: { amount: 50_000 }, customerId: customer.id });
    assert.equal(created.statusCode, 201, created.body);
    const pkg = created.json();
    for (const action of ['accept', 'pickup', 'start'])
      assert.equal((await post(t, `/api/packages/${pkg.id}/${action}`, driver.headers)).statusCode, 200);
    const seenByDriver = (await get(t, `/api/packages/${pkg.id}`, driver.headers)).json();
    assert.deepEqual(seenByDriver.cashOnDelivery, { amount: 50_000, currency: 'KES' });
    assert.equal(seenByDriver.cashCollected, null);

    const missing = await post(t, `/api/packages/${pkg.id}/deliver`, driver.headers, {});
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().code, 'CASH_COLLECTED_REQUIRED');
    const less = await post(t, `/api/packages/${pkg.id}/deliver`, driver.headers, { cashCollected: 49_999 });
    assert.equal(less.statusCode, 409);
    assert.equal(less.json().code, 'COD_MISMATCH');
    assert.equal((await get(t, `/api/packages/${pkg.id}`, driver.headers)).json().status, 'IN_TRANSIT');
    const booked = await sql<{
      n: number;
    }>`select count(*)::int as n from ledger_transactions where source_key = ${`cod:${pkg.id}`}`.execute(t.db);
    assert.equal(booked.rows[0]!.n, 0);

    const driverBefore = await balanceOf(t, 'DRIVER', driver.id);
    const businessBefore = await balanceOf(t, 'BUSINESS', business.id);
    const delivered = await post(t, `/api/packages/${pkg.id}/deliver`, driver.headers, { cashCollected: 50_000 });
    assert.equal(delivered.statusCode, 200, delivered.body);
    assert.deepEqual(delivered.json().cashCollected, { amount: 50_000, currency: 'KES' });
    const entries = await sql<{
      kind: string;
      code: string;
      amount: number;
    }>`select a.kind, e.code, e.amount::int as amount from ledger_entries e
      join ledger_transactions x on x.id = e.transaction_id join ledger_accounts a on a.id = e.account_id
      where x.source_key = ${`cod:${pkg.id}`} order by a.kind`.execute(t.db);
    assert.deepEqual(
      entries.rows.map((r) => [r.kind, r.code, r.amount]),
      [
        ['BUSINESS', 'COD', 50_000],
        ['DRIVER', 'COD', -50_000],
      ],
    );
    const price = pkg.price.amount as number;
    // ACCOUNT: the business is charged the price and credited the cash; the driver holds the cash and earned its share.
    assert.equal((await balanceOf(t, 'BUSINESS', business.id)) - businessBefore, 50_000 - price);
    const earned = delivered.json().earnings.driver as number;
    assert.equal((await balanceOf(t, 'DRIVER', driver.id)) - driverBefore, earned - 50_000);

    // The business sees both fields, the customer named neither, and nobody sees earnings but the driver's side.
    const forBusiness = (await get(t, `/api/packages/${pkg.id}`, business.headers)).json();
    assert.deepEqual(
      [forBusiness.cashOnDelivery, forBusiness.cashCollected, 'earnings' in forBusiness],
      [{ amount: 50_000, currency: 'KES' }, { amount: 50_000, currency: 'KES' }, false],
    );
    const forCustomer = (await get(t, `/api/packages/${pkg.id}`, customer.headers)).json();
    assert.deepEqual(
      ['cashOnDelivery' in forCustomer, 'cashCollected' in forCustomer, 'earnings' in forCustomer],
      [false, false, false],
    );

    // The driver's report counts the cash on delivery as cash collected.
    const report = (await get(t, '/api/drivers/me/earnings', driver.headers)).json();
    const job = report.jobs.find((j: { jobId: string }) => j.jobId === pkg.id);
    assert.equal(job.cashCollected, 50_000);
    assert.equal(report.totals[0].cashCollected, 50_000);
    await assertBooks(t);
  });
});
