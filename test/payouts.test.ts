// Payout batches through the API (contract section 21): who is in a batch, the bank file, paid and
// failed lines, and random sequences of all of section 21's admin flows keeping the books right.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { assertBooks, balanceOf, caller, cashOnDelivery, collectCash, earn, type Call } from './payouts-helpers.js';

describe('payout batches', () => {
  let t: TestApp;
  let admin: TestUser;
  let call: Call;
  let key = 0;
  const createBatch = (body: object) => (
    t.clock.advance(1000),
    call('POST', '/admin/payouts', body, { ...admin.headers, 'idempotency-key': `batch-${(key += 1)}` })
  );
  /** Settles every open KES line, so that each test starts from no open batch. */
  const closeOpenBatches = async () => {
    const page = (await call('GET', '/admin/payouts?limit=100')).json();
    for (const b of page.items)
      if (b.status === 'OPEN') assert.equal((await call('POST', `/admin/payouts/${b.id}/paid`)).statusCode, 200);
  };

  before(async () => {
    t = await buildTestApp();
    admin = await createUser(t, { role: 'ADMIN' });
    call = caller(t, admin);
  });
  after(async () => t.close());

  test('a batch pays every driver and business owed at least the minimum, once; the accounts it took are left out of the next', async () => {
    await closeOpenBatches();
    const [rich, poor, owing] = [
      await createUser(t, { role: 'DRIVER' }),
      await createUser(t, { role: 'DRIVER' }),
      await createUser(t, { role: 'DRIVER' }),
    ];
    const shop = await createUser(t, { role: 'BUSINESS', businessName: 'Shop' });
    const payer = await createUser(t, { role: 'BUSINESS' });
    await earn(t, rich.id, payer.id, 12_000);
    await earn(t, poor.id, payer.id, 400);
    await collectCash(t, owing.id, 10_000);
    await cashOnDelivery(t, rich.id, shop.id, 3000); // rich: 9,000; shop: 3,000
    const res = await createBatch({ currency: 'KES', minimum: 1000 });
    assert.equal(res.statusCode, 201, res.body);
    const batch = res.json();
    const lines = (await call('GET', `/admin/payouts/${batch.id}/lines?limit=100`)).json().items;
    const ours = lines.filter((l: { partyId: string }) => [rich.id, poor.id, owing.id, shop.id].includes(l.partyId));
    assert.deepEqual(
      ours
        .map((l: { partyId: string; amount: number; amountMajor: string; status: string; partyKind: string }) => [
          l.partyKind,
          l.partyId,
          l.amount,
          l.amountMajor,
          l.status,
        ])
        .sort(),
      [
        ['BUSINESS', shop.id, 3000, '30.00', 'OPEN'],
        ['DRIVER', rich.id, 9000, '90.00', 'OPEN'],
      ].sort(),
    );
    assert.equal(
      batch.total,
      lines.reduce((s: number, l: { amount: number }) => s + l.amount, 0),
    );
    assert.equal(batch.lineCount, lines.length);
    assert.equal(batch.status, 'OPEN');
    assert.equal(await balanceOf(t, 'DRIVER', rich.id), 0);
    assert.equal(await balanceOf(t, 'DRIVER', poor.id), 400, 'under the minimum: not paid');
    // The driver earns again while the line is open: not in the next batch.
    await earn(t, rich.id, payer.id, 5000);
    const next = await createBatch({ currency: 'KES', minimum: 100 });
    assert.equal(next.statusCode, 201, next.body);
    const nextLines = (await call('GET', `/admin/payouts/${next.json().id}/lines?limit=100`)).json().items;
    assert.deepEqual(
      nextLines
        .map((l: { partyId: string }) => l.partyId)
        .filter((id: string) => [rich.id, shop.id, poor.id].includes(id)),
      [poor.id],
    );
    assert.equal(await balanceOf(t, 'DRIVER', rich.id), 5000);
    // Nothing left to pay: 409, and no empty batch.
    const before = (await call('GET', '/admin/payouts?limit=100')).json().items.length;
    const none = await createBatch({ currency: 'KES', minimum: 1_000_000_000 });
    assert.equal(none.statusCode, 409);
    assert.equal(none.json().code, 'PAYOUT_NOTHING_TO_PAY');
    assert.equal((await call('GET', '/admin/payouts?limit=100')).json().items.length, before);
    await assertBooks(t);
  });

  test('Idempotency-Key: the same request again returns the same batch; the key with another body is 422', async () => {
    await closeOpenBatches();
    const driver = await createUser(t, { role: 'DRIVER' });
    await earn(t, driver.id, (await createUser(t, { role: 'BUSINESS' })).id, 700);
    const headers = { ...admin.headers, 'idempotency-key': 'weekly-2024-20' };
    const first = await call('POST', '/admin/payouts', { currency: 'KES' }, headers);
    const again = await call('POST', '/admin/payouts', { currency: 'KES' }, headers);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, first.json().id);
    const other = await call('POST', '/admin/payouts', { currency: 'KES', minimum: 5 }, headers);
    assert.equal(other.statusCode, 422);
  });

  test('without an Idempotency-Key a batch is refused (400 IDEMPOTENCY_KEY_REQUIRED) and nothing is created', async () => {
    await closeOpenBatches();
    const driver = await createUser(t, { role: 'DRIVER' });
    await earn(t, driver.id, (await createUser(t, { role: 'BUSINESS' })).id, 900);
    const before = (await call('GET', '/admin/payouts?limit=100')).json().items.length;
    const res = await call('POST', '/admin/payouts', { currency: 'KES' }, admin.headers);
    assert.deepEqual(res.json(), {
      statusCode: 400,
      message: 'This request needs an Idempotency-Key header: repeated without one, it would run twice',
      error: 'Bad Request',
      code: 'IDEMPOTENCY_KEY_REQUIRED',
    });
    assert.equal((await call('GET', '/admin/payouts?limit=100')).json().items.length, before);
    const empty = await call(
      'POST',
      '/admin/payouts',
      { currency: 'KES' },
      { ...admin.headers, 'idempotency-key': '' },
    );
    assert.equal(empty.json().code, 'INVALID_IDEMPOTENCY_KEY');
    // With a key it is paid out (and the next test's closeOpenBatches settles it).
    assert.equal((await createBatch({ currency: 'KES' })).statusCode, 201);
  });

  test("the bank file: name, E.164 phone, major units with the currency's decimals, currency, reference; names cannot start a formula", async () => {
    await closeOpenBatches();
    const ke = await createUser(t, {
      role: 'DRIVER',
      firstName: '=HYPERLINK("http://x")',
      lastName: 'Otieno',
      phone: '+254711000001',
    });
    const business = await createUser(t, { role: 'BUSINESS' });
    await earn(t, ke.id, business.id, 123_456);
    const batch = (await createBatch({ currency: 'KES' })).json();
    const csv = await call('GET', `/admin/payouts/${batch.id}`, undefined, { ...admin.headers, accept: 'text/csv' });
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(csv.headers['content-type'] as string, /^text\/csv/);
    assert.equal(csv.headers['content-disposition'], `attachment; filename="payout-${batch.number}-KES.csv"`);
    const rows = csv.body.split('\r\n');
    assert.equal(rows[0], 'name,phone,amount,currency,reference');
    assert.ok(
      rows.includes(`"'=HYPERLINK(""http://x"") Otieno",+254711000001,1234.56,KES,PO-${batch.number}-00001`),
      csv.body,
    );

    // UGX has no minor unit: amounts are whole shillings.
    const ug = await createUser(t, {
      role: 'DRIVER',
      countryCode: 'UG',
      firstName: 'Akello',
      lastName: 'Grace',
      phone: '+256772000001',
    });
    await earn(t, ug.id, (await createUser(t, { role: 'BUSINESS', countryCode: 'UG' })).id, 50_000, 'UGX');
    const ugBatch = (await createBatch({ currency: 'UGX' })).json();
    assert.equal(ugBatch.totalMajor, '50000');
    const ugCsv = await call('GET', `/admin/payouts/${ugBatch.id}?format=csv`);
    assert.equal(
      ugCsv.body,
      `name,phone,amount,currency,reference\r\nAkello Grace,+256772000001,50000,UGX,PO-${ugBatch.number}-00001\r\n`,
    );
    // Once paid, the file is empty: downloading it again can never pay twice.
    await call('POST', `/admin/payouts/${ugBatch.id}/paid`);
    assert.equal(
      (await call('GET', `/admin/payouts/${ugBatch.id}?format=csv`)).body,
      'name,phone,amount,currency,reference\r\n',
    );
  });

  test('paid closes the batch; a failed line returns its amount (once); a paid line cannot fail', async () => {
    await closeOpenBatches();
    const [a, b] = [await createUser(t, { role: 'DRIVER' }), await createUser(t, { role: 'DRIVER' })];
    const business = await createUser(t, { role: 'BUSINESS' });
    await earn(t, a.id, business.id, 2000);
    await earn(t, b.id, business.id, 3000);
    const batch = (await createBatch({ currency: 'KES' })).json();
    const lines = (await call('GET', `/admin/payouts/${batch.id}/lines?limit=100`)).json().items;
    const lineOf = (id: string) => lines.find((l: { partyId: string }) => l.partyId === id);
    const failUrl = `/admin/payouts/${batch.id}/lines/${lineOf(a.id).id}/failed`;

    const failed = await call('POST', failUrl, { reason: 'Number not registered for mobile money' });
    assert.equal(failed.statusCode, 200, failed.body);
    assert.equal(failed.json().status, 'FAILED');
    assert.equal(failed.json().failureReason, 'Number not registered for mobile money');
    assert.equal(await balanceOf(t, 'DRIVER', a.id), 2000, 'the amount is back');
    const twice = await call('POST', failUrl);
    assert.equal(twice.statusCode, 200);
    assert.equal(twice.json().status, 'FAILED');
    assert.equal(await balanceOf(t, 'DRIVER', a.id), 2000, 'returned once');

    const paid = await call('POST', `/admin/payouts/${batch.id}/paid`);
    assert.equal(paid.statusCode, 200);
    assert.equal(paid.json().status, 'CLOSED');
    assert.deepEqual(paid.json().lines.FAILED, { lines: 1, amount: 2000 });
    assert.equal(paid.json().lines.OPEN.lines, 0);
    const bank = await t.services.ledger.balance('KES', { kind: 'OPERATOR_BANK' });
    const paidAgain = await call('POST', `/admin/payouts/${batch.id}/paid`);
    assert.equal(paidAgain.statusCode, 200);
    assert.equal(await t.services.ledger.balance('KES', { kind: 'OPERATOR_BANK' }), bank, 'paid again books nothing');

    const late = await call('POST', `/admin/payouts/${batch.id}/lines/${lineOf(b.id).id}/failed`);
    assert.equal(late.statusCode, 409);
    assert.deepEqual(late.json(), {
      statusCode: 409,
      error: 'Conflict',
      code: 'PAYOUT_LINE_PAID',
      message: 'This payout line was paid: it cannot fail',
    });
    assert.equal(
      (await call('POST', `/admin/payouts/${batch.id}/lines/${randomUUID()}/failed`)).json().code,
      'PAYOUT_LINE_NOT_FOUND',
    );
    assert.equal((await call('POST', `/admin/payouts/${randomUUID()}/paid`)).statusCode, 404);
    assert.equal((await call('GET', `/admin/payouts/${randomUUID()}`)).statusCode, 404);
    assert.equal((await call('GET', '/admin/payouts/not-a-uuid')).statusCode, 400);
    // The failed amount is paid in the next batch.
    const next = (await createBatch({ currency: 'KES' })).json();
    const again = (await call('GET', `/admin/payouts/${next.id}/lines?limit=100`)).json().items;
    assert.equal(again.find((l: { partyId: string }) => l.partyId === a.id)?.amount, 2000);
    await assertBooks(t);
  });

  test('bad batch requests are 400s; lines and batches paginate', async () => {
    for (const [body, message] of [
      [{ currency: 'XYZ' }, 'body.currency XYZ is not the currency of any country'],
      [{ currency: 'KES', minimum: 0 }, 'body.minimum must be >= 1'],
      [{ currency: 'KES', minimum: 2.5 }, 'body.minimum must be integer'],
      [{}, 'body.currency is required'],
    ] as const) {
      const res = await createBatch(body);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().message, message);
    }
    await closeOpenBatches();
    const business = await createUser(t, { role: 'BUSINESS' });
    for (let i = 0; i < 5; i++) await earn(t, (await createUser(t, { role: 'DRIVER' })).id, business.id, 100 + i);
    const batch = (await createBatch({ currency: 'KES' })).json();
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { seq: number }[]; nextCursor: string | null } = (
        await call('GET', `/admin/payouts/${batch.id}/lines?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      seen.push(...page.items.map((l) => l.seq));
      cursor = page.nextCursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      Array.from({ length: batch.lineCount }, (_, i) => i + 1),
    );
    const list = (await call('GET', '/admin/payouts?currency=KES&limit=1')).json();
    assert.equal(list.items[0].id, batch.id, 'newest first');
    assert.notEqual(list.nextCursor, null);
    assert.equal((await call('GET', `/admin/payouts/${batch.id}/lines?cursor=xyz`)).statusCode, 400);
  });

  test('only an admin may see or change payouts (403 for every other role)', async () => {
    const id = randomUUID();
    for (const role of ['CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY'] as const) {
      const other = await createUser(t, { role });
      for (const [method, url, body] of [
        ['POST', '/admin/payouts', { currency: 'KES' }],
        ['GET', '/admin/payouts', undefined],
        ['GET', `/admin/payouts/${id}`, undefined],
        ['GET', `/admin/payouts/${id}/lines`, undefined],
        ['POST', `/admin/payouts/${id}/paid`, undefined],
        ['POST', `/admin/payouts/${id}/lines/${id}/failed`, undefined],
      ] as const) {
        const res = await call(method, url, body, other.headers);
        assert.equal(res.statusCode, 403, `${role} ${method} ${url}: ${res.body}`);
      }
    }
  });

  test('property: random earnings, cash, settlements, business payments, batches, paid and failed lines keep the books right', async () => {
    const drivers = [
      await createUser(t, { role: 'DRIVER' }),
      await createUser(t, { role: 'DRIVER' }),
      await createUser(t, { role: 'DRIVER' }),
    ];
    const businesses = [await createUser(t, { role: 'BUSINESS' }), await createUser(t, { role: 'BUSINESS' })];
    const amount = fc.integer({ min: 1, max: 50_000 });
    const op = fc.oneof(
      fc.record({ kind: fc.constant('earn' as const), d: fc.nat(2), b: fc.nat(1), amount }),
      fc.record({ kind: fc.constant('cash' as const), d: fc.nat(2), amount }),
      fc.record({ kind: fc.constant('cod' as const), d: fc.nat(2), b: fc.nat(1), amount }),
      fc.record({ kind: fc.constant('settle' as const), d: fc.nat(2), amount }),
      fc.record({ kind: fc.constant('pay' as const), b: fc.nat(1), amount }),
      fc.record({ kind: fc.constant('batch' as const), minimum: fc.integer({ min: 1, max: 20_000 }) }),
      fc.record({ kind: fc.constant('paid' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('fail' as const), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        for (const o of ops) {
          if (o.kind === 'earn') await earn(t, drivers[o.d]!.id, businesses[o.b]!.id, o.amount);
          else if (o.kind === 'cash') await collectCash(t, drivers[o.d]!.id, o.amount);
          else if (o.kind === 'cod') await cashOnDelivery(t, drivers[o.d]!.id, businesses[o.b]!.id, o.amount);
          else if (o.kind === 'settle') {
            const owed = -(await balanceOf(t, 'DRIVER', drivers[o.d]!.id));
            const res = await call('POST', '/admin/settlements', {
              driverId: drivers[o.d]!.id,
              amount: o.amount,
              currency: 'KES',
              reference: 'p',
            });
            assert.equal(res.statusCode, o.amount <= owed ? 201 : 409, res.body);
          } else if (o.kind === 'pay') {
            assert.equal(
              (
                await call('POST', '/admin/business-payments', {
                  businessId: businesses[o.b]!.id,
                  amount: o.amount,
                  currency: 'KES',
                  reference: 'p',
                })
              ).statusCode,
              201,
            );
          } else if (o.kind === 'batch') {
            const res = await createBatch({ currency: 'KES', minimum: o.minimum });
            assert.ok(res.statusCode === 201 || res.json().code === 'PAYOUT_NOTHING_TO_PAY', res.body);
          } else {
            const open = (await call('GET', '/admin/payouts?currency=KES&limit=100'))
              .json()
              .items.filter((b: { status: string }) => b.status === 'OPEN');
            if (!open.length) continue;
            const batch = open[o.pick % open.length];
            if (o.kind === 'paid')
              assert.equal((await call('POST', `/admin/payouts/${batch.id}/paid`)).statusCode, 200);
            else {
              const lines = (await call('GET', `/admin/payouts/${batch.id}/lines?status=OPEN&limit=100`)).json().items;
              if (lines.length)
                assert.equal(
                  (await call('POST', `/admin/payouts/${batch.id}/lines/${lines[o.pick % lines.length].id}/failed`))
                    .statusCode,
                  200,
                );
            }
          }
        }
        await assertBooks(t);
      }),
      { numRuns: 15 },
    );
  });

  test('paid and failed honour Idempotency-Key: a replay is the stored answer, another body 422', async () => {
    await closeOpenBatches();
    const driver = await createUser(t, { role: 'DRIVER' });
    await earn(t, driver.id, (await createUser(t, { role: 'BUSINESS' })).id, 800);
    const batch = (await createBatch({ currency: 'KES' })).json();
    const line = (await call('GET', `/admin/payouts/${batch.id}/lines?limit=100`))
      .json()
      .items.find((l: { partyId: string }) => l.partyId === driver.id);
    const failUrl = `/admin/payouts/${batch.id}/lines/${line.id}/failed`;
    const keyed = { ...admin.headers, 'idempotency-key': `fail-${line.id}` };
    const failed = await call('POST', failUrl, { reason: 'Wrong number' }, keyed);
    assert.equal(failed.statusCode, 200, failed.body);
    const again = await call('POST', failUrl, { reason: 'Wrong number' }, keyed);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), failed.json());
    assert.equal((await call('POST', failUrl, { reason: 'Other' }, keyed)).json().code, 'IDEMPOTENCY_KEY_REUSED');
    const paidHeaders = { ...admin.headers, 'idempotency-key': `paid-${batch.id}` };
    const paid = await call('POST', `/admin/payouts/${batch.id}/paid`, undefined, paidHeaders);
    assert.equal(paid.statusCode, 200, paid.body);
    const paidAgain = await call('POST', `/admin/payouts/${batch.id}/paid`, undefined, paidHeaders);
    assert.equal(paidAgain.headers['idempotent-replayed'], 'true');
    assert.deepEqual(paidAgain.json(), paid.json());
  });
});
