// The slot pickers (contract section 22) in a real browser: Playwright driving the operating system's
// Chromium against a started instance. A business books a delivery with a pickup window and a drop-off
// window in the console's new-delivery form (days and one-hour slots in Africa/Nairobi time, the
// quote's expected pickup shown, an API refusal shown with its code); a customer books a ride for a
// later time in the customer app on a phone. The created jobs' windows and scheduledAt are read back
// through the API. axe-core on the pages; no page error, no CSP violation.
// CONSOLE_SCREENSHOTS=docs/screenshots saves the pages (console-schedule-*.png, customer-schedule-*.png).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { devices, type Page } from 'playwright-core';
import { assertPhoneLayout, chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { projectRoot } from './helpers/processes.js';

const skip = chromiumSkip('the slot pickers');
const PASSWORD = 'slots-test-Passw0rd';
const ADMIN = { email: 'admin@example.com', phone: '+254700000029' };
const BUSINESS = { email: 'slots-shop@example.com', phone: '+254744300001' };
const CUSTOMER = { email: 'slots-rider@example.com', phone: '+254744300002' };
const PICKUP = { lat: -1.2864, lng: 36.8172 };
const screenshots = process.env.CONSOLE_SCREENSHOTS
  ? path.resolve(projectRoot, process.env.CONSOLE_SCREENSHOTS)
  : undefined;

/** The local date in Nairobi `days` from now (independent of the code under test: Nairobi is UTC+3 all year). */
function nairobiDate(days: number): string {
  return new Date(Date.now() + 3 * 3_600_000 + days * 86_400_000).toISOString().slice(0, 10);
}
/** The instant of a Nairobi wall-clock time (UTC+3, no daylight saving). */
const nairobi = (date: string, time: string) => new Date(`${date}T${time}:00+03:00`).toISOString();

describe('the slot pickers in Chromium', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-slots-',
    password: PASSWORD,
    env: {
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PHONE: ADMIN.phone,
      ADMIN_PASSWORD: PASSWORD,
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '3000/15m',
      DISPATCH_MODE: 'offer',
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
    await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true, scale: 'css' });
  }

  async function kenyaId() {
    const countries = (await (await fetch(`${h.base}/api/countries`)).json()) as {
      items: { id: string; code: string; timeZone: string }[];
    };
    const kenya = countries.items.find((c) => c.code === 'KE')!;
    assert.equal(kenya.timeZone, 'Africa/Nairobi');
    return kenya.id;
  }

  async function createUser(role: 'BUSINESS' | 'CUSTOMER', who: { email: string; phone: string }, kenya: string) {
    const admin = await h.apiLogin(ADMIN.email, ADMIN.phone);
    await h.call('POST', '/admin/users', admin, {
      email: who.email,
      password: PASSWORD,
      firstName: 'Amina',
      lastName: role === 'BUSINESS' ? 'Shop' : 'Rider',
      phone: who.phone,
      role,
      countryId: kenya,
      ...(role === 'BUSINESS' ? { businessName: 'Amina Bakery' } : {}),
    });
  }

  test('console: a delivery with a pickup window tomorrow 10:00–11:00 and a drop-off window 12:00–13:00', async () => {
    const kenya = await kenyaId();
    await createUser('BUSINESS', BUSINESS, kenya);
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = h.watch(await context.newPage());
    page.setDefaultTimeout(15_000);
    await page.route(/tile\.openstreetmap\.org/, (route) => route.abort());
    await page.goto(`${h.base}/login`);
    await page.getByLabel('Email or phone', { exact: true }).fill(BUSINESS.email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    const before = h.smsCount(BUSINESS.phone);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Verification code', { exact: true }).fill(await h.smsCode(BUSINESS.phone, before));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New delivery' }).click();
    await page.getByRole('heading', { name: 'New delivery', level: 1 }).waitFor();

    const fields: [string, string][] = [
      ['Pickup latitude', String(PICKUP.lat)],
      ['Pickup longitude', String(PICKUP.lng)],
      ['Pickup address', 'Moi Avenue 1, Nairobi'],
      ['Pickup contact name', 'Amina'],
      ['Pickup contact phone', '+254712345678'],
      // Kampala first: the API refuses the trip, and the form shows its message and code.
      ['Drop-off latitude', '0.3476'],
      ['Drop-off longitude', '32.5825'],
      ['Drop-off address', 'Ngong Road 5, Nairobi'],
      ['Drop-off contact name', 'Otieno'],
      ['Drop-off contact phone', '+254722000111'],
      ['Parcel description', 'Bread'],
    ];
    for (const [label, value] of fields) await page.getByLabel(label, { exact: true }).fill(value);
    await page.getByLabel('Country', { exact: true }).selectOption(kenya);
    const refusal = page.getByTestId('quote').locator('code.error-code');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /^[A-Z_]+$/);
    await page.getByLabel('Drop-off latitude', { exact: true }).fill('-1.3');
    await page.getByLabel('Drop-off longitude', { exact: true }).fill('36.8');

    // ASAP by default; "Schedule" shows the days and slots in Nairobi time.
    assert.equal(await page.getByLabel('As soon as possible', { exact: true }).isChecked(), true);
    await page.getByLabel('Schedule a pickup window', { exact: true }).check();
    await page.getByText('Days and times are in Africa/Nairobi time.').waitFor();
    const tomorrow = nairobiDate(1);
    await page.getByLabel('Pickup day', { exact: true }).selectOption(tomorrow);
    const slots = await page
      .getByLabel('Pickup window', { exact: true })
      .locator('option')
      .evaluateAll((os) => os.map((o) => o.textContent));
    assert.equal(slots[0], '07:00–08:00', 'a whole day of slots tomorrow, from 07:00');
    assert.equal(slots.at(-1), '21:00–22:00');
    await page.getByLabel('Pickup window', { exact: true }).selectOption('10:00');
    await page.getByLabel('Drop-off day', { exact: true }).selectOption(tomorrow);
    // Drop-off windows ending before the pickup window's end are not offered.
    const dropoffSlots = await page
      .getByLabel('Drop-off window', { exact: true })
      .locator('option')
      .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
    assert.deepEqual(dropoffSlots.slice(0, 3), ['', '10:00', '11:00']);
    await page.getByLabel('Drop-off window', { exact: true }).selectOption('12:00');
    // The quote for these windows: its expected pickup is the window's start, in Nairobi time.
    await page
      .getByTestId('quote-eta')
      .filter({ hasText: /^Pickup expected \w{3} \d{1,2} \w{3} 10:00, drop-off about .* \(Africa\/Nairobi\)\.$/ })
      .waitFor();
    await axe(page, 'the new-delivery form, scheduled');
    await shot(page, 'console-schedule-delivery');
    await page.getByRole('button', { name: 'Create delivery' }).click();
    await page.getByRole('heading', { name: /^Delivery / }).waitFor();

    const token = await h.apiLogin(BUSINESS.email, BUSINESS.phone);
    const list = await h.call<{ items: { id: string }[] }>('GET', '/packages?limit=1', token);
    const pkg = await h.call<{
      pickupWindow: { start: string; end: string };
      dropoffWindow: { start: string; end: string };
      timeZone: string;
      dispatch: { state: string };
    }>('GET', `/packages/${list.items[0]!.id}`, token);
    assert.deepEqual(pkg.pickupWindow, { start: nairobi(tomorrow, '10:00'), end: nairobi(tomorrow, '11:00') });
    assert.deepEqual(pkg.dropoffWindow, { start: nairobi(tomorrow, '12:00'), end: nairobi(tomorrow, '13:00') });
    assert.equal(pkg.timeZone, 'Africa/Nairobi');
    assert.equal(pkg.dispatch.state, 'SCHEDULED');

    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
    await context.close();
  });

  test('customer app (phone): a ride booked for the day after tomorrow at 05:00', async () => {
    const kenya = await kenyaId();
    await createUser('CUSTOMER', CUSTOMER, kenya);
    const context = await h.browser.newContext({
      ...devices['Pixel 7'],
      viewport: { width: 360, height: 740 },
      geolocation: { latitude: PICKUP.lat, longitude: PICKUP.lng, accuracy: 10 },
      permissions: ['geolocation'],
      serviceWorkers: 'block',
    });
    const page = h.watch(await context.newPage());
    page.setDefaultTimeout(15_000);
    await page.route(/tile\.openstreetmap\.org/, (route) => route.abort());
    await page.goto(`${h.base}/app/`);
    await page.getByLabel('Email or phone').fill(CUSTOMER.email);
    await page.getByLabel('Password').fill(PASSWORD);
    const before = h.smsCount(CUSTOMER.phone);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Verification code').fill(await h.smsCode(CUSTOMER.phone, before));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Where to?' }).waitFor();
    await page
      .getByTestId('pickup')
      .filter({ hasText: PICKUP.lat.toFixed(5) })
      .waitFor();
    const map = page.locator('.leaflet-container');
    const box = (await map.boundingBox())!;
    await page.mouse.click(box.x + box.width / 2 + 90, box.y + box.height / 2 - 70);
    await page
      .getByTestId('destination')
      .filter({ hasText: /^-?\d+\.\d{5}, \d+\.\d{5}$/ })
      .waitFor();

    assert.equal(await page.getByLabel('Now', { exact: true }).isChecked(), true);
    await page.getByLabel('Later', { exact: true }).check();
    await page.getByText('Days and times are in Africa/Nairobi time.').waitFor();
    const day = nairobiDate(2);
    await page.getByLabel('Day', { exact: true }).selectOption(day);
    await page.getByLabel('Pickup time', { exact: true }).selectOption('05:00');
    const bike = page.getByRole('radio', { name: /^Bike KES [\d,.]+ / });
    await bike.waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLInputElement>('input[name="vehicle"]')].some((i) => !i.disabled),
    );
    await bike.check();
    await page
      .getByTestId('quote-eta')
      .filter({ hasText: /^Pickup expected \w{3} \d{1,2} \w{3} 05:00, drop-off about/ })
      .waitFor();
    await assertPhoneLayout(page, 'booking a ride for later');
    await axe(page, 'the ride booking, later');
    await shot(page, 'customer-schedule-ride');
    await page.getByRole('button', { name: 'Book ride' }).click();
    await page.getByRole('heading', { name: 'Ride booked' }).waitFor();
    await page
      .getByTestId('scheduled-at')
      .filter({ hasText: /05:00 \(Africa\/Nairobi time\)/ })
      .waitFor();
    await axe(page, 'a booked ride');
    await shot(page, 'customer-schedule-booked');

    const token = await h.apiLogin(CUSTOMER.email, CUSTOMER.phone);
    const rides = await h.call<{ items: { id: string; scheduledAt: string | null; status: string }[] }>(
      'GET',
      '/rides?limit=1',
      token,
    );
    assert.equal(rides.items[0]!.scheduledAt, nairobi(day, '05:00'));
    assert.equal(rides.items[0]!.status, 'REQUESTED');

    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
    await context.close();
  });
});
