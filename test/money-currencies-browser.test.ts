// Money in currencies where the browser's Intl (CLDR) and ISO 4217 disagree (issue 39): Pakistan
// (PKR: 2 decimals, browsers 0) and Iraq (IQD: 3, browsers 0). A business's invoice shows in the
// console the same amount due as its PDF, and the countries list gives each currency's minor units.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { type Browser, type Page } from 'playwright-core';
import { jobCompletedEntries } from '../src/modules/ledger/postings.js';
import { ManualClock } from '../src/shared/clock.js';
import { buildSmsTestApp, type SmsTestApp } from './auth-support.js';
import { chromiumSkip, launchChromium } from './helpers/browser.js';
import { TEST_PASSWORD, createUser, type TestUser } from './helpers/factories.js';

const run = promisify(execFile);
const skip = chromiumSkip('the money of PKR and IQD countries');

describe('PKR and IQD in the console and the invoice PDF', { skip }, () => {
  let t: SmsTestApp;
  let base: string;
  let browser: Browser;
  let dir: string;
  const businesses: Record<'PKR' | 'IQD', TestUser> = {} as never;
  const pageErrors: string[] = [];

  before(async () => {
    const { buildWeb, staleReason } = await import('../scripts/build-web.mjs');
    if (staleReason()) assert.ok(buildWeb().ok, 'the console builds');
    dir = await mkdtemp(join(tmpdir(), 'rd-money-'));
    const now = new Date();
    t = await buildSmsTestApp({ clock: new ManualClock(now) });
    const admin = await createUser(t, { role: 'ADMIN' });
    for (const [code, name, currency, dialCode] of [
      ['PK', 'Pakistan', 'PKR', '+92'],
      ['IQ', 'Iraq', 'IQD', '+964'],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/admin/countries',
        headers: admin.headers,
        payload: { code, name, currency, dialCode },
      });
      assert.equal(res.statusCode, 201, res.body);
      businesses[currency] = await createUser(t, {
        role: 'BUSINESS',
        countryCode: code,
        businessName: `${name} Traders`,
      });
      const driver = await createUser(t, { role: 'DRIVER', countryCode: code });
      // Last month: 12,345.67 PKR and 1,234.567 IQD of deliveries on account.
      t.clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 10, 9)));
      const entries = jobCompletedEntries({
        driverId: driver.id,
        payer: { kind: 'BUSINESS', partyId: businesses[currency].id },
        paymentMethod: 'ACCOUNT',
        amount: 1_234_567,
        bookingFee: 0,
        commissionRate: 2000,
      });
      await t.services.ledger.post(t.db, { sourceKey: `job:PACKAGE:${randomUUID()}:completed`, currency, entries });
      t.clock.set(now);
    }
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
    const issued = await t.app.inject({
      method: 'POST',
      url: '/api/admin/invoices/run',
      headers: admin.headers,
      payload: { month: lastMonth },
    });
    assert.equal(issued.json().created, 2, issued.body);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    assert.deepEqual(pageErrors, [], 'no uncaught page error');
  });

  async function signedIn(user: TestUser): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    await page.goto(`${base}/login`);
    await page.getByLabel('Email or phone').fill(user.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    const sent = t.messages().length;
    await page.getByRole('button', { name: 'Sign in' }).click();
    for (let i = 0; i < 100 && t.messages().length <= sent; i++) await new Promise((r) => setTimeout(r, 100));
    await page.getByLabel('Verification code').fill(t.lastCode(user.phone));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  }

  test('GET /countries gives PKR 2 and IQD 3 minor units', async () => {
    const { items } = (await t.app.inject({ method: 'GET', url: '/api/countries' })).json() as {
      items: { currency: string; minorUnits: number }[];
    };
    assert.deepEqual(
      items.filter((c) => c.currency === 'PKR' || c.currency === 'IQD').map((c) => [c.currency, c.minorUnits]),
      [
        ['IQD', 3],
        ['PKR', 2],
      ],
    );
  });

  for (const [currency, shown] of [
    ['PKR', 'PKR 12,345.67'],
    ['IQD', 'IQD 1,234.567'],
  ] as const) {
    test(`the ${currency} business's invoice: the console's amount due is the PDF's (${shown})`, async () => {
      const business = businesses[currency];
      const { items } = (
        await t.app.inject({ method: 'GET', url: '/api/businesses/me/invoices', headers: business.headers })
      ).json();
      assert.equal(items.length, 1);
      assert.deepEqual([items[0].currency, items[0].amountDue], [currency, 1_234_567]);
      const pdf = await t.app.inject({
        method: 'GET',
        url: `/api/businesses/me/invoices/${items[0].id}`,
        headers: { ...business.headers, accept: 'application/pdf' },
      });
      const file = join(dir, `${currency}.pdf`);
      await writeFile(file, pdf.rawPayload);
      const { stdout: text } = await run('pdftotext', ['-layout', file, '-']);
      const inPdf = /Amount due\s+([\d,.]+)/.exec(text)?.[1];
      assert.equal(`${currency} ${inPdf}`, shown, text);

      const page = await signedIn(business);
      await page.getByRole('link', { name: 'Invoices' }).click();
      await page.getByRole('heading', { name: 'Invoices', level: 1 }).waitFor();
      await page.getByRole('link', { name: items[0].number }).click();
      await page.getByRole('heading', { name: `Invoice ${items[0].number}`, level: 1 }).waitFor();
      assert.equal(await page.getByTestId('amount-due').textContent(), `${currency} ${inPdf}`);
      await page.context().close();
    });
  }
});
