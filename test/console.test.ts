// The web console in a real browser (contract section 15): Playwright driving the operating system's
// Chromium against a started instance (the real entry point, first run included). Each role's main
// flow, axe-core on every page, each role's main flows walked with the keyboard alone (focus checked
// where a control goes away), no uncaught page error, no CSP violation.
// CONSOLE_SCREENSHOTS=docs/screenshots saves the main pages for the README.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { type BrowserContext, type Page } from 'playwright-core';
import { UUID_PATTERN } from '../src/shared/errors.js';
import { chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { projectRoot, waitFor } from './helpers/processes.js';
import { startReceiver, type TestReceiver } from './webhooks-receiver.js';

const skip = chromiumSkip('the web console');
const screenshots = process.env.CONSOLE_SCREENSHOTS
  ? path.resolve(projectRoot, process.env.CONSOLE_SCREENSHOTS)
  : undefined;
const PASSWORD = 'console-test-Passw0rd';

describe('web console in Chromium', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-console-',
    password: PASSWORD,
    env: {
      // The flow signs in five times from one address; the per-IP limits are tested elsewhere.
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '2000/15m',
      DISPATCH_MODE: 'off',
      // Positions reach the streams at most this often; the live flow posts a few in a row.
      TRACKING_INTERVAL: '500ms',
    },
  });
  const { smsCount, smsCode, call, apiLogin } = h;
  let adminPassword: string;
  let receiver: TestReceiver;
  let kenya: string;
  let apiRequests = 0;

  before(async () => {
    adminPassword = h.adminPassword;
    assert.ok(adminPassword.length >= 12, 'the first start prints the admin password in its banner');
    assert.equal(h.server.stdout().match(/Password: /g)?.length, 1, 'printed once');
    receiver = await startReceiver();
    const countries = (await (await fetch(`${h.base}/api/countries`)).json()) as {
      items: { id: string; code: string }[];
    };
    kenya = countries.items.find((c) => c.code === 'KE')!.id;
    if (screenshots) mkdirSync(screenshots, { recursive: true });
  });

  after(async () => {
    await receiver?.close();
  });

  // ---- helpers ----------------------------------------------------------------------------------

  async function newPage(context?: BrowserContext): Promise<Page> {
    const ctx = context ?? (await h.browser.newContext({ viewport: { width: 1280, height: 860 } }));
    const page = await ctx.newPage();
    page.setDefaultTimeout(10_000);
    // No network for the tiles: the maps must still show their markers.
    await page.route(/tile\.openstreetmap\.org/, (route) => route.abort());
    h.watch(page);
    page.on('request', (req) => {
      if (req.url().startsWith(`${h.base}/api/`)) apiRequests++;
    });
    return page;
  }

  /** axe-core: no serious or critical violation on the page as it is now. */
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
    if (screenshots) await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
  }

  async function signIn(page: Page, identifier: string, password: string, phone: string) {
    await page.goto(`${h.base}/login`);
    await page.getByLabel('Email or phone').fill(identifier);
    await page.getByLabel('Password').fill(password);
    const before = smsCount(phone);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Verification code').fill(await smsCode(phone, before));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** The focused element: its name (aria-label, label or text), tag, id, and where it is (nav, main, header). */
  async function focused(page: Page) {
    return page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return { name: '', tag: 'BODY', id: '', within: '' };
      const labelled = (el as HTMLInputElement).labels?.[0]?.textContent;
      const within = el.closest('nav[aria-label="Main"]')
        ? 'nav'
        : el.closest('main')
          ? 'main'
          : el.closest('header')
            ? 'header'
            : '';
      return {
        name: (el.getAttribute('aria-label') ?? labelled ?? el.textContent ?? '').trim(),
        tag: el.tagName,
        id: el.id,
        within,
      };
    });
  }

  /** Waits for the focus to be on the element named (the console moves it after an action or a navigation). */
  async function focusOn(page: Page, name: string | RegExp, tag?: string) {
    let last = await focused(page);
    const is = () =>
      (typeof name === 'string' ? last.name === name : name.test(last.name)) && (!tag || last.tag === tag);
    await waitFor(
      async () => is() || ((last = await focused(page)), is()),
      5_000,
      `the focus on "${name}"`,
      () => `the focus is on ${last.tag} "${last.name}"`,
    );
  }

  /**
   * Tab (forward, or backward with `back`) until the focused element is the one named; fails when it
   * is not reachable. The control reached must show the focus ring.
   */
  async function tabTo(page: Page, name: string | RegExp, { back = false, max = 60 } = {}) {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
      const { name: now } = await focused(page);
      if (typeof name === 'string' ? now === name : name.test(now)) {
        const ring = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          const style = getComputedStyle(el);
          return el.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
        });
        assert.ok(ring, `"${now}" shows no focus ring`);
        return;
      }
    }
    assert.fail(`"${name}" is not reachable with the ${back ? 'Shift+Tab' : 'Tab'} key`);
  }

  /**
   * A page of the main navigation by keyboard: Shift+Tab from the content back up to its link, Enter;
   * the page's h1 then has the focus and the link is marked as the current page.
   */
  async function navTo(page: Page, name: string) {
    await tabTo(page, name, { back: true });
    assert.equal((await focused(page)).within, 'nav', `"${name}" is the navigation's link`);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
    await focusOn(page, name, 'H1');
    assert.equal(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name, exact: true })
        .getAttribute('aria-current'),
      'page',
    );
  }

  /** Signs in on the sign-in page with the keyboard alone: Tab to the fields, type, Enter; the code field takes the focus itself. */
  async function keyboardSignIn(page: Page, identifier: string, password: string, phone: string) {
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await tabTo(page, 'Email or phone');
    await page.keyboard.type(identifier);
    await tabTo(page, 'Password');
    await page.keyboard.type(password);
    const before = smsCount(phone);
    await page.keyboard.press('Enter');
    await page.getByLabel('Verification code').waitFor();
    await focusOn(page, 'Verification code');
    await page.keyboard.type(await smsCode(phone, before));
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  // ---- the flows ---------------------------------------------------------------------------------

  const business = { phone: '+254711200001', email: 'shop@example.com', first: 'Wanjiru', last: 'Shop' };
  let businessPage: Page;
  let packageId = '';
  let adminToken = '';
  let riderToken = '';

  test('the initial JavaScript is at most 200 KB gzipped; the sign-in page is usable quickly', async (t) => {
    const html = readFileSync(path.join(projectRoot, 'dist/web/index.html'), 'utf8');
    const initial = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
    assert.ok(initial.length >= 1);
    const bytes = initial.reduce(
      (sum, file) => sum + gzipSync(readFileSync(path.join(projectRoot, 'dist/web/assets', file))).length,
      0,
    );
    t.diagnostic(`initial JavaScript: ${(bytes / 1024).toFixed(1)} KB gzipped (${initial.join(', ')})`);
    assert.ok(bytes <= 200 * 1024, `${bytes} bytes`);
    const page = await newPage();
    const started = Date.now();
    await page.goto(`${h.base}/login`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    t.diagnostic(`sign-in page usable ${Date.now() - started} ms after navigation (cold browser context)`);
    await page.context().close();
  });

  test('a business registers in the browser with the SMS code', async () => {
    const page = await newPage();
    await page.goto(`${h.base}/register`);
    await axe(page, 'register');
    await page.getByLabel('Phone').fill(business.phone);
    const before = smsCount(business.phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Verification code').fill(await smsCode(business.phone, before));
    await page.getByLabel('Business name').fill('Wanjiru Flowers');
    await page.getByLabel('Business address').fill('Moi Avenue 1, Nairobi');
    await page.getByLabel('First name').fill(business.first);
    await page.getByLabel('Last name').fill(business.last);
    await page.getByLabel('Email').fill(business.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Country').selectOption({ label: 'Kenya' });
    await axe(page, 'register, second step');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByText('An administrator reviews new accounts').waitFor();
    await page.context().close();
  });

  test('the admin, by keyboard alone, signs in with the first-run password and the SMS code, approves the business, and goes through the pages', async () => {
    const page = await newPage();
    await page.goto(h.base);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await axe(page, 'sign in');
    await shot(page, 'sign-in');
    await keyboardSignIn(page, 'admin@localhost', adminPassword, '+254700000000');
    await page.getByRole('heading', { name: 'Approvals' }).waitFor();
    await focusOn(page, 'Approvals', 'H1');
    await page.getByRole('button', { name: `Approve ${business.first} ${business.last}` }).waitFor();
    await axe(page, 'approvals');
    await shot(page, 'approvals');
    await tabTo(page, `Approve ${business.first} ${business.last}`);
    await page.keyboard.press('Enter');
    await page.getByText('Nobody is waiting for approval.').waitFor();
    // The row and its button are gone: the outcome has the focus, not the page's body.
    await focusOn(page, `${business.first} ${business.last} approved.`);
    await axe(page, 'approvals, approved');

    await navTo(page, 'Users');
    await tabTo(page, 'Role');
    await page.keyboard.type('BUSINESS');
    await page.getByRole('cell', { name: business.email }).waitFor();
    await axe(page, 'users');

    await navTo(page, 'Live map');
    await page.locator('.leaflet-container').waitFor();
    await axe(page, 'live map');

    await navTo(page, 'Deliveries');
    await axe(page, 'deliveries (admin)');
    await page.context().close();
    adminToken = await apiLogin('admin@localhost', '+254700000000', adminPassword);
  });

  test('the business, by keyboard alone, signs in and creates a delivery through the form', async () => {
    const page = (businessPage = await newPage());
    await page.goto(`${h.base}/login`);
    await keyboardSignIn(page, business.email, PASSWORD, business.phone);
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await axe(page, 'deliveries (business, empty)');

    await tabTo(page, 'New delivery');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New delivery' }).waitFor();
    await page.locator('.leaflet-container').waitFor();
    await axe(page, 'new delivery');
    let quoteRequests = 0;
    page.on('request', (req) => {
      if (req.url() === `${h.base}/api/quotes`) quoteRequests++;
    });
    const fields: [string, string][] = [
      ['Pickup latitude', '-1.2864'],
      ['Pickup longitude', '36.8172'],
      ['Pickup address', 'Moi Avenue 1, Nairobi'],
      ['Pickup contact name', 'Wanjiru'],
      ['Pickup contact phone', '+254711200001'],
      ['Drop-off latitude', '-1.3000'],
      ['Drop-off longitude', '36.7800'],
      ['Drop-off address', 'Ngong Road 10, Nairobi'],
      ['Drop-off contact name', 'Achieng Otieno'],
      ['Drop-off contact phone', '+254722333444'],
      ['Parcel description', 'Roses, one bouquet'],
    ];
    for (const [label, value] of fields) {
      await tabTo(page, label);
      await page.keyboard.type(value);
    }
    await tabTo(page, 'Country');
    await page.keyboard.type('Kenya');
    // The price appears once the trip is known, asked once the typing stopped (not per keystroke).
    const quoted = page.getByTestId('quote').locator('.price');
    await quoted.waitFor();
    const price = await quoted.innerText();
    assert.match(price, /^KES \d{1,3}(,\d{3})*\.\d{2}$/);
    await page
      .getByTestId('quote')
      .getByText(/\d+\.\d km, about \d+ min/)
      .waitFor();
    await page.getByTestId('quote').getByText('This price holds until').waitFor();
    assert.ok(quoteRequests >= 1 && quoteRequests <= 2, `${quoteRequests} quote requests`);
    await tabTo(page, 'Reference');
    await page.keyboard.type('ORDER-1001');
    await axe(page, 'new delivery, with its price');
    await shot(page, 'new-delivery');
    await tabTo(page, 'Create delivery');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Delivery ORDER-1001' }).waitFor();
    packageId = page.url().split('/').pop()!;
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    assert.equal(await page.getByTestId('price').innerText(), price, 'the delivery has the price shown in the form');
    // The markers are drawn though the tiles cannot load.
    await page.locator('.leaflet-overlay-pane path.leaflet-interactive').nth(1).waitFor();
    assert.equal(await page.locator('.leaflet-overlay-pane path.leaflet-interactive').count(), 2);
    await axe(page, 'delivery');
  });

  test('a click on the map sets the pickup coordinates', async () => {
    const page = businessPage;
    await page.getByRole('link', { name: 'New delivery' }).click();
    await page.locator('.leaflet-container').waitFor();
    await page.locator('.leaflet-container').click({ position: { x: 200, y: 150 } });
    assert.match(await page.getByLabel('Pickup latitude').inputValue(), /^-?\d+\.\d+$/);
    assert.equal(
      await page.getByRole('radio', { name: 'Drop-off' }).isChecked(),
      true,
      'the next click sets the drop-off',
    );
    await page.locator('.leaflet-container').click({ position: { x: 260, y: 220 } });
    assert.match(await page.getByLabel('Drop-off longitude').inputValue(), /^-?\d+\.\d+$/);
    await page.goBack();
    await page.getByRole('heading', { name: 'Delivery ORDER-1001' }).waitFor();
  });

  /** The `d` of the driver's marker on the map, once drawn. */
  async function driverMarker(page: Page): Promise<string> {
    const marker = page.locator('path.marker-driver');
    await marker.waitFor();
    return (await marker.getAttribute('d')) ?? '';
  }

  async function markerMoves(page: Page, from: string, what: string) {
    await waitFor(
      async () => (await page.locator('path.marker-driver').getAttribute('d')) !== from,
      10_000,
      `the driver's marker to move on ${what}`,
    );
  }

  test('live, with no reload: a driver accepts and moves; the delivery page, the list and the tracking page follow', async () => {
    const page = businessPage;
    const driverPhone = '+254733100001';
    await call('POST', '/admin/users', adminToken, {
      email: 'rider@example.com',
      password: PASSWORD,
      firstName: 'Otieno',
      lastName: 'Rider',
      phone: driverPhone,
      role: 'DRIVER',
      countryId: kenya,
      vehicleType: 'BIKE',
      vehiclePlate: 'KMEA 123A',
    });
    const driver = (riderToken = await apiLogin('rider@example.com', driverPhone));
    await call('POST', '/drivers/me/availability', driver, { status: 'ONLINE' });
    await call('POST', '/drivers/me/location', driver, { lat: -1.2975, lng: 36.787 });

    // Three documents open before the driver acts: the delivery page, the list (another tab of
    // the business) and the public tracking page (no account).
    await page.locator('.page-head .live-live').waitFor();
    const trackingPath = new URL(await page.getByRole('textbox', { name: 'Tracking link' }).inputValue()).pathname;
    assert.match(trackingPath, /^\/t\/[\w-]{43}$/);
    const listPage = await newPage();
    await signIn(listPage, business.email, PASSWORD, business.phone);
    const row = listPage.getByRole('row', { name: /ORDER-1001/ });
    await row.getByText('PENDING').waitFor();
    assert.match(await row.getByTestId('price').innerText(), /^KES \d/);
    await listPage.locator('.page-head .live-live').waitFor();
    const tracking = await newPage();
    await tracking.goto(`${h.base}${trackingPath}`);
    await tracking.getByText('A driver has not been assigned yet.').waitFor();
    await tracking.locator('.page-head .live-live').waitFor();
    assert.equal(
      await tracking.locator('path.marker-driver').count(),
      0,
      'no driver on the map before one is assigned',
    );
    const pages = [page, listPage, tracking];
    // A reload or a navigation would drop this mark.
    for (const p of pages) await p.evaluate(() => Object.assign(window, { sameDocument: true }));

    await call('POST', `/packages/${packageId}/accept`, driver);
    await row.getByText('ASSIGNED').waitFor();
    await row.getByText('Otieno (KMEA 123A)').waitFor();
    await page.locator('.page-head .badge', { hasText: 'ASSIGNED' }).waitFor();
    await page.locator('.timeline li', { hasText: 'ASSIGNED' }).waitFor();
    await page.getByText('Otieno, BIKE KMEA 123A').waitFor();
    await tracking.locator('.page-head .badge', { hasText: 'ASSIGNED' }).waitFor();
    await tracking.locator('.timeline li', { hasText: 'ASSIGNED' }).waitFor();
    await tracking.getByText('Otieno, motorbike KMEA 123A').waitFor();
    const onPage = await driverMarker(page);
    const onTracking = await driverMarker(tracking);

    // The driver posts a position near the pickup: the marker moves and the ETA drops to a minute.
    await call('POST', '/drivers/me/location', driver, { lat: -1.2869, lng: 36.8165 });
    await markerMoves(page, onPage, 'the delivery page');
    await markerMoves(tracking, onTracking, 'the tracking page');
    await page.getByTestId('eta').getByText('About 1 min to the pickup').waitFor();
    await tracking.getByTestId('eta').getByText('Driver at the pickup in about 1 min').waitFor();
    await page.getByTestId('position').waitFor();
    await tracking.getByTestId('position').waitFor();

    // Farther away again (about 3.5 km): the ETA goes up, live.
    const near = await driverMarker(tracking);
    await call('POST', '/drivers/me/location', driver, { lat: -1.2975, lng: 36.787 });
    await markerMoves(tracking, near, 'the tracking page');
    await waitFor(
      async () => /About ([2-9]|\d\d) min to the pickup/.test(await page.getByTestId('eta').innerText()),
      10_000,
      'the ETA to grow on the delivery page',
    );
    await waitFor(
      async () => /in about ([2-9]|\d\d) min/.test(await tracking.getByTestId('eta').innerText()),
      10_000,
      'the ETA to grow on the tracking page',
    );

    // The public page shows no personal data, of the contacts or of the driver.
    const text = await tracking.locator('body').innerText();
    for (const secret of [
      'Achieng',
      '+254722333444',
      'Ngong Road',
      'Moi Avenue',
      'Wanjiru',
      'Rider',
      driverPhone,
      'ORDER-1001',
      packageId,
    ]) {
      assert.ok(!text.includes(secret), `no ${secret} on the tracking page`);
    }
    await axe(tracking, 'tracking, with a driver');
    await shot(tracking, 'tracking');
    await axe(page, 'delivery, with a driver');
    await shot(page, 'delivery');
    await shot(listPage, 'deliveries');
    assert.equal(
      await listPage.getByRole('button', { name: 'Refresh' }).count(),
      0,
      'no Refresh button while the list is live',
    );

    // The business cancels, by keyboard: the tracking page shows it live, without the driver.
    await tabTo(page, 'Reason for cancelling');
    await page.keyboard.type('The customer called it off');
    await tabTo(page, 'Cancel delivery');
    await page.keyboard.press('Space');
    await page.locator('.page-head .badge', { hasText: 'CANCELLED' }).waitFor();
    await page.getByText('The customer called it off').waitFor();
    // Cancelled after a driver was assigned: the tariff's cancellation fee.
    const fee = await page.getByTestId('cancellation-fee').innerText();
    assert.match(fee, /^KES \d/);
    // The form went with the button the user was on: its outcome has the focus, in its place.
    await focusOn(page, `Delivery cancelled. Cancellation fee: ${fee}.`);
    await tracking.locator('.page-head .badge', { hasText: 'CANCELLED' }).waitFor();
    await row.getByText('CANCELLED').waitFor();
    await waitFor(
      async () => (await tracking.locator('path.marker-driver').count()) === 0,
      10_000,
      'the driver to leave the tracking map',
    );
    for (const p of pages)
      assert.equal(
        await p.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
        true,
        `${p.url()} was not reloaded`,
      );
    await listPage.context().close();
    await tracking.context().close();
    await call('POST', '/drivers/me/availability', driver, { status: 'OFFLINE' });
  });

  test('the business, by keyboard alone, adds a webhook endpoint, sees its secret once, and a test delivery in its log', async () => {
    const page = businessPage;
    await navTo(page, 'Webhooks');
    await axe(page, 'webhooks');
    await tabTo(page, 'Endpoint URL');
    await page.keyboard.type('ftp://nope');
    await page.keyboard.press('Enter');
    // The browser's own URL check lets ftp: through; the API refuses it with its message, and the
    // focus stays in the field to correct it.
    await page.getByRole('alert').waitFor();
    assert.equal((await focused(page)).name, 'Endpoint URL');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(`${receiver.url}/hooks`);
    await page.keyboard.press('Enter');
    // The secret appears above the form: its field takes the focus, selected, ready to copy.
    await focusOn(page, 'Secret', 'INPUT');
    const secret = await page.getByLabel('Secret', { exact: true }).inputValue();
    assert.match(secret, /^whsec_/);
    const selected = await page.evaluate(() => {
      const input = document.activeElement as HTMLInputElement;
      return input.value.slice(input.selectionStart ?? 0, input.selectionEnd ?? 0);
    });
    assert.equal(selected, secret, 'the secret is selected');
    await axe(page, 'webhooks, secret shown');
    await tabTo(page, 'I have saved it');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
    await focusOn(page, 'Webhook endpoint', 'H1');
    assert.equal(await page.getByText(secret).count(), 0, 'the secret is not shown again');
    await tabTo(page, 'Send test event');
    await page.keyboard.press('Enter');
    await page.getByText('Test event queued.').waitFor();
    await focusOn(page, 'Send test event');
    await receiver.waitFor(1, 15_000);
    await tabTo(page, 'Refresh log');
    const logged = page.getByRole('row', { name: /webhook\.test.*SUCCEEDED/ });
    for (let i = 0; (await logged.count()) === 0; i++) {
      assert.ok(i < 30, 'the test delivery in the log');
      await page.keyboard.press('Enter');
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(await logged.count(), 1);
    // Refreshing leaves the focus on the button.
    assert.equal((await focused(page)).name, 'Refresh log');
    // The controls that replace one another hand the focus over: Delete asks, with "Keep endpoint"
    // focused (Enter twice does not delete), and Keep gives it back to Delete; Edit opens the form on
    // its first field, and Discard gives it back to Edit.
    await tabTo(page, 'Delete endpoint', { back: true });
    await page.keyboard.press('Enter');
    await focusOn(page, 'Keep endpoint');
    await page.keyboard.press('Enter');
    await focusOn(page, 'Delete endpoint');
    await tabTo(page, 'Edit endpoint', { back: true });
    await page.keyboard.press('Enter');
    await focusOn(page, 'Endpoint URL', 'INPUT');
    await tabTo(page, 'Discard changes');
    await page.keyboard.press('Enter');
    await focusOn(page, 'Edit endpoint');
    // A rotated secret is shown the same way, and "I have saved it" gives the focus back to Rotate.
    await tabTo(page, 'Rotate secret');
    await page.keyboard.press('Enter');
    await focusOn(page, 'Secret', 'INPUT');
    assert.notEqual(await page.getByLabel('Secret', { exact: true }).inputValue(), secret);
    await tabTo(page, 'I have saved it');
    await page.keyboard.press('Enter');
    await focusOn(page, 'Rotate secret');
    await axe(page, 'webhook endpoint');
    await shot(page, 'webhook');
  });

  test('the business goes through the console by keyboard alone: each page of the navigation, and the skip link', async () => {
    const page = businessPage;
    for (const name of ['Deliveries', 'New delivery', 'Statement', 'Webhooks', 'Deliveries']) await navTo(page, name);
    // The skip link: reached from the top of the page, shown when focused; Enter puts the focus on
    // the content, so that the next Tab is the page's first control, past the header.
    await tabTo(page, 'Skip to content', { back: true });
    const box = await page.getByRole('link', { name: 'Skip to content' }).boundingBox();
    assert.ok(
      box && box.x >= 0 && box.y >= 0 && box.width > 0,
      `the skip link is on screen when focused: ${JSON.stringify(box)}`,
    );
    await page.keyboard.press('Enter');
    await waitFor(async () => (await focused(page)).id === 'main', 5_000, 'the focus on the content');
    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).within, 'main', 'the next Tab is in the content');
    await axe(page, 'deliveries (business)');
  });

  test('signing out, by keyboard, ends the session for real', async () => {
    const page = businessPage;
    const refreshToken = await page.evaluate(() => sessionStorage.getItem('console.refreshToken'));
    assert.ok(refreshToken, 'the refresh token is kept for this tab only');
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'nothing in localStorage');
    await tabTo(page, 'Sign out', { back: true });
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await focusOn(page, 'Sign in', 'H1');
    await call('POST', '/auth/refresh', undefined, { refreshToken }, [401]);
    await page.context().close();
  });

  test('a company assigns a pending delivery of its country to one of its drivers', async () => {
    const company = await call<{ id: string }>('POST', '/admin/users', adminToken, {
      email: 'fleet@example.com',
      password: PASSWORD,
      firstName: 'Kamau',
      lastName: 'Fleet',
      phone: '+254744100001',
      role: 'COMPANY',
      countryId: kenya,
      companyName: 'Kamau Couriers',
    });
    await call('POST', '/admin/users', adminToken, {
      email: 'fleet-rider@example.com',
      password: PASSWORD,
      firstName: 'Njeri',
      lastName: 'Rider',
      phone: '+254744100002',
      role: 'DRIVER',
      countryId: kenya,
      vehicleType: 'BIKE',
      vehiclePlate: 'KMEB 456B',
      companyId: company.id,
    });
    const driver = await apiLogin('fleet-rider@example.com', '+254744100002');
    await call('POST', '/drivers/me/availability', driver, { status: 'ONLINE' });
    await call('POST', '/drivers/me/location', driver, { lat: -1.29, lng: 36.82 });
    const shop = await apiLogin(business.email, business.phone);
    const stop = {
      location: { lat: -1.2864, lng: 36.8172 },
      address: 'Moi Avenue 1',
      contactName: 'Wanjiru',
      contactPhone: '+254711200001',
    };
    const pkg = await call<{ id: string }>('POST', '/packages', shop, {
      pickup: stop,
      dropoff: {
        ...stop,
        location: { lat: -1.3, lng: 36.78 },
        address: 'Ngong Road 10',
        contactName: 'Achieng Otieno',
        contactPhone: '+254722333444',
      },
      vehicleType: 'BIKE',
      countryId: kenya,
      parcel: { description: 'Documents 1002' },
      reference: 'ORDER-1002',
    });

    // By keyboard alone: signing in, the Deliveries page, the driver chosen in the row, Assign.
    const page = await newPage();
    await page.goto(`${h.base}/login`);
    await keyboardSignIn(page, 'fleet@example.com', PASSWORD, '+254744100001');
    await page.getByRole('heading', { name: 'Drivers' }).waitFor();
    await page.getByRole('cell', { name: 'Njeri Rider' }).waitFor();
    await shot(page, 'company-drivers');
    await page.locator('.page-head .live-live').waitFor();
    await page.locator('path.marker-driver').waitFor();
    await axe(page, 'company drivers');
    await shot(page, 'company-drivers');
    await navTo(page, 'Deliveries');
    // A PENDING delivery shows the company no reference (contract section 9): its row goes by the
    // parcel until the company's driver holds it, then by the reference.
    const row = page.getByRole('row', { name: /Documents 1002|ORDER-1002/ });
    const choice = row.getByLabel('Driver for Documents 1002');
    await choice.locator('option', { hasText: 'Njeri Rider' }).waitFor({ state: 'attached' });
    await tabTo(page, 'Driver for Documents 1002');
    await page.keyboard.type('Njeri');
    assert.equal(
      await choice.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.textContent),
      'Njeri Rider — BIKE KMEB 456B (online)',
    );
    assert.equal(await row.getByText('+254722333444').count(), 0, 'no contact phone for the company');
    await axe(page, 'deliveries (company)');
    await shot(page, 'company-deliveries');
    await tabTo(page, 'Assign Documents 1002');
    await page.keyboard.press('Enter');
    await row.getByText('ASSIGNED', { exact: true }).waitFor();
    // The row's form went with the PENDING status: its outcome has the focus, in the row.
    await focusOn(page, 'Assigned to Njeri Rider.');
    await tabTo(page, 'ORDER-1002', { back: true });
    await page.keyboard.press('Enter');
    await page.getByText('Njeri, BIKE KMEB 456B').waitFor();
    assert.equal((await call<{ status: string }>('GET', `/packages/${pkg.id}`, shop)).status, 'ASSIGNED');
    await page.context().close();

    // The admin's live map streams the drivers in view: Njeri; Otieno when he comes online, and
    // no more when he goes offline.
    const admin = await newPage();
    await signIn(admin, 'admin@localhost', adminPassword, '+254700000000');
    await admin.getByRole('link', { name: 'Live map' }).click();
    await admin.locator('.page-head .live-live').waitFor();
    await admin
      .getByText('1 driver in view, 1 online.')
      .waitFor()
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await admin.locator('main').innerText()}`);
      });
    await admin.evaluate(() => Object.assign(window, { sameDocument: true }));
    await call('POST', '/drivers/me/availability', riderToken, { status: 'ONLINE' });
    await call('POST', '/drivers/me/location', riderToken, { lat: -1.28, lng: 36.83 });
    await admin.getByText('2 drivers in view, 2 online.').waitFor();
    await axe(admin, 'live map, with drivers');
    await shot(admin, 'live-map');
    await call('POST', '/drivers/me/availability', riderToken, { status: 'OFFLINE' });
    await admin.getByText('1 driver in view, 1 online.').waitFor();
    assert.equal(
      await admin.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
      true,
      'the live map was not reloaded',
    );
    await admin.context().close();

    // A link that is unknown (or rotated, or expired) says so.
    const tracking = await newPage();
    await tracking.goto(`${h.base}/t/not-a-real-token-0123456789abcdef`);
    await tracking.getByRole('alert').waitFor();
    await tracking.getByRole('heading', { name: 'Your delivery' }).waitFor();
    await axe(tracking, 'tracking, unknown link');
    await tracking.context().close();
  });

  test('the form shows a quote refused with its message, and quotes again when the price expired at creation', async () => {
    const page = await newPage();
    await signIn(page, business.email, PASSWORD, business.phone);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New delivery' }).click();
    await page.getByRole('heading', { name: 'New delivery' }).waitFor();
    const fill = async (fields: [string, string][]) => {
      for (const [label, value] of fields) await page.getByLabel(label, { exact: true }).fill(value);
    };
    // Douala is not in Kenya.
    await fill([
      ['Pickup latitude', '4.05'],
      ['Pickup longitude', '9.70'],
      ['Drop-off latitude', '4.06'],
      ['Drop-off longitude', '9.72'],
    ]);
    await page.getByLabel('Country').selectOption({ label: 'Kenya' });
    await page
      .getByTestId('quote')
      .getByText('The pickup and the dropoff must be in the country (KE)')
      .waitFor()
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await page.locator('main').innerText()}`);
      });
    await axe(page, 'new delivery, quote refused');

    await fill([
      ['Pickup latitude', '-1.2864'],
      ['Pickup longitude', '36.8172'],
      ['Pickup address', 'Moi Avenue 1'],
      ['Pickup contact name', 'Wanjiru'],
      ['Pickup contact phone', '+254711200001'],
      ['Drop-off latitude', '-1.3'],
      ['Drop-off longitude', '36.78'],
      ['Drop-off address', 'Ngong Road 10'],
      ['Drop-off contact name', 'Achieng Otieno'],
      ['Drop-off contact phone', '+254722333444'],
      ['Parcel description', 'Shoes'],
      ['Reference', 'ORDER-1004'],
    ]);
    await page.getByTestId('quote').locator('.price').waitFor();
    let quotes = 0;
    page.on('request', (req) => {
      if (req.url() === `${h.base}/api/quotes`) quotes++;
    });
    // The quote's TTL is minutes: the server's answer to a late creation is played here, once.
    let sent: { quoteId?: string } | undefined;
    await page.route(
      `${h.base}/api/packages`,
      async (route) => {
        sent = route.request().postDataJSON() as { quoteId?: string };
        await route.fulfill({
          status: 409,
          contentType: 'application/json',
          body: JSON.stringify({
            statusCode: 409,
            error: 'Conflict',
            code: 'QUOTE_EXPIRED',
            message: 'The quote has expired: ask for a new one',
          }),
        });
      },
      { times: 1 },
    );
    await page.getByRole('button', { name: 'Create delivery' }).click();
    await page.getByRole('alert').getByText('The price had expired. Here is a new one').waitFor();
    await page.getByTestId('quote').locator('.price').waitFor();
    assert.equal(quotes, 1, 'a new quote was asked');
    assert.match(sent?.quoteId ?? '', UUID_PATTERN, 'the create carried the quote id');
    // A quote the server no longer has (forgotten, or kept in a Redis that is down): the same, a new quote.
    await page.route(
      `${h.base}/api/packages`,
      async (route) => {
        await route.fulfill({
          status: 404,
          contentType: 'application/json',
          body: JSON.stringify({
            statusCode: 404,
            error: 'Not Found',
            code: 'QUOTE_NOT_FOUND',
            message: 'Quote not found',
          }),
        });
      },
      { times: 1 },
    );
    await page.getByRole('button', { name: 'Create delivery' }).click();
    for (const until = Date.now() + 10_000; quotes < 2 && Date.now() < until;)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(quotes, 2, 'a new quote was asked after QUOTE_NOT_FOUND');
    await page.getByRole('alert').getByText('The price had expired. Here is a new one').waitFor();
    await page.getByTestId('quote').locator('.price').waitFor();
    await page.getByRole('button', { name: 'Create delivery' }).click();
    await page.getByRole('heading', { name: 'Delivery ORDER-1004' }).waitFor();
    await page.context().close();
  });

  test('the statement shows the delivered and the cancelled delivery with the totals, and downloads as CSV', async () => {
    const shop = await apiLogin(business.email, business.phone);
    const stop = {
      location: { lat: -1.2864, lng: 36.8172 },
      address: 'Moi Avenue 1',
      contactName: 'Wanjiru',
      contactPhone: '+254711200001',
    };
    const pkg = await call<{ id: string }>('POST', '/packages', shop, {
      pickup: stop,
      dropoff: { ...stop, location: { lat: -1.3, lng: 36.78 }, address: 'Ngong Road 10' },
      vehicleType: 'BIKE',
      countryId: kenya,
      parcel: { description: 'Books' },
      reference: 'ORDER-1003',
    });
    await call('POST', '/drivers/me/availability', riderToken, { status: 'ONLINE' });
    await call('POST', '/drivers/me/location', riderToken, { lat: -1.2869, lng: 36.8165 });
    for (const step of ['accept', 'pickup', 'start', 'deliver'])
      await call('POST', `/packages/${pkg.id}/${step}`, riderToken, step === 'deliver' ? {} : undefined);
    await call('POST', '/drivers/me/availability', riderToken, { status: 'OFFLINE' });
    type Money = { amount: number; currency: string } | null;
    const delivered = await call<{ price: Money }>('GET', `/packages/${pkg.id}`, shop);
    const cancelled = await call<{ price: Money; cancellationFee: Money }>('GET', `/packages/${packageId}`, shop);
    const kes = (minor: number) =>
      `KES ${(minor / 100).toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

    const page = await newPage();
    await signIn(page, business.email, PASSWORD, business.phone);
    await page.getByRole('link', { name: 'Statement' }).click();
    await page.getByRole('heading', { name: 'Statement' }).waitFor();
    const deliveredRow = page.getByRole('row', { name: /ORDER-1003/ });
    await deliveredRow.getByText('DELIVERED').waitFor();
    assert.equal(
      await deliveredRow.getByRole('cell').nth(7).innerText(),
      kes(delivered.price!.amount),
      'a delivered package is charged its price',
    );
    const cancelledRow = page.getByRole('row', { name: /ORDER-1001/ });
    await cancelledRow.getByText('CANCELLED').waitFor();
    assert.equal(await cancelledRow.getByRole('cell').nth(6).innerText(), kes(cancelled.cancellationFee!.amount));
    assert.equal(
      await cancelledRow.getByRole('cell').nth(7).innerText(),
      kes(cancelled.cancellationFee!.amount),
      'a cancelled one its fee',
    );
    const total = page.getByRole('row', { name: /^KES/ });
    assert.equal(await total.getByRole('cell').first().innerText(), '2');
    assert.equal(
      await total.getByTestId('total-amount').innerText(),
      kes(delivered.price!.amount + cancelled.cancellationFee!.amount),
    );
    await axe(page, 'statement');
    await shot(page, 'statement');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^statement-\d{4}-\d\d-\d\d-to-\d{4}-\d\d-\d\d\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8');
    assert.match(csv, /^\uFEFFtype,packageId,reference,/);
    assert.match(csv, /\r\nPACKAGE,[^\r]*,ORDER-1003,DELIVERED,/);
    assert.match(
      csv,
      new RegExp(
        `\\r\\nTOTAL,[^\\r]*,KES,[^\\r]*,${delivered.price!.amount + cancelled.cancellationFee!.amount}(\\r\\n)?$`,
      ),
    );

    // An empty period says so.
    await page.getByLabel('From').fill('2020-01-01');
    await page.getByLabel('To (included)').fill('2020-01-31');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No finished deliveries in this period.').waitFor();
    await page.context().close();
  });

  test('an unknown console path shows the not-found page; no page error and no CSP violation anywhere', async (t) => {
    const page = await newPage();
    await signIn(page, business.email, PASSWORD, business.phone);
    await page.goto(`${h.base}/no/such/page`);
    // A reload keeps the session of the tab (the refresh token), not the access token.
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await axe(page, 'not found');
    await page.context().close();
    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
    t.diagnostic(`the console flows made ${apiRequests} API requests`);
  });
});
