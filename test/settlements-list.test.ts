// GET /admin/settlements and /admin/business-payments (contract section 21): what admins recorded,
// newest first, paged, by party and currency; admins only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { caller, collectCash, earn, type Call } from './payouts-helpers.js';

interface Listed {
  id: string;
  amount: number;
  currency: string;
  reference: string;
  createdAt: string;
  transactionId: string;
  [party: string]: unknown;
}

describe('lists of settlements and business payments', () => {
  let t: TestApp;
  let admin: TestUser;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    admin = await createUser(t, { role: 'ADMIN', firstName: 'Ada', lastName: 'Admin' });
    call = caller(t, admin);
  });
  after(async () => t.close());

  /** Every item of the list, page by page (limit per page), and the pages' sizes. */
  async function walk(url: string, limit: number): Promise<{ items: Listed[]; sizes: number[] }> {
    const items: Listed[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(
        'GET',
        `${url}${url.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json() as { items: Listed[]; nextCursor: string | null };
      items.push(...page.items);
      sizes.push(page.items.length);
      cursor = page.nextCursor;
    } while (cursor);
    return { items, sizes };
  }

  test("a driver's settlements, newest first, paged by the cursor, with the driver's and the admin's names", async () => {
    const driver = await createUser(t, { role: 'DRIVER', firstName: 'Amina', lastName: 'Wanjiru' });
    await collectCash(t, driver.id, 100_000); // owes 20,000
    const recorded: { id: string; transactionId: string; createdAt: string }[] = [];
    for (const [amount, reference, advance] of [
      [1000, 'RCPT-1', 1000],
      [2000, 'RCPT-2', 1000],
      [3000, 'RCPT-3', 0],
      [4000, 'RCPT-4', 0],
      [500, 'RCPT-5', 1000],
    ] as const) {
      t.clock.advance(advance); // RCPT-2, 3 and 4 share an instant: the id orders them
      const res = await call('POST', '/admin/settlements', { driverId: driver.id, amount, currency: 'KES', reference });
      assert.equal(res.statusCode, 201, res.body);
      recorded.push(res.json());
    }
    const { items, sizes } = await walk(`/admin/settlements?driverId=${driver.id}`, 2);
    assert.deepEqual(sizes, [2, 2, 1]);
    const expected = [...recorded].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
    );
    assert.deepEqual(
      items.map((i) => i.id),
      expected.map((r) => r.id),
    );
    assert.equal(items[0]!.reference, 'RCPT-5');
    const first = recorded[0]!;
    assert.deepEqual(items.at(-1), {
      id: first.id,
      driverId: driver.id,
      driverName: 'Amina Wanjiru',
      amount: 1000,
      currency: 'KES',
      reference: 'RCPT-1',
      recordedBy: admin.id,
      recordedByName: 'Ada Admin',
      transactionId: first.transactionId,
      createdAt: first.createdAt,
    });
    // The transaction it names is the ledger's settlement of it.
    const tx = await t.db
      .selectFrom('ledger_transactions')
      .select(['source_key', 'memo'])
      .where('id', '=', first.transactionId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(tx, { source_key: `settlement:${first.id}`, memo: 'RCPT-1' });
    // The default page is 20, newest first across drivers.
    const all = (await call('GET', '/admin/settlements')).json();
    assert.equal(all.items[0].id, items[0]!.id);
    assert.equal(all.nextCursor, null);
  });

  test('filters: by driver and by currency; a driver with none, or a currency with none, is an empty page', async () => {
    const kenyan = await createUser(t, { role: 'DRIVER' });
    const ugandan = await createUser(t, { role: 'DRIVER', countryCode: 'UG', firstName: 'Okello', lastName: 'Peter' });
    await collectCash(t, kenyan.id, 10_000);
    await collectCash(t, ugandan.id, 10_000, 'UGX');
    t.clock.advance(1000);
    assert.equal(
      (await call('POST', '/admin/settlements', { driverId: kenyan.id, amount: 100, currency: 'KES', reference: 'K' }))
        .statusCode,
      201,
    );
    assert.equal(
      (await call('POST', '/admin/settlements', { driverId: ugandan.id, amount: 200, currency: 'UGX', reference: 'U' }))
        .statusCode,
      201,
    );
    const ugx = (await walk('/admin/settlements?currency=UGX', 100)).items;
    assert.deepEqual(
      ugx.map((i) => [i.driverId, i.driverName, i.amount, i.currency]),
      [[ugandan.id, 'Okello Peter', 200, 'UGX']],
    );
    const kes = (await walk('/admin/settlements?currency=KES', 100)).items;
    assert.ok(kes.length > 1 && kes.every((i) => i.currency === 'KES'));
    assert.deepEqual(
      (await walk(`/admin/settlements?driverId=${kenyan.id}`, 100)).items.map((i) => i.reference),
      ['K'],
    );
    for (const url of [
      `/admin/settlements?driverId=${kenyan.id}&currency=UGX`,
      `/admin/settlements?driverId=${admin.id}`,
      '/admin/settlements?currency=XYZ',
    ]) {
      const res = await call('GET', url);
      assert.equal(res.statusCode, 200, url);
      assert.deepEqual(res.json(), { items: [], nextCursor: null }, url);
    }
  });

  test("business payments: newest first, paged, by business and currency, with the business's trading name", async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const shop = await createUser(t, { role: 'BUSINESS', businessName: '=1+1 <b>Duka</b>' });
    const other = await createUser(t, { role: 'BUSINESS', countryCode: 'UG', businessName: 'Kampala Parcels' });
    await earn(t, driver.id, shop.id, 50_000);
    const ids: string[] = [];
    for (const reference of ['BANK-1', 'BANK-2', 'BANK-3']) {
      t.clock.advance(1000);
      const res = await call('POST', '/admin/business-payments', {
        businessId: shop.id,
        amount: 10_000,
        currency: 'KES',
        reference,
      });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
    t.clock.advance(1000);
    const ug = await call('POST', '/admin/business-payments', {
      businessId: other.id,
      amount: 7000,
      currency: 'UGX',
      reference: 'MM-7',
    });
    assert.equal(ug.statusCode, 201, ug.body);
    const { items, sizes } = await walk(`/admin/business-payments?businessId=${shop.id}`, 2);
    assert.deepEqual(sizes, [2, 1]);
    assert.deepEqual(
      items.map((i) => i.id),
      [...ids].reverse(),
    );
    const { createdAt, transactionId, ...rest } = items[0]!;
    assert.ok(createdAt && transactionId);
    assert.deepEqual(rest, {
      id: ids[2],
      businessId: shop.id,
      businessName: '=1+1 <b>Duka</b>',
      amount: 10_000,
      currency: 'KES',
      reference: 'BANK-3',
      recordedBy: admin.id,
      recordedByName: 'Ada Admin',
    });
    const all = (await walk('/admin/business-payments', 100)).items;
    assert.deepEqual(
      all.map((i) => i.reference),
      ['MM-7', 'BANK-3', 'BANK-2', 'BANK-1'],
    );
    assert.deepEqual(
      (await walk('/admin/business-payments?currency=UGX', 100)).items.map((i) => [i.businessName, i.amount]),
      [['Kampala Parcels', 7000]],
    );
    assert.deepEqual((await call('GET', `/admin/business-payments?businessId=${other.id}&currency=KES`)).json(), {
      items: [],
      nextCursor: null,
    });
  });

  test('CSV with Accept: text/csv (or format=csv): the same page as the JSON, names and references neutralised, the next cursor in X-Next-Cursor', async () => {
    const driver = await createUser(t, { role: 'DRIVER', firstName: '=HYPERLINK("http://x")', lastName: 'Kamau' });
    await collectCash(t, driver.id, 100_000);
    const recorded: { id: string; transactionId: string; createdAt: string }[] = [];
    for (const reference of ['RCPT-A', '@SUM(1+1)']) {
      t.clock.advance(1000);
      const res = await call('POST', '/admin/settlements', {
        driverId: driver.id,
        amount: 1234,
        currency: 'KES',
        reference,
      });
      assert.equal(res.statusCode, 201, res.body);
      recorded.push(res.json());
    }
    const [older, newer] = recorded as [(typeof recorded)[0], (typeof recorded)[0]];
    const header = 'id,createdAt,driverId,driverName,amount,currency,reference,recordedBy,recordedByName,transactionId';
    const row = (r: typeof older, reference: string) =>
      `${r.id},${r.createdAt},${driver.id},"'=HYPERLINK(""http://x"") Kamau",1234,KES,${reference},${admin.id},Ada Admin,${r.transactionId}`;
    const first = await call('GET', `/admin/settlements?driverId=${driver.id}&limit=1`, undefined, {
      ...admin.headers,
      accept: 'text/csv',
    });
    assert.equal(first.statusCode, 200, first.body);
    assert.match(first.headers['content-type'] as string, /^text\/csv; charset=utf-8/);
    assert.equal(first.headers['content-disposition'], 'attachment; filename="settlements.csv"');
    assert.equal(first.body, `${header}\r\n${row(newer, "'@SUM(1+1)")}\r\n`);
    const cursor = first.headers['x-next-cursor'] as string;
    assert.equal(cursor, (await call('GET', `/admin/settlements?driverId=${driver.id}&limit=1`)).json().nextCursor);
    const second = await call('GET', `/admin/settlements?driverId=${driver.id}&limit=1&cursor=${cursor}&format=csv`);
    assert.equal(second.body, `${header}\r\n${row(older, 'RCPT-A')}\r\n`);
    assert.equal(second.headers['x-next-cursor'], undefined);
    // format=json wins over the Accept header; a bad cursor is the same 400 as for JSON.
    assert.equal(
      (
        await call('GET', `/admin/settlements?driverId=${driver.id}&format=json`, undefined, {
          ...admin.headers,
          accept: 'text/csv',
        })
      ).json().items.length,
      2,
    );
    assert.equal((await call('GET', '/admin/settlements?cursor=garbage&format=csv')).json().code, 'INVALID_CURSOR');

    const shop = await createUser(t, { role: 'BUSINESS', businessName: '-2+3 Duka; =cmd' });
    await earn(t, driver.id, shop.id, 50_000);
    t.clock.advance(1000);
    const paid = await call('POST', '/admin/business-payments', {
      businessId: shop.id,
      amount: 700,
      currency: 'KES',
      reference: 'BANK,7',
    });
    assert.equal(paid.statusCode, 201, paid.body);
    const p = paid.json();
    const csv = await call('GET', `/admin/business-payments?businessId=${shop.id}`, undefined, {
      ...admin.headers,
      accept: 'text/csv',
    });
    assert.equal(csv.headers['content-disposition'], 'attachment; filename="business-payments.csv"');
    assert.equal(
      csv.body,
      'id,createdAt,businessId,businessName,amount,currency,reference,recordedBy,recordedByName,transactionId\r\n' +
        `${p.id},${p.createdAt},${shop.id},'-2+3 Duka;' =cmd,700,KES,"BANK,7",${admin.id},Ada Admin,${p.transactionId}\r\n`,
    );
    assert.equal(
      (await call('GET', `/admin/business-payments?businessId=${driver.id}&format=csv`)).body,
      'id,createdAt,businessId,businessName,amount,currency,reference,recordedBy,recordedByName,transactionId\r\n',
    );
  });

  test('bad queries are 400 in the error shape', async () => {
    const cases: [string, string, string][] = [
      ['/admin/settlements?limit=0', 'VALIDATION_FAILED', 'querystring.limit must be >= 1'],
      ['/admin/settlements?limit=101', 'VALIDATION_FAILED', 'querystring.limit must be <= 100'],
      ['/admin/settlements?cursor=garbage', 'INVALID_CURSOR', 'Invalid cursor'],
      ['/admin/settlements?driverId=nope', 'VALIDATION_FAILED', 'querystring.driverId must be a valid uuid'],
      ['/admin/settlements?currency=kes', 'VALIDATION_FAILED', 'querystring.currency must match pattern "^[A-Z]{3}$"'],
      [
        '/admin/settlements?businessId=3f1c2f0e-7a4b-4d2c-9e1f-0a1b2c3d4e5f',
        'VALIDATION_FAILED',
        'querystring has an unknown property "businessId"',
      ],
      ['/admin/business-payments?limit=abc', 'VALIDATION_FAILED', 'querystring.limit must be integer'],
      ['/admin/business-payments?cursor=garbage', 'INVALID_CURSOR', 'Invalid cursor'],
      ['/admin/business-payments?businessId=nope', 'VALIDATION_FAILED', 'querystring.businessId must be a valid uuid'],
      [
        '/admin/business-payments?currency=EURO',
        'VALIDATION_FAILED',
        'querystring.currency must match pattern "^[A-Z]{3}$"',
      ],
      [
        '/admin/business-payments?driverId=3f1c2f0e-7a4b-4d2c-9e1f-0a1b2c3d4e5f',
        'VALIDATION_FAILED',
        'querystring has an unknown property "driverId"',
      ],
    ];
    for (const [url, code, message] of cases) {
      const res = await call('GET', url);
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.deepEqual(res.json(), { statusCode: 400, error: 'Bad Request', code, message }, url);
    }
  });

  test('only an admin may read them: 403 for every other role, 401 without a token', async () => {
    for (const role of ['CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY'] as const) {
      const other = await createUser(t, { role });
      for (const url of ['/admin/settlements', '/admin/business-payments']) {
        const res = await call('GET', url, undefined, other.headers);
        assert.equal(res.statusCode, 403, `${role} ${url}`);
        assert.equal(res.json().error, 'Forbidden');
        assert.equal(res.json().statusCode, 403);
      }
    }
    for (const url of ['/admin/settlements', '/admin/business-payments'])
      assert.equal((await call('GET', url, undefined, {})).statusCode, 401);
  });
});
