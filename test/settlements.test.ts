// Settlements, business payments and balances through the API (contract section 21).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { assertBooks, balanceOf, caller, cashOnDelivery, collectCash, earn, type Call } from './payouts-helpers.js';

describe('settlements and business payments', () => {
  let t: TestApp;
  let admin: TestUser;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    admin = await createUser(t, { role: 'ADMIN' });
    call = caller(t, admin);
  });
  after(async () => t.close());

  test('a settlement lowers what the driver owes and is booked once; the reply says the new balance', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    await collectCash(t, driver.id, 35_000); // owes the 20 % commission: 7,000
    assert.equal(await balanceOf(t, 'DRIVER', driver.id), -7000);
    const res = await call('POST', '/admin/settlements', {
      driverId: driver.id,
      amount: 5000,
      currency: 'KES',
      reference: 'RCPT-001',
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(
      { ...body, id: undefined, transactionId: undefined, createdAt: undefined },
      {
        driverId: driver.id,
        amount: 5000,
        currency: 'KES',
        reference: 'RCPT-001',
        balance: -2000,
        recordedBy: admin.id,
        id: undefined,
        transactionId: undefined,
        createdAt: undefined,
      },
    );
    assert.equal(await balanceOf(t, 'DRIVER', driver.id), -2000);
    assert.equal(await t.services.ledger.balance('KES', { kind: 'OPERATOR_CASH' }), -5000);
    await assertBooks(t);
  });

  test('a settlement of more than the driver owes is refused (409); exactly the debt is accepted', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    await collectCash(t, driver.id, 35_000);
    const over = await call('POST', '/admin/settlements', {
      driverId: driver.id,
      amount: 7001,
      currency: 'KES',
      reference: 'R',
    });
    assert.equal(over.statusCode, 409);
    assert.deepEqual(over.json(), {
      statusCode: 409,
      error: 'Conflict',
      code: 'SETTLEMENT_EXCEEDS_DEBT',
      message: 'The driver owes 7000 KES (minor units): a settlement of 7001 is more than that',
    });
    assert.equal(await balanceOf(t, 'DRIVER', driver.id), -7000, 'nothing booked');
    const exact = await call('POST', '/admin/settlements', {
      driverId: driver.id,
      amount: 7000,
      currency: 'KES',
      reference: 'R',
    });
    assert.equal(exact.statusCode, 201);
    assert.equal(exact.json().balance, 0);
    const none = await call('POST', '/admin/settlements', {
      driverId: driver.id,
      amount: 1,
      currency: 'KES',
      reference: 'R',
    });
    assert.equal(none.statusCode, 409);
    assert.equal(none.json().message, 'The driver owes nothing in KES: there is no cash to settle');
    // A driver the operator owes (earnings on account) has nothing to hand in either.
    const earner = await createUser(t, { role: 'DRIVER' });
    const business = await createUser(t, { role: 'BUSINESS' });
    await earn(t, earner.id, business.id, 4000);
    assert.equal(
      (await call('POST', '/admin/settlements', { driverId: earner.id, amount: 100, currency: 'KES', reference: 'R' }))
        .statusCode,
      409,
    );
  });

  test('Idempotency-Key: the same settlement sent twice is recorded once', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const business = await createUser(t, { role: 'BUSINESS' });
    await cashOnDelivery(t, driver.id, business.id, 10_000);
    const body = { driverId: driver.id, amount: 10_000, currency: 'KES', reference: 'COD cash' };
    const headers = { ...admin.headers, 'idempotency-key': `settle-${driver.id}` };
    const first = await call('POST', '/admin/settlements', body, headers);
    const again = await call('POST', '/admin/settlements', body, headers);
    assert.equal(first.statusCode, 201);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(await balanceOf(t, 'DRIVER', driver.id), 0);
  });

  test('bad settlements are each a 4xx with a clear message, before anything is booked', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    await collectCash(t, driver.id, 50_000);
    const business = await createUser(t, { role: 'BUSINESS' });
    const ok = { driverId: driver.id, amount: 100, currency: 'KES', reference: 'R' };
    const cases: [object, number, string, string][] = [
      [{ ...ok, amount: 0 }, 400, 'VALIDATION_FAILED', 'body.amount must be >= 1'],
      [{ ...ok, amount: -5 }, 400, 'VALIDATION_FAILED', 'body.amount must be >= 1'],
      [{ ...ok, amount: 1.5 }, 400, 'VALIDATION_FAILED', 'body.amount must be integer'],
      [{ ...ok, amount: '100' }, 400, 'VALIDATION_FAILED', 'body.amount must be integer'],
      [{ ...ok, currency: 'kes' }, 400, 'VALIDATION_FAILED', 'body.currency must match pattern "^[A-Z]{3}$"'],
      [{ ...ok, currency: 'XYZ' }, 400, 'UNKNOWN_CURRENCY', 'body.currency XYZ is not the currency of any country'],
      [
        { ...ok, currency: 'UGX' },
        400,
        'CURRENCY_MISMATCH',
        "body.currency must be KES, the currency of the driver's country (got UGX)",
      ],
      [{ ...ok, reference: '' }, 400, 'VALIDATION_FAILED', 'body.reference must NOT have fewer than 1 characters'],
      [{ ...ok, driverId: 'nope' }, 400, 'VALIDATION_FAILED', 'body.driverId must be a valid uuid'],
      [{ ...ok, extra: 1 }, 400, 'VALIDATION_FAILED', 'body has an unknown property "extra"'],
      [{ ...ok, driverId: randomUUID() }, 404, 'DRIVER_NOT_FOUND', 'Driver not found'],
      [{ ...ok, driverId: business.id }, 404, 'DRIVER_NOT_FOUND', 'Driver not found'],
    ];
    for (const [body, status, code, message] of cases) {
      const res = await call('POST', '/admin/settlements', body);
      assert.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().code, code, JSON.stringify(body));
      assert.equal(res.json().message, message, JSON.stringify(body));
    }
    assert.equal(await balanceOf(t, 'DRIVER', driver.id), -10_000, 'nothing was booked');
  });

  test('a business payment credits the business; paying more than it owes leaves a credit', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const business = await createUser(t, { role: 'BUSINESS' });
    await earn(t, driver.id, business.id, 30_000);
    assert.equal(await balanceOf(t, 'BUSINESS', business.id), -30_000);
    const res = await call('POST', '/admin/business-payments', {
      businessId: business.id,
      amount: 30_000,
      currency: 'KES',
      reference: 'INV-2024-05 bank transfer',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().businessId, business.id);
    assert.equal(res.json().balance, 0);
    const over = await call('POST', '/admin/business-payments', {
      businessId: business.id,
      amount: 500,
      currency: 'KES',
      reference: 'prepaid',
    });
    assert.equal(over.statusCode, 201);
    assert.equal(over.json().balance, 500);
    assert.equal(await t.services.ledger.balance('KES', { kind: 'OPERATOR_BANK' }), -30_500);
    const wrong = [
      [{ businessId: driver.id, amount: 1, currency: 'KES', reference: 'R' }, 404, 'Business not found'],
      [
        { businessId: business.id, amount: 1, currency: 'NGN', reference: 'R' },
        400,
        "body.currency must be KES, the currency of the business's country (got NGN)",
      ],
      [{ businessId: business.id, amount: 0, currency: 'KES', reference: 'R' }, 400, 'body.amount must be >= 1'],
    ] as const;
    for (const [body, status, message] of wrong) {
      const r = await call('POST', '/admin/business-payments', body);
      assert.equal(r.statusCode, status, r.body);
      assert.equal(r.json().message, message);
    }
    await assertBooks(t);
  });

  test('GET /admin/balances: every non-zero account with its name, newest first, by currency, paginated', async () => {
    const ug = await createUser(t, { role: 'DRIVER', countryCode: 'UG', firstName: 'Okello', lastName: 'Peter' });
    const ugBusiness = await createUser(t, { role: 'BUSINESS', countryCode: 'UG', businessName: 'Kampala Parcels' });
    await earn(t, ug.id, ugBusiness.id, 5000, 'UGX');
    const res = await call('GET', '/admin/balances?currency=UGX&limit=1');
    assert.equal(res.statusCode, 200, res.body);
    const first = res.json();
    assert.equal(first.items.length, 1);
    const second = (await call('GET', `/admin/balances?currency=UGX&limit=1&cursor=${first.nextCursor}`)).json();
    assert.equal(second.nextCursor, null);
    const all = [...first.items, ...second.items];
    const byKind: Record<string, { name: string; balance: number }> = Object.fromEntries(
      all.map((a: { partyKind: string; name: string; balance: number }) => [a.partyKind, a]),
    );
    assert.deepEqual(Object.keys(byKind).sort(), ['BUSINESS', 'DRIVER']);
    assert.deepEqual(
      { ...byKind.DRIVER, accountId: undefined },
      {
        accountId: undefined,
        partyKind: 'DRIVER',
        partyId: ug.id,
        name: 'Okello Peter',
        currency: 'UGX',
        balance: 5000,
      },
    );
    assert.equal(byKind.BUSINESS.name, 'Kampala Parcels');
    assert.equal(byKind.BUSINESS.balance, -5000);
    // The operator's own accounts are listed too, without a party.
    const kes = [];
    let cursor: string | null = null;
    do {
      const page: {
        items: { partyKind: string; partyId: string | null; name: string | null; balance: number }[];
        nextCursor: string | null;
      } = (await call('GET', `/admin/balances?currency=KES&limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json();
      kes.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    assert.ok(kes.every((a) => a.balance !== 0));
    const cash = kes.find((a) => a.partyKind === 'OPERATOR_CASH');
    assert.deepEqual(cash && { partyId: cash.partyId, name: cash.name }, { partyId: null, name: null });
    assert.equal((await call('GET', '/admin/balances?cursor=garbage')).statusCode, 400);
  });

  test('only an admin may record money or read balances (403 for every other role, 401 without a token)', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const business = await createUser(t, { role: 'BUSINESS' });
    for (const role of ['CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY'] as const) {
      const other = await createUser(t, { role });
      for (const [method, url, body] of [
        ['GET', '/admin/balances', undefined],
        ['POST', '/admin/settlements', { driverId: driver.id, amount: 1, currency: 'KES', reference: 'R' }],
        ['POST', '/admin/business-payments', { businessId: business.id, amount: 1, currency: 'KES', reference: 'R' }],
      ] as const) {
        const res = await call(method, url, body, other.headers);
        assert.equal(res.statusCode, 403, `${role} ${method} ${url}`);
        assert.equal(res.json().error, 'Forbidden');
      }
    }
    assert.equal((await call('GET', '/admin/balances', undefined, {})).statusCode, 401);
    assert.equal(await balanceOf(t, 'BUSINESS', business.id), 0);
  });
});
