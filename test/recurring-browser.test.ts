// The console's recurring jobs page in a real browser (contract section 22): Playwright driving the
// operating system's Chromium against a started instance, as test/console.test.ts does. A business
// creates a daily job with the rule picker, sees its next occurrences, skips one, pauses, resumes and
// deletes it; axe-core on the pages; no page error, no CSP violation.
// CONSOLE_SCREENSHOTS=docs/screenshots saves the pages.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { type Page } from 'playwright-core';
import { chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { projectRoot } from './helpers/processes.js';

const skip = chromiumSkip('the web console');
const PASSWORD = 'recurring-test-Passw0rd';
const ADMIN = { email: 'admin@example.com', phone: '+254700000019' };
const BUSINESS = { email: 'shop@example.com', phone: '+254744200001' };
const screenshots = process.env.CONSOLE_SCREENSHOTS
  ? path.resolve(projectRoot, process.env.CONSOLE_SCREENSHOTS)
  : undefined;

describe('the recurring jobs page in Chromium', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-recurring-',
    password: PASSWORD,
    env: {
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PHONE: ADMIN.phone,
      ADMIN_PASSWORD: PASSWORD,
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '2000/15m',
      DISPATCH_MODE: 'off',
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

  async function shot(page: Page, name: string) {
    if (!screenshots) return;
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
  }

  test('a business creates a daily 18:00 job, skips one occurrence, pauses, resumes and deletes it', async () => {
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

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Recurring' }).click();
    await page.getByRole('heading', { name: 'Recurring jobs', level: 1 }).waitFor();
    await page.getByText('No recurring jobs yet.').waitFor();
    await axe(page, 'the recurring jobs page');

    // The weekly choice shows its days; back to daily at 18:00, 07:00–08:00 the next day.
    await page.getByLabel('On some days of the week', { exact: true }).check();
    await page.getByLabel('Wednesday', { exact: true }).waitFor();
    await page.getByLabel('Every day', { exact: true }).check();
    await page.getByLabel('Pickup time', { exact: true }).fill('18:00');
    await page.getByLabel('Time zone', { exact: true }).selectOption('Africa/Nairobi');
    await page.getByLabel('Drop-off window starts (hours after the pickup time)', { exact: true }).fill('13');
    await page.getByLabel('Country', { exact: true }).selectOption(kenya);
    await page.getByLabel('Pickup latitude', { exact: true }).fill('-1.2864');
    await page.getByLabel('Pickup longitude', { exact: true }).fill('36.8172');
    await page.getByLabel('Pickup address', { exact: true }).fill('Moi Avenue 1, Nairobi');
    await page.getByLabel('Pickup contact name', { exact: true }).fill('Amina');
    await page.getByLabel('Pickup contact phone', { exact: true }).fill('+254712345678');
    await page.getByLabel('Drop-off latitude', { exact: true }).fill('-1.3');
    await page.getByLabel('Drop-off longitude', { exact: true }).fill('36.8');
    await page.getByLabel('Drop-off address', { exact: true }).fill('Ngong Road 5, Nairobi');
    await page.getByLabel('Drop-off contact name', { exact: true }).fill('Otieno');
    await page.getByLabel('Drop-off contact phone', { exact: true }).fill('+254722000111');
    await page.getByLabel('Parcel description', { exact: true }).fill('Bread');
    await shot(page, 'recurring-new');
    await page.getByRole('button', { name: 'Create recurring job' }).click();

    await page.getByRole('heading', { name: 'Recurring job', level: 1 }).waitFor();
    await page.getByText('Daily at 18:00').waitFor();
    const rows = page.locator('tbody tr');
    await assert.doesNotReject(async () => {
      await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 10);
    });
    // Every occurrence is at 18:00 in Nairobi; the 7 within the horizon are created, the last 3 upcoming.
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    assert.ok(
      cells.every((c) => / 18:00$/.test(c[0]!)),
      JSON.stringify(cells.map((c) => c[0])),
    );
    assert.deepEqual(
      cells.map((c) => c[3]),
      [...Array(7).fill('CREATED'), 'UPCOMING', 'UPCOMING', 'UPCOMING'],
    );
    assert.match(cells[0]![2]!, /07:00 – .*08:00/);
    await axe(page, 'a recurring job');
    await shot(page, 'recurring-job');

    // Skip the first: its delivery is cancelled, the row says SKIPPED.
    const first = cells[0]![0]!;
    await page.getByRole('button', { name: `Skip ${first}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Skipped ${first}.` })
      .waitFor();
    await page.locator('tbody tr').first().getByText('SKIPPED').waitFor();

    // Pause until resumed: the 6 pending ones are cancelled.
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('status').filter({ hasText: 'Paused: 6 pending occurrence(s) cancelled.' }).waitFor();
    await page.getByText('until resumed').waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('status').filter({ hasText: 'Resumed.' }).waitFor();
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('tbody tr td:nth-child(4)')].filter((td) => td.textContent === 'CREATED')
          .length === 6,
    );

    // Delete, confirmed: back to the list, empty again.
    await page.getByRole('button', { name: 'Delete recurring job' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Recurring jobs', level: 1 }).waitFor();
    await page.getByText('No recurring jobs yet.').waitFor();

    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
    await context.close();
  });
});
