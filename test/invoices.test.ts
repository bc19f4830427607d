// Business invoices (contract section 21): the monthly run, its numbers and totals against the
// ledger, JSON and PDF, who may read which invoice.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import {
  cancellationFeeEntries,
  cashOnDeliveryEntries,
  jobCompletedEntries,
  tipEntries,
} from '../src/modules/ledger/postings.js';
import { ManualClock } from '../src/shared/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { countryId, createUser, type TestUser } from './helpers/factories.js';
import { packageBody } from './packages-helpers.js';
import { assertBooks, earn } from './payouts-helpers.js';

const run = promisify(execFile);
const at = (iso: string) => new Date(iso);

describe('business invoices', () => {
  let t: TestApp;
  let admin: TestUser;
  let hostile: TestUser; // "=1+1 <b>Shop</b>": invoiced first (sorted by name)
  let zebra: TestUser;
  let driver: TestUser;
  let packageId: string;
  let dir: string;

  /** As `user` at the clock's time (the manual clock moves across months: a token is signed for now). */
  const call = async (
    method: 'GET' | 'POST',
    url: string,
    user: TestUser,
    payload?: object,
    headers: Record<string, string> = {},
  ) => {
    await t.db
      .updateTable('auth_sessions')
      .set({ expires_at: new Date(t.clock.nowMs() + 86_400_000) })
      .where('id', '=', user.sessionId)
      .execute();
    const { token } = await t.tokens.signAccess({ userId: user.id, role: user.role, sessionId: user.sessionId });
    return t.app.inject({
      method,
      url: `/api${url}`,
      headers: { ...headers, authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    });
  };
  const runMonth = (month: string) => call('POST', '/admin/invoices/run', admin, { month });
  const charge = (businessId: string, amount: number, jobId: string = randomUUID()) =>
    t.services.ledger.post(t.db, {
      sourceKey: `job:PACKAGE:${jobId}:completed`,
      currency: 'KES',
      entries: jobCompletedEntries({
        driverId: driver.id,
        payer: { kind: 'BUSINESS', partyId: businessId },
        paymentMethod: 'ACCOUNT',
        amount,
        bookingFee: 0,
        commissionRate: 2000,
      }),
    });
  /** The business account's entries in [from, to) summed by code, straight from the ledger's tables. */
  const ledgerSums = async (businessId: string, from: Date, to: Date) => {
    const rows = await sql<{ code: string; total: string }>`
      select e.code, sum(e.amount)::bigint as total from ledger_entries e join ledger_accounts a on a.id = e.account_id
      where a.party_id = ${businessId} and e.created_at >= ${from} and e.created_at < ${to} group by e.code`.execute(
      t.db,
    );
    return Object.fromEntries(rows.rows.map((r) => [r.code, Number(r.total)]));
  };
  const balanceAt = async (businessId: string, instant: Date) => {
    const row = await sql<{ total: string }>`
      select coalesce(sum(e.amount), 0)::bigint as total from ledger_entries e join ledger_accounts a on a.id = e.account_id
      where a.party_id = ${businessId} and e.created_at < ${instant}`.execute(t.db);
    return Number(row.rows[0]!.total);
  };

  before(async () => {
    t = await buildTestApp({ clock: new ManualClock(at('2026-09-20T12:00:00Z')) });
    dir = await mkdtemp(join(tmpdir(), 'invoices-'));
    admin = await createUser(t, { role: 'ADMIN' });
    hostile = await createUser(t, { role: 'BUSINESS', businessName: '=1+1 <b>Shop</b>' });
    zebra = await createUser(t, { role: 'BUSINESS', businessName: 'Zebra Traders' });
    driver = await createUser(t, { role: 'DRIVER' });

    // September: the opening balance of October.
    await earn(t, driver.id, hostile.id, 5000);
    // October.
    t.clock.set(at('2026-10-05T09:00:00Z'));
    const created = await call('POST', '/packages', hostile, packageBody(await countryId(t), { reference: 'ORD-1' }));
    assert.equal(created.statusCode, 201, created.body);
    packageId = created.json().id;
    await charge(hostile.id, 10_000, packageId);
    t.clock.set(at('2026-10-06T09:00:00Z'));
    await t.services.ledger.post(t.db, {
      sourceKey: `job:PACKAGE:${randomUUID()}:cancellation-fee`,
      currency: 'KES',
      entries: cancellationFeeEntries({
        driverId: driver.id,
        payer: { kind: 'BUSINESS', partyId: hostile.id },
        fee: 3000,
        commissionRate: 2000,
      }),
    });
    await t.services.ledger.post(t.db, {
      sourceKey: `tip:PACKAGE:${packageId}`,
      currency: 'KES',
      entries: tipEntries({
        driverId: driver.id,
        payer: { kind: 'BUSINESS', partyId: hostile.id },
        paymentMethod: 'ACCOUNT',
        amount: 500,
      }),
    });
    await t.services.ledger.post(t.db, {
      sourceKey: `cod:${packageId}`,
      currency: 'KES',
      entries: cashOnDeliveryEntries({ driverId: driver.id, businessId: hostile.id, amount: 5000 }),
    });
    const paid = await call('POST', '/admin/business-payments', admin, {
      businessId: hostile.id,
      amount: 3000,
      currency: 'KES',
      reference: 'BANK-77',
    });
    assert.equal(paid.statusCode, 201, paid.body);
    t.clock.set(at('2026-10-10T09:00:00Z'));
    await charge(zebra.id, 2000);
    // The last millisecond of October (in), the first of November (out).
    t.clock.set(at('2026-10-31T23:59:59.999Z'));
    await charge(hostile.id, 7000);
    t.clock.set(at('2026-11-01T00:00:00.000Z'));
    await charge(hostile.id, 9999);
    t.clock.set(at('2026-11-02T08:00:00Z'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('only a month that has ended: the current and a future month are 400, a malformed one too', async () => {
    const current = await runMonth('2026-11');
    assert.equal(current.statusCode, 400);
    assert.deepEqual(current.json(), {
      statusCode: 400,
      error: 'Bad Request',
      code: 'MONTH_NOT_CLOSED',
      message: 'body.month 2026-11 has not ended yet (months are UTC): only a past month can be invoiced',
    });
    assert.equal((await runMonth('2027-01')).statusCode, 400);
    const malformed = await runMonth('2026-13');
    assert.equal(malformed.statusCode, 400);
    assert.match(malformed.json().message, /^body.month must match pattern/);
    assert.equal((await call('POST', '/admin/invoices/run', hostile, { month: '2026-10' })).statusCode, 403);
    assert.equal((await call('GET', '/admin/invoices', admin)).json().items.length, 0, 'nothing was created');
  });

  test('concurrent runs of a month create one invoice per business, numbered without gaps; a second run creates nothing', async () => {
    const runs = await Promise.all([runMonth('2026-10'), runMonth('2026-10'), runMonth('2026-10')]);
    for (const r of runs) assert.equal(r.statusCode, 200, r.body);
    assert.equal(
      runs.reduce((n, r) => n + r.json().created, 0),
      2,
      'two businesses had activity in October',
    );
    const first = runs.find((r) => r.json().created === 2)!.json();
    assert.deepEqual(
      first.invoices.map((i: { number: string; business: { id: string } }) => [i.number, i.business.id]),
      [
        ['INV-000001', hostile.id],
        ['INV-000002', zebra.id],
      ],
    );
    const again = await runMonth('2026-10');
    assert.deepEqual(again.json(), { month: '2026-10', created: 0, invoices: [] });
    const rows = await t.db.selectFrom('invoices').select(['business_id', 'seq']).orderBy('seq').execute();
    assert.deepEqual(
      rows.map((r) => [r.business_id, Number(r.seq)]),
      [
        [hostile.id, 1],
        [zebra.id, 2],
      ],
    );
  });

  test("the invoice's lines and totals are the ledger's entries of the month, to the minor unit", async () => {
    const list = await call('GET', '/businesses/me/invoices', hostile);
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().items.length, 1);
    const id = list.json().items[0].id;
    const res = await call('GET', `/businesses/me/invoices/${id}`, hostile);
    assert.equal(res.statusCode, 200, res.body);
    const invoice = res.json();
    assert.equal(invoice.number, 'INV-000001');
    assert.equal(invoice.month, '2026-10');
    assert.deepEqual(invoice.business, { id: hostile.id, name: '=1+1 <b>Shop</b>', address: null });
    assert.deepEqual(
      invoice.lines.map((l: { kind: string; reference: string | null; amount: number; date: string }) => [
        l.kind,
        l.reference,
        l.amount,
        l.date,
      ]),
      [
        ['DELIVERY', 'ORD-1', -10_000, '2026-10-05T09:00:00.000Z'],
        ['CANCELLATION_FEE', null, -3000, '2026-10-06T09:00:00.000Z'],
        ['TIP', 'ORD-1', -500, '2026-10-06T09:00:00.000Z'],
        ['CASH_ON_DELIVERY', 'ORD-1', 5000, '2026-10-06T09:00:00.000Z'],
        ['PAYMENT', 'BANK-77', 3000, '2026-10-06T09:00:00.000Z'],
        ['DELIVERY', null, -7000, '2026-10-31T23:59:59.999Z'],
      ],
    );
    assert.equal(invoice.lines[0].jobId, packageId);
    assert.deepEqual(invoice.totals, {
      deliveries: -17_000,
      deliveryCount: 2,
      cancellationFees: -3000,
      tips: -500,
      cashOnDelivery: 5000,
      payments: 3000,
      payouts: 0,
      other: 0,
      net: -12_500,
    });
    assert.equal(invoice.openingBalance, -5000);
    assert.equal(invoice.closingBalance, -17_500);
    assert.equal(invoice.amountDue, 17_500);
    // Against the ledger, independently of the invoice's own arithmetic.
    const sums = await ledgerSums(hostile.id, at('2026-10-01T00:00:00Z'), at('2026-11-01T00:00:00Z'));
    assert.deepEqual(sums, {
      JOB_CHARGE: -17_000,
      CANCELLATION_FEE: -3000,
      TIP: -500,
      COD: 5000,
      BUSINESS_PAYMENT: 3000,
    });
    assert.equal(invoice.openingBalance, await balanceAt(hostile.id, at('2026-10-01T00:00:00Z')));
    assert.equal(invoice.closingBalance, await balanceAt(hostile.id, at('2026-11-01T00:00:00Z')));
    assert.equal(
      invoice.totals.net,
      Object.values(sums).reduce((a, b) => a + b, 0),
    );
    // The November delivery is on the balance but not on October's invoice.
    assert.equal(await t.services.ledger.balance('KES', { kind: 'BUSINESS', partyId: hostile.id }), -17_500 - 9999);
    await assertBooks(t);
  });

  test('the PDF, read back with pdftotext: name as plain text, number, lines and totals in major units', async () => {
    const { items } = (await call('GET', '/businesses/me/invoices', hostile)).json();
    const res = await call('GET', `/businesses/me/invoices/${items[0].id}`, hostile, undefined, {
      accept: 'application/pdf',
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/pdf');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="invoice-INV-000001.pdf"');
    assert.equal(res.rawPayload.subarray(0, 5).toString('latin1'), '%PDF-');
    const file = join(dir, 'invoice.pdf');
    await writeFile(file, res.rawPayload);
    const { stdout: text } = await run('pdftotext', ['-layout', file, '-']);
    for (const expected of [
      'Invoice INV-000001',
      '=1+1 <b>Shop</b>',
      'Period: 2026-10 (UTC)',
      'ORD-1',
      'BANK-77',
      'Cancellation fee',
      'Cash on delivery collected for you',
    ]) {
      assert.ok(text.includes(expected), `${expected} in:\n${text}`);
    }
    assert.match(text, /2026-10-05\s+Delivery\s+ORD-1\s+100\.00/);
    assert.match(text, /Opening balance\s+-50\.00/);
    assert.match(text, /Deliveries \(2\)\s+-170\.00/);
    assert.match(text, /Net for the month\s+-125\.00/);
    assert.match(text, /Closing balance\s+-175\.00/);
    assert.match(text, /Amount due\s+175\.00/);
    // format=pdf does the same for a download link.
    assert.equal(
      (await call('GET', `/businesses/me/invoices/${items[0].id}?format=pdf`, hostile)).headers['content-type'],
      'application/pdf',
    );
  });

  test("another business's invoice is 404, JSON and PDF alike; an admin reads any and filters", async () => {
    const mine = (await call('GET', '/businesses/me/invoices', hostile)).json().items[0];
    const notFound = { statusCode: 404, error: 'Not Found', code: 'INVOICE_NOT_FOUND', message: 'Invoice not found' };
    for (const accept of ['application/json', 'application/pdf']) {
      const res = await call('GET', `/businesses/me/invoices/${mine.id}`, zebra, undefined, { accept });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), notFound);
    }
    assert.deepEqual((await call('GET', `/businesses/me/invoices/${randomUUID()}`, hostile)).json(), notFound);
    assert.equal((await call('GET', `/businesses/me/invoices/${mine.id}`, driver)).statusCode, 403);
    assert.deepEqual(
      (await call('GET', '/businesses/me/invoices', zebra)).json().items.map((i: { number: string }) => i.number),
      ['INV-000002'],
    );
    const byAdmin = await call('GET', `/admin/invoices/${mine.id}`, admin);
    assert.equal(byAdmin.statusCode, 200);
    assert.equal(byAdmin.json().lines.length, 6);
    assert.equal(
      (await call('GET', `/admin/invoices/${mine.id}`, admin, undefined, { accept: 'application/pdf' })).headers[
        'content-type'
      ],
      'application/pdf',
    );
    const filtered = await call('GET', `/admin/invoices?businessId=${zebra.id}&month=2026-10`, admin);
    assert.deepEqual(
      filtered.json().items.map((i: { number: string; totals: { net: number } }) => [i.number, i.totals.net]),
      [['INV-000002', -2000]],
    );
    assert.equal((await call('GET', '/admin/invoices?month=2026-09', admin)).json().items.length, 0);
  });

  test('the background run issues last month after a grace of a few minutes on the 1st, once', async () => {
    t.clock.set(at('2026-12-01T00:03:00Z'));
    assert.equal(await t.services.invoices.runDue(), 0, 'still within the grace: October again, already done');
    t.clock.set(at('2026-12-01T00:06:00Z'));
    assert.equal(await t.services.invoices.runDue(), 1, "November: the first business's delivery of the 1st");
    assert.equal(await t.services.invoices.runDue(), 0);
    const november = (await call('GET', '/businesses/me/invoices?month=2026-11', hostile)).json().items;
    assert.deepEqual(
      november.map((i: { number: string; openingBalance: number; closingBalance: number }) => [
        i.number,
        i.openingBalance,
        i.closingBalance,
      ]),
      [['INV-000003', -17_500, -27_499]],
    );
  });
});

describe('invoice PDF: names and references in Polish, Cyrillic and Greek', () => {
  let t: TestApp;
  let dir: string;
  before(async () => {
    t = await buildTestApp({ clock: new ManualClock(at('2026-09-10T12:00:00Z')) });
    dir = await mkdtemp(join(tmpdir(), 'invoices-unicode-'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the business name, its address and a line item come back exactly from pdftotext', async () => {
    const name = 'Łódź Кофе Ελλάδα';
    const address = 'ul. Piotrkowska 1, Łódź · Тверская 7 · Οδός Αθηνάς 3';
    const reference = 'Żółć-Щука-Ψάρι';
    const admin = await createUser(t, { role: 'ADMIN' });
    const business = await createUser(t, { role: 'BUSINESS', businessName: name });
    await t.db
      .updateTable('business_profiles')
      .set({ business_address: address })
      .where('user_id', '=', business.id)
      .execute();
    const driver = await createUser(t, { role: 'DRIVER' });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/packages',
      headers: business.headers,
      payload: packageBody(await countryId(t), { reference }),
    });
    assert.equal(created.statusCode, 201, created.body);
    await t.services.ledger.post(t.db, {
      sourceKey: `job:PACKAGE:${created.json().id}:completed`,
      currency: 'KES',
      entries: jobCompletedEntries({
        driverId: driver.id,
        payer: { kind: 'BUSINESS', partyId: business.id },
        paymentMethod: 'ACCOUNT',
        amount: 12_345,
        bookingFee: 0,
        commissionRate: 2000,
      }),
    });
    t.clock.set(at('2026-10-02T08:00:00Z'));
    const { token } = await t.tokens.signAccess({ userId: admin.id, role: admin.role, sessionId: admin.sessionId });
    const ran = await t.app.inject({
      method: 'POST',
      url: '/api/admin/invoices/run',
      headers: { authorization: `Bearer ${token}` },
      payload: { month: '2026-09' },
    });
    assert.equal(ran.statusCode, 200, ran.body);
    const url = `/api/admin/invoices/${ran.json().invoices[0].id}`;
    const invoice = (await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).json();
    assert.deepEqual(
      [invoice.business.name, invoice.business.address, invoice.lines[0].reference],
      [name, address, reference],
    );

    const res = await t.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${token}`, accept: 'application/pdf' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const file = join(dir, 'invoice.pdf');
    await writeFile(file, res.rawPayload);
    // Reading order without layout: each drawn string is one line, as written.
    const { stdout: raw } = await run('pdftotext', ['-raw', file, '-']);
    const lines = raw.split('\n').map((l) => l.trim());
    for (const expected of [name, address]) assert.ok(lines.includes(expected), `${expected} in:\n${raw}`);
    const { stdout: text } = await run('pdftotext', ['-layout', file, '-']);
    assert.match(text, /2026-09-10\s+Delivery\s+Żółć-Щука-Ψάρι\s+123\.45/);
    assert.ok(!/[?\uFFFD]/.test(text), `no replaced character in:\n${text}`);
    // The font is embedded (a subset), not a standard font.
    const { stdout: fonts } = await run('pdffonts', [file]);
    assert.match(fonts, /DejaVuSans\s/);
    assert.match(fonts, /DejaVuSans-Bold\s/);
    assert.doesNotMatch(fonts, /Helvetica/);
  });
});
