// The console's money pages in Chromium (contract sections 15 and 21): an admin records a
// settlement (and sees an API error's message) and sees it listed, filters the receipts by currency,
// creates a payout batch, downloads its CSV, marks a line failed and the batch paid, runs last
// month's invoices, filters them by month and downloads one's PDF; a business downloads its
// invoice's PDF. The app runs in this
// process (buildTestApp, listening) so that the ledger can be given last month's entries directly.
// CONSOLE_SCREENSHOTS=docs/screenshots saves the pages.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type Page } from 'playwright-core';
import { jobCompletedEntries } from '../src/modules/ledger/postings.js';
import { ManualClock } from '../src/shared/clock.js';
import { buildSmsTestApp, type SmsTestApp } from './auth-support.js';
import { chromiumSkip, launchChromium } from './helpers/browser.js';
import { TEST_PASSWORD, createUser, type TestUser } from './helpers/factories.js';
import { projectRoot } from './helpers/processes.js';
import { packageBody, setDriverPosition } from './packages-helpers.js';

const skip = chromiumSkip('the console money pages');
const DAY_MS = 86_400_000;
/** Monday of the week (UTC) as a date: the earnings pages' "This week". */
const mondayOf = (now: Date) => {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return new Date(today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS).toISOString().slice(0, 10);
};
const screenshots = process.env.CONSOLE_SCREENSHOTS
  ? path.resolve(projectRoot, process.env.CONSOLE_SCREENSHOTS)
  : undefined;

describe('console money pages in Chromium', { skip }, () => {
  let t: SmsTestApp;
  let base: string;
  let browser: Browser;
  let admin: TestUser;
  let business: TestUser;
  let driver: TestUser;
  let earner: TestUser;
  let lastMonth: string;
  /** The company's driver of the company earnings test, whom the admin's test opens from Balances. */
  let njeriId: string | undefined;
  const pageErrors: string[] = [];

  const post = (sourceKey: string, entries: ReturnType<typeof jobCompletedEntries>) =>
    t.services.ledger.post(t.db, { sourceKey, currency: 'KES', entries });

  before(async () => {
    const { buildWeb, staleReason } = await import('../scripts/build-web.mjs');
    if (staleReason()) assert.ok(buildWeb().ok, 'the console builds');
    const now = new Date();
    // Broadcast: the company's driver accepts the business's delivery itself (the earnings page's test).
    t = await buildSmsTestApp({ clock: new ManualClock(now), env: { DISPATCH_MODE: 'broadcast' } });
    admin = await createUser(t, { role: 'ADMIN', firstName: 'Ada', lastName: 'Admin' });
    business = await createUser(t, { role: 'BUSINESS', businessName: '=1+1 <b>Duka</b>' });
    driver = await createUser(t, { role: 'DRIVER', firstName: 'Amina', lastName: 'Wanjiru' });
    earner = await createUser(t, { role: 'DRIVER', firstName: 'Otieno', lastName: 'Ouma' });
    // Last month: the business is charged two deliveries; the drivers earn; Amina collects a cash ride.
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 10, 9));
    lastMonth = start.toISOString().slice(0, 7);
    t.clock.set(start);
    const account = (driverId: string, amount: number) =>
      jobCompletedEntries({
        driverId,
        payer: { kind: 'BUSINESS', partyId: business.id },
        paymentMethod: 'ACCOUNT',
        amount,
        bookingFee: 0,
        commissionRate: 2000,
      });
    await post(`job:PACKAGE:${randomUUID()}:completed`, account(driver.id, 10_000));
    await post(`job:PACKAGE:${randomUUID()}:completed`, account(earner.id, 25_000));
    await post(
      `job:RIDE:${randomUUID()}:completed`,
      jobCompletedEntries({
        driverId: driver.id,
        payer: { kind: 'DRIVER', partyId: driver.id },
        paymentMethod: 'CASH',
        amount: 60_000,
        bookingFee: 0,
        commissionRate: 2000,
      }),
    );
    t.clock.set(now);
    const run = await t.app.inject({
      method: 'POST',
      url: '/api/admin/invoices/run',
      headers: admin.headers,
      payload: { month: lastMonth },
    });
    assert.equal(run.json().created, 1, run.body);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    if (screenshots) mkdirSync(screenshots, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    assert.deepEqual(pageErrors, [], 'no uncaught page error');
  });

  async function signedIn(user: TestUser): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    await page.goto(`${base}/login`);
    await page.getByLabel('Email or phone').fill(user.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    const sent = t.messages().length;
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForFunction(
      () => document.querySelector('input[autocomplete="one-time-code"], input[inputmode="numeric"]') !== null || true,
    );
    for (let i = 0; i < 100 && t.messages().length <= sent; i++) await new Promise((r) => setTimeout(r, 100));
    await page.getByLabel('Verification code').fill(t.lastCode(user.phone));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  }

  async function axe(page: Page, what: string) {
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      [],
      `axe on ${what}`,
    );
  }

  const shot = async (page: Page, name: string) => {
    if (screenshots) await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
  };

  type DriverReport = {
    jobs: {
      jobType: string;
      jobId: string;
      completedAt: string;
      amount: number;
      earnings: number;
      tip: number;
      cashCollected: number;
    }[];
    totals: { currency: string; jobs: number; amount: number; earnings: number; tips: number; cashCollected: number }[];
    balances: { currency: string; balance: number }[];
  };
  /** A driver's earnings page shows the report's jobs and its totals with the balance, cell by cell. */
  async function assertDriverReport(page: Page, report: DriverReport, money: (minor: number) => string) {
    assert.ok(
      report.jobs.length > 0 && report.totals.length === 1 && report.balances.length === 1,
      JSON.stringify(report),
    );
    const jobs = page.getByRole('table', { name: 'Jobs' });
    await jobs.getByRole('row').nth(report.jobs.length).waitFor();
    assert.equal(await jobs.getByRole('row').count(), report.jobs.length + 1, 'a header and a row per job');
    for (const [i, j] of report.jobs.entries()) {
      const date = await page.evaluate((iso) => new Date(iso).toLocaleString(), j.completedAt);
      const cells = (
        await jobs
          .getByRole('row')
          .nth(i + 1)
          .getByRole('cell')
          .allInnerTexts()
      ).map((c) => c.trim());
      assert.deepEqual(cells, [
        date,
        `Delivery ${j.jobId.slice(0, 8)}`,
        money(j.amount),
        money(j.earnings),
        money(j.tip),
        money(j.cashCollected),
      ]);
    }
    const [total] = report.totals;
    const totals = page.getByRole('table', { name: 'Totals' }).getByRole('row').filter({ hasText: total!.currency });
    assert.deepEqual(
      (await totals.locator('th, td').allInnerTexts()).map((c) => c.trim()),
      [
        total!.currency,
        String(total!.jobs),
        money(total!.amount),
        money(total!.earnings),
        money(total!.tips),
        money(total!.cashCollected),
        money(report.balances[0]!.balance),
      ],
    );
  }

  test('an admin records a settlement and a business payment and sees them listed, creates a payout batch, downloads its CSV, marks a line failed and the batch paid', async () => {
    const page = await signedIn(admin);
    await page.getByRole('link', { name: 'Balances' }).click();
    await page.getByRole('heading', { name: 'Balances', level: 1 }).waitFor();
    // Amina: earned 8,000 on account, owes 12,000 commission on the cash ride: −4,000.
    const amina = page
      .getByRole('table', { name: 'Non-zero balances, newest account first' })
      .getByRole('row')
      .filter({ hasText: 'Amina Wanjiru' });
    await assert.doesNotReject(amina.getByText('-KES 40.00').waitFor());
    await axe(page, 'balances');
    await shot(page, 'balances');

    // Too much: the API's message is shown.
    await page.getByRole('button', { name: 'Settle Amina Wanjiru' }).click();
    const settlement = page.getByRole('form', { name: 'Settlement: cash a driver handed in' });
    assert.equal(await settlement.getByLabel('Amount').inputValue(), '40.00');
    assert.equal(await settlement.getByLabel('Driver ID').inputValue(), driver.id);
    await settlement.getByLabel('Amount').fill('50');
    await settlement.getByLabel('Reference').fill('RCPT-1');
    await settlement.getByRole('button', { name: 'Record settlement' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'The driver owes 4000 KES (minor units): a settlement of 5000 is more than that' })
      .waitFor();
    await settlement.getByLabel('Amount').fill('40.00');
    await settlement.getByRole('button', { name: 'Record settlement' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Recorded KES 40.00 (RCPT-1). The balance is now KES 0.00.' })
      .waitFor();
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: driver.id }), 0);
    await amina.waitFor({ state: 'detached' });
    // The list below shows it at once (the refused one is not there), with who recorded it.
    const settlements = page.getByRole('table', { name: 'Recent settlements' });
    const settled = settlements.getByRole('row').filter({ hasText: 'RCPT-1' });
    await settled.waitFor();
    assert.deepEqual(
      (await settled.getByRole('cell').allInnerTexts()).slice(1).map((c) => c.trim()),
      ['Amina Wanjiru', 'KES 40.00', 'RCPT-1', 'Ada Admin'],
    );
    assert.equal(await settlements.getByRole('row').count(), 2, 'a header and the one settlement');

    // A business payment from the row's button.
    await page.getByRole('button', { name: 'Record a payment by =1+1 <b>Duka</b>' }).click();
    const payment = page.getByRole('form', { name: 'Business payment' });
    assert.equal(await payment.getByLabel('Amount').inputValue(), '350.00');
    await payment.getByLabel('Amount').fill('100');
    await payment.getByLabel('Reference').fill('BANK-9');
    await payment.getByRole('button', { name: 'Record business payment' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Recorded KES 100.00 (BANK-9). The balance is now -KES 250.00.' })
      .waitFor();
    const paid = page
      .getByRole('table', { name: 'Recent business payments' })
      .getByRole('row')
      .filter({ hasText: 'BANK-9' });
    await paid.waitFor();
    assert.deepEqual(
      (await paid.getByRole('cell').allInnerTexts()).slice(1).map((c) => c.trim()),
      ['=1+1 <b>Duka</b>', 'KES 100.00', 'BANK-9', 'Ada Admin'],
    );
    assert.equal(await page.locator('main b').count(), 0, 'the name is text, not markup');
    // Each list filters by its own currency: none in UGX, the receipt in KES (typed lower case), the
    // API's message for a currency it refuses, and every currency again when the field is emptied.
    // The balances table's own filter: a currency the API refuses shows its message, then all again.
    const balancesFilter = page.getByLabel('Filter by currency').first();
    await balancesFilter.fill('K1S');
    const refused = page.getByRole('alert').filter({ hasText: 'querystring.currency must match pattern' });
    await refused.waitFor();
    await balancesFilter.fill('');
    await refused.waitFor({ state: 'detached' });
    for (const [name, reference, noun, other] of [
      ['Recent settlements', 'RCPT-1', 'settlement', 'Recent business payments'],
      ['Recent business payments', 'BANK-9', 'business payment', 'Recent settlements'],
    ] as const) {
      const section = page.getByRole('region', { name });
      const currency = section.getByLabel('Filter by currency');
      const row = section.getByRole('table', { name }).getByRole('row').filter({ hasText: reference });
      await currency.fill('UGX');
      await section.getByText(`No ${noun} in UGX.`).waitFor();
      await row.waitFor({ state: 'detached' });
      assert.equal(
        await page.getByRole('table', { name: other }).getByRole('row').count(),
        2,
        'the other list keeps its rows',
      );
      await currency.fill('kes');
      assert.equal(await currency.inputValue(), 'KES');
      await row.waitFor();
      assert.equal(await section.getByRole('row').count(), 2, 'a header and the one receipt in KES');
      await currency.fill('K1S');
      await section
        .getByRole('alert')
        .filter({ hasText: 'querystring.currency must match pattern "^[A-Z]{3}$"' })
        .waitFor();
      assert.equal(await section.getByRole('table').count(), 0);
      await currency.fill('');
      await row.waitFor();
      assert.equal(await section.getByRole('alert').count(), 0);
    }
    await axe(page, 'balances with the recent receipts');
    await shot(page, 'balances-receipts');

    // Payouts: Otieno is owed 20,000.
    await page.getByRole('link', { name: 'Payouts' }).click();
    await page.getByRole('heading', { name: 'Payouts', level: 1 }).waitFor();
    await page.getByLabel('Currency').fill('KES');
    await page.getByRole('button', { name: 'Create batch' }).click();
    await page.getByRole('heading', { name: /^Payout batch \d+$/, level: 1 }).waitFor();
    const line = page.getByRole('row').filter({ hasText: 'Otieno Ouma' });
    await line.getByText('KES 200.00').waitFor();
    await axe(page, 'payout batch');
    await shot(page, 'payout-batch');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^payout-\d+-KES\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8');
    assert.match(csv, /^name,phone,amount,currency,reference\r\nOtieno Ouma,\+\d+,200\.00,KES,PO-\d+-00001\r\n$/);

    await line.getByRole('button', { name: "Mark Otieno Ouma's line failed" }).click();
    await page.getByLabel('Reason').fill('number not registered');
    await page.getByRole('button', { name: 'Confirm failed' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /marked failed: KES 200\.00 is back on Otieno Ouma's balance/ })
      .waitFor();
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: earner.id }), 20_000);
    // Nothing open any more: the batch closed itself; a second batch pays Otieno again and is marked paid.
    await page.getByRole('link', { name: 'All batches' }).click();
    await page.getByRole('button', { name: 'Create batch' }).click();
    await page.getByRole('button', { name: 'Mark paid' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Batch \d+ is paid and closed\.$/ })
      .waitFor();
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: earner.id }), 0);
    await page.getByRole('link', { name: 'All batches' }).click();
    await page.getByRole('row').nth(2).waitFor();
    await shot(page, 'payouts');
    await page.context().close();
  });

  test('a business reads its invoice and downloads the PDF', async () => {
    const page = await signedIn(business);
    await page.getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('heading', { name: 'Invoices', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'INV-000001' }).click();
    await page.getByRole('heading', { name: 'Invoice INV-000001', level: 1 }).waitFor();
    await page.getByText('=1+1 <b>Duka</b>').waitFor();
    assert.equal(await page.getByTestId('amount-due').textContent(), 'KES 350.00');
    assert.equal(await page.locator('b').count(), 0, 'the name is text, not markup');
    await axe(page, 'invoice');
    await shot(page, 'invoice');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download PDF' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'invoice-INV-000001.pdf');
    const pdf = readFileSync((await download.path())!);
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    await page.context().close();
  });

  test("an admin runs last month's invoices from the Invoices page: the new business's invoice is issued once", async () => {
    // A second business with a delivery last month, after the run in before(): the month is run again.
    const soko = await createUser(t, { role: 'BUSINESS', businessName: 'Soko Ltd' });
    const now = t.clock.now();
    t.clock.set(new Date(`${lastMonth}-15T12:00:00Z`));
    await post(
      `job:PACKAGE:${randomUUID()}:completed`,
      jobCompletedEntries({
        driverId: earner.id,
        payer: { kind: 'BUSINESS', partyId: soko.id },
        paymentMethod: 'ACCOUNT',
        amount: 12_000,
        bookingFee: 0,
        commissionRate: 2000,
      }),
    );
    t.clock.set(now);
    const page = await signedIn(admin);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('heading', { name: 'Invoices', level: 1 }).waitFor();
    assert.equal(
      await page.getByLabel('Month', { exact: true }).inputValue(),
      lastMonth,
      'last month (UTC) by default',
    );
    const issued = page.getByRole('table', { name: 'Issued invoices' });
    await issued.getByRole('row').filter({ hasText: 'INV-000001' }).waitFor();
    await page.getByRole('button', { name: 'Run invoices' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Issued 1 invoice for ${lastMonth}.` })
      .waitFor();
    const row = issued.getByRole('row').filter({ hasText: 'Soko Ltd' });
    await row.waitFor();
    assert.deepEqual(
      (await row.getByRole('cell').allInnerTexts()).slice(0, 4).map((c) => c.trim()),
      ['INV-000002', 'Soko Ltd', lastMonth, 'KES 120.00'],
    );
    await axe(page, 'admin invoices');
    await shot(page, 'admin-invoices');
    // Again: nothing new.
    await page.getByRole('button', { name: 'Run invoices' }).click();
    await page
      .getByRole('status')
      .filter({
        hasText: `No new invoices for ${lastMonth}: every business with activity in it has its invoice already.`,
      })
      .waitFor();
    assert.equal(await issued.getByRole('row').count(), 3, 'a header and the two invoices');
    // An API error's message is shown as it is.
    await page.route(/\/api\/admin\/invoices\/run/, (route) =>
      route.fulfill({
        status: 400,
        contentType: 'application/json',
        body: JSON.stringify({
          statusCode: 400,
          error: 'Bad Request',
          code: 'MONTH_NOT_CLOSED',
          message: 'body.month has not ended yet',
        }),
      }),
    );
    await page.getByRole('button', { name: 'Run invoices' }).click();
    await page.getByRole('alert').filter({ hasText: 'body.month has not ended yet' }).waitFor();
    await page.context().close();
  });

  test("an admin filters the issued invoices by month, pages through one month's and downloads an invoice's PDF", async () => {
    // 21 businesses invoiced for the month before last: one more than a page.
    const now = t.clock.now();
    const month = (back: number) =>
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)).toISOString().slice(0, 7);
    const earlier = month(2);
    t.clock.set(new Date(`${earlier}-15T12:00:00Z`));
    for (let n = 1; n <= 21; n++) {
      const shop = await createUser(t, { role: 'BUSINESS', businessName: `Shop ${n}` });
      await post(
        `job:PACKAGE:${randomUUID()}:completed`,
        jobCompletedEntries({
          driverId: earner.id,
          payer: { kind: 'BUSINESS', partyId: shop.id },
          paymentMethod: 'ACCOUNT',
          amount: 1_000 * n,
          bookingFee: 0,
          commissionRate: 2000,
        }),
      );
    }
    t.clock.set(now);
    const run = await t.app.inject({
      method: 'POST',
      url: '/api/admin/invoices/run',
      headers: admin.headers,
      payload: { month: earlier },
    });
    assert.equal(run.json().created, 21, run.body);

    const page = await signedIn(admin);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('heading', { name: 'Invoices', level: 1 }).waitFor();
    const issued = page.getByRole('table', { name: 'Issued invoices' });
    const rows = issued.getByRole('row');
    const pages = page.getByRole('navigation', { name: 'Pages' });
    const months = async () => (await rows.locator('td:nth-child(3)').allInnerTexts()).map((c) => c.trim());
    await rows.nth(20).waitFor();
    assert.equal(await rows.count(), 21, 'a header and a page of 20');
    const filter = page.getByLabel('Filter by month');
    // The month before last: a full page, then the 21st on the next one.
    await filter.fill(earlier);
    await pages.getByRole('button', { name: 'Next page' }).click();
    await pages.getByRole('button', { name: 'First page' }).waitFor();
    await rows.nth(2).waitFor({ state: 'detached' });
    await rows.nth(1).waitFor();
    assert.deepEqual(
      await months(),
      [earlier],
      'the 21st alone (without the filter, the two of last month would follow)',
    );
    await pages.getByRole('button', { name: 'First page' }).click();
    await rows.nth(20).waitFor();
    assert.deepEqual(new Set(await months()), new Set([earlier]));
    // Another month starts again from its first page.
    await pages.getByRole('button', { name: 'Next page' }).click();
    await pages.getByRole('button', { name: 'First page' }).waitFor();
    await filter.fill(lastMonth);
    await rows.filter({ hasText: 'INV-000001' }).waitFor();
    assert.deepEqual(await months(), [lastMonth, lastMonth]);
    assert.equal(await pages.getByRole('button').count(), 0, 'one page, no way back to a page of the other month');
    // A month with none.
    await filter.fill(month(3));
    await page.getByText(`No invoices for ${month(3)}.`).waitFor();
    await axe(page, 'admin invoices, filtered');
    await page.getByRole('button', { name: 'All months' }).click();
    await rows.nth(20).waitFor();
    assert.equal(await filter.inputValue(), '');

    // A row's PDF: the invoice itself, its number in the text.
    await filter.fill(lastMonth);
    const row = rows.filter({ hasText: 'INV-000001' });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('button', { name: 'Download PDF of INV-000001' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'invoice-INV-000001.pdf');
    const file = (await download.path())!;
    assert.equal(readFileSync(file).subarray(0, 5).toString('latin1'), '%PDF-');
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    assert.match(text, /INV-000001/);
    assert.doesNotMatch(text, /INV-000002/, "the row's invoice, not another");
    // An API error's message is shown as it is.
    await page.route(/\/api\/admin\/invoices\/[0-9a-f-]{36}\?/, (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({
          statusCode: 404,
          error: 'Not Found',
          code: 'INVOICE_NOT_FOUND',
          message: 'Invoice not found',
        }),
      }),
    );
    await rows.filter({ hasText: 'INV-000002' }).getByRole('button', { name: 'Download PDF of INV-000002' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invoice not found' }).waitFor();
    await page.context().close();
  });

  test("a company sees its driver's earnings for the period, as GET /companies/me/earnings gives them, and an error's message", async () => {
    const company = await createUser(t, {
      role: 'COMPANY',
      firstName: 'Kamau',
      lastName: 'Fleet',
      companyName: 'Kamau Couriers',
    });
    const rider = await createUser(t, {
      role: 'DRIVER',
      firstName: 'Njeri',
      lastName: 'Rider',
      driver: { vehicleType: 'BIKE', availability: 'ONLINE', companyId: company.id },
    });
    await setDriverPosition(t, rider.id, -1.2864, 36.8172);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/packages',
      headers: business.headers,
      payload: packageBody(business.countryId),
    });
    assert.equal(created.statusCode, 201, created.body);
    for (const action of ['accept', 'pickup', 'start', 'deliver']) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/packages/${created.json().id}/${action}`,
        headers: rider.headers,
      });
      assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
    }
    const DAY = 86_400_000;
    const today = Math.floor(Date.now() / DAY) * DAY;
    const monday = new Date(today - ((new Date(today).getUTCDay() + 6) % 7) * DAY).toISOString().slice(0, 10);
    const report = await t.app.inject({
      method: 'GET',
      url: `/api/companies/me/earnings?from=${monday}`,
      headers: company.headers,
    });
    assert.equal(report.statusCode, 200, report.body);
    const njeri = (
      report.json() as {
        drivers: {
          driverId: string;
          totals: { currency: string; jobs: number; earnings: number }[];
          balances: { balance: number }[];
        }[];
      }
    ).drivers.find((d) => d.driverId === rider.id)!;
    assert.equal(njeri.totals.length, 1);
    const total = njeri.totals[0]!;
    assert.equal(total.jobs, 1);
    assert.ok(total.earnings > 0, 'the delivery earned something');
    const format = new Intl.NumberFormat('en', {
      style: 'currency',
      currency: total.currency,
      currencyDisplay: 'code',
    });
    const money = (minor: number) =>
      format.format(minor / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2)).replace(/\u00a0/g, ' ');

    const page = await signedIn(company);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Earnings' }).click();
    await page.getByRole('heading', { name: 'Earnings', level: 1 }).waitFor();
    assert.equal(await page.getByLabel('This week').isChecked(), true, 'this week by default');
    const row = page.getByRole('row').filter({ hasText: 'Njeri Rider' });
    await row.waitFor();
    const cells = await row.locator('th, td').allInnerTexts();
    assert.deepEqual(
      cells.map((c) => c.trim()),
      ['Njeri Rider', '1', money(total.earnings), money(0), money(0), money(njeri.balances[0]!.balance)],
    );
    await axe(page, 'company earnings');
    await shot(page, 'company-earnings');
    // Today: the same delivery (booked now).
    await page.getByLabel('Today').check();
    await row
      .getByRole('cell', { name: money(total.earnings), exact: true })
      .first()
      .waitFor();

    // The driver's name opens the driver's jobs for the period chosen, as the company's route gives them.
    const own = await t.app.inject({
      method: 'GET',
      url: `/api/companies/me/drivers/${rider.id}/earnings?from=${new Date(today).toISOString().slice(0, 10)}`,
      headers: company.headers,
    });
    assert.equal(own.statusCode, 200, own.body);
    await row.getByRole('link', { name: 'Njeri Rider' }).click();
    await page.getByRole('heading', { name: 'Earnings: Njeri Rider', level: 1 }).waitFor();
    assert.equal(await page.getByLabel('Today').isChecked(), true, 'the period chosen on the Earnings page');
    await assertDriverReport(page, own.json(), money);
    await axe(page, "a company's driver's earnings");
    await shot(page, 'company-driver-earnings');
    // This week: the same delivery, under the same title.
    await page.getByLabel('This week').check();
    await assertDriverReport(
      page,
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/companies/me/drivers/${rider.id}/earnings?from=${monday}`,
          headers: company.headers,
        })
      ).json(),
      money,
    );
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Earnings: Njeri Rider');
    await page.getByLabel('Today').check();
    const csv = await t.app.inject({
      method: 'GET',
      url: `/api/companies/me/drivers/${rider.id}/earnings?from=${new Date(today).toISOString().slice(0, 10)}&format=csv`,
      headers: company.headers,
    });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^earnings-Njeri-Rider-\d{4}-\d{2}-\d{2}\.csv$/);
    assert.equal(readFileSync((await download.path())!, 'utf8'), csv.body);
    // Back to the list, the same period.
    await page.getByRole('link', { name: "All drivers' earnings" }).click();
    await page.getByRole('heading', { name: 'Earnings', level: 1 }).waitFor();
    assert.equal(await page.getByLabel('Today').isChecked(), true);
    njeriId = rider.id;
    // The API's message is shown as it is.
    await page.route(/\/api\/companies\/me\/earnings/, (route) =>
      route.fulfill({
        status: 400,
        contentType: 'application/json',
        body: JSON.stringify({
          statusCode: 400,
          error: 'Bad Request',
          code: 'VALIDATION_ERROR',
          message: 'The period is too long',
        }),
      }),
    );
    await page.getByLabel('This month').check();
    await page.getByRole('alert').filter({ hasText: 'The period is too long' }).waitFor();
    await page.context().close();
  });

  test("an admin opens a driver's earnings from Balances: the same report as the admin's route gives", async () => {
    assert.ok(njeriId, "the company earnings test ran first: Njeri's delivery is booked this week");
    const week = await t.app.inject({
      method: 'GET',
      url: `/api/admin/drivers/${njeriId}/earnings?from=${mondayOf(new Date())}`,
      headers: admin.headers,
    });
    assert.equal(week.statusCode, 200, week.body);
    const currency = week.json().totals[0].currency as string;
    const format = new Intl.NumberFormat('en', { style: 'currency', currency, currencyDisplay: 'code' });
    const money = (minor: number) =>
      format.format(minor / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2)).replace(/\u00a0/g, ' ');
    const page = await signedIn(admin);
    await page.getByRole('link', { name: 'Balances' }).click();
    const balances = page.getByRole('table', { name: 'Non-zero balances, newest account first' });
    await balances.getByRole('link', { name: 'Njeri Rider' }).click();
    await page.getByRole('heading', { name: 'Earnings: Njeri Rider', level: 1 }).waitFor();
    assert.equal(await page.getByLabel('This week').isChecked(), true, 'this week by default');
    await assertDriverReport(page, week.json(), money);
    // A delivery's link opens the delivery.
    await page.getByRole('table', { name: 'Jobs' }).getByRole('link').first().click();
    await page.waitForURL(/\/deliveries\/[0-9a-f-]{36}$/);
    await page.goBack();
    await page.getByRole('heading', { name: 'Earnings: Njeri Rider', level: 1 }).waitFor();
    await axe(page, "an admin's driver earnings");
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const csv = await t.app.inject({
      method: 'GET',
      url: `/api/admin/drivers/${njeriId}/earnings?from=${mondayOf(new Date())}`,
      headers: { ...admin.headers, accept: 'text/csv' },
    });
    assert.equal(readFileSync((await download.path())!, 'utf8'), csv.body);
    // The API's message is shown as it is.
    await page.route(/\/api\/admin\/drivers\/[^/]+\/earnings/, (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({
          statusCode: 404,
          error: 'Not Found',
          code: 'DRIVER_NOT_FOUND',
          message: 'Driver not found',
        }),
      }),
    );
    await page.getByLabel('This month').check();
    await page.getByRole('alert').filter({ hasText: 'Driver not found' }).waitFor();
    await page.getByRole('link', { name: 'All balances' }).click();
    await page.getByRole('heading', { name: 'Balances', level: 1 }).waitFor();
    await page.context().close();
  });
});
