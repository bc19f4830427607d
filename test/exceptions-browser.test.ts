// The console's Exceptions page in a real browser (contract section 23): Playwright driving the
// operating system's Chromium against a started instance whose monitor runs every second. A business
// has the page open when an alert is raised for its delivery: it appears live; the business filters,
// follows the job's link, acknowledges and resolves it; axe-core on the page; no page error, no CSP
// violation. CONSOLE_SCREENSHOTS=docs/screenshots saves the page.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { type Page } from 'playwright-core';
import { chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { projectRoot } from './helpers/processes.js';

const skip = chromiumSkip('the web console');
const PASSWORD = 'exceptions-test-Passw0rd';
const ADMIN = { email: 'admin@example.com', phone: '+254700000023' };
const BUSINESS = { email: 'shop@example.com', phone: '+254744230001' };
const screenshots = process.env.CONSOLE_SCREENSHOTS
  ? path.resolve(projectRoot, process.env.CONSOLE_SCREENSHOTS)
  : undefined;

describe('the Exceptions page in Chromium', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-exceptions-',
    password: PASSWORD,
    env: {
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PHONE: ADMIN.phone,
      ADMIN_PASSWORD: PASSWORD,
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '2000/15m',
      DISPATCH_MODE: 'off',
      // A delivery nobody takes is offer.unanswered after 3 seconds; the monitor looks every second.
      SLA_INTERVAL: '1s',
      UNANSWERED_AFTER: '3s',
    },
  });

  async function axe(page: Page, what: string) {
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      [],
      `axe on ${what}`,
    );
  }

  test('an alert appears live; the business filters, opens the job, acknowledges and resolves it', async () => {
    const countries = (await (await fetch(`${h.base}/api/countries`)).json()) as {
      items: { id: string; code: string }[];
    };
    const kenya = countries.items.find((c) => c.code === 'KE')!.id;
    const admin = await h.apiLogin(ADMIN.email, ADMIN.phone);
    await h.call('POST', '/admin/users', admin, {
      email: BUSINESS.email,
      password: PASSWORD,
      firstName: 'Amina',
      lastName: 'Shop',
      phone: BUSINESS.phone,
      role: 'BUSINESS',
      countryId: kenya,
      businessName: 'Amina Bakery',
    });

    const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = h.watch(await context.newPage());
    page.setDefaultTimeout(15_000);
    await page.goto(`${h.base}/login`);
    await page.getByLabel('Email or phone', { exact: true }).fill(BUSINESS.email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    const before = h.smsCount(BUSINESS.phone);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Verification code', { exact: true }).fill(await h.smsCode(BUSINESS.phone, before));
    await page.getByRole('button', { name: 'Verify' }).click();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Exceptions' }).click();
    await page.getByRole('heading', { name: 'Exceptions', level: 1 }).waitFor();
    await page.getByText('No exceptions match.').waitFor();
    await page.getByRole('status').getByText('Live', { exact: true }).waitFor();
    await axe(page, 'the empty Exceptions page');

    // A delivery nobody takes, created while the page is open: its alert arrives over the stream.
    const business = await h.apiLogin(BUSINESS.email, BUSINESS.phone);
    const stop = (lat: number, lng: number, name: string) => ({
      location: { lat, lng },
      address: `${name} Road 1, Nairobi`,
      contactName: name,
      contactPhone: '+254712345678',
    });
    const pkg = await h.call<{ id: string }>('POST', '/packages', business, {
      pickup: stop(-1.2864, 36.8172, 'Moi'),
      dropoff: stop(-1.3, 36.8, 'Ngong'),
      vehicleType: 'BIKE',
      countryId: kenya,
      parcel: { description: 'Bread' },
    });
    const row = page.getByTestId('alert');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    await row.getByText('No driver accepted').waitFor();
    assert.equal(await row.getByTestId('alert-state').textContent(), 'open');
    await axe(page, 'the Exceptions page with an alert');
    if (screenshots) {
      mkdirSync(screenshots, { recursive: true });
      await page.screenshot({ path: path.join(screenshots, 'exceptions.png'), fullPage: true });
    }

    // Filters: another kind shows nothing; back to all kinds.
    await page.getByLabel('Kind', { exact: true }).selectOption('driver.stalled');
    await page.getByText('No exceptions match.').waitFor();
    await page.getByLabel('Kind', { exact: true }).selectOption('');
    await row.first().waitFor();

    // The job's link opens the delivery.
    await row.getByRole('link', { name: `Delivery ${pkg.id.slice(0, 8)}` }).click();
    await page.waitForURL(`${h.base}/deliveries/${pkg.id}`);
    await page.goBack();
    await page.getByRole('heading', { name: 'Exceptions', level: 1 }).waitFor();

    await row.getByRole('button', { name: /^Acknowledge / }).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="alert-state"]')?.textContent === 'acknowledged',
    );
    assert.equal(await row.getByRole('button', { name: /^Acknowledge / }).count(), 0);
    await row.getByRole('button', { name: /^Resolve / }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="alert-state"]')?.textContent === 'resolved');
    await page.getByLabel('State', { exact: true }).selectOption('OPEN');
    await page.getByText('No exceptions match.').waitFor();
    await page.getByLabel('State', { exact: true }).selectOption('RESOLVED');
    await row.first().waitFor();

    const alerts = await h.call<{ items: { state: string; by: string }[] }>('GET', '/alerts', business);
    assert.deepEqual(
      alerts.items.map((a) => a.state),
      ['RESOLVED'],
    );
    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
    await context.close();
  });
});
