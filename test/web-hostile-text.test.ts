// User data on the console's maps is text, never markup: names and addresses that are HTML (a
// <meta http-equiv="refresh"> sends the viewer elsewhere; the CSP does not stop it) show literally in
// every marker's tooltip, and nothing they contain becomes an element. Playwright driving the
// operating system's Chromium against a started instance, as test/console.test.ts does.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Page } from 'playwright-core';
import { chromiumSkip, useBrowserHarness } from './helpers/browser.js';

const skip = chromiumSkip('the web console');
const PASSWORD = 'hostile-test-Passw0rd';
const ADMIN = { email: 'admin@example.com', phone: '+254700000009' };

// Each would act if written as HTML: a refresh to another address, bold text, a script on error.
const HOSTILE = {
  driverFirst: '<meta http-equiv="refresh" content="0;url=/hijacked-by-driver">',
  driverLast: '<b>Bold</b><img src=x onerror="document.title=\'pwned\'">',
  pickupAddress: '<img src=x onerror="alert(1)"> Moi Avenue <b>1</b>',
  dropoffAddress: '<meta http-equiv="refresh" content="0;url=/hijacked-by-address"><b>Ngong Road</b>',
  pickupContact: '<b>Wanjiru</b>',
  dropoffContact: '<i>Achieng</i><meta http-equiv="refresh" content="0;url=/hijacked-by-contact">',
  companyFirst: '<b>Kamau</b>',
  businessFirst: '<meta http-equiv="refresh" content="0;url=/hijacked-by-business">',
};

describe('user data on the maps is shown as text', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-hostile-',
    password: PASSWORD,
    env: {
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PHONE: ADMIN.phone,
      ADMIN_PASSWORD: PASSWORD,
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '2000/15m',
      DISPATCH_MODE: 'off',
      TRACKING_INTERVAL: '500ms',
    },
  });
  const { smsCount, smsCode, call, apiLogin } = h;
  let packageId = '';
  let trackingPath = '';

  async function newPage(): Promise<Page> {
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.route(/tile\.openstreetmap\.org/, (route) => route.abort());
    h.watch(page);
    return page;
  }

  async function signIn(page: Page, identifier: string, phone: string) {
    await page.goto(`${h.base}/login`);
    await page.getByLabel('Email or phone').fill(identifier);
    await page.getByLabel('Password').fill(PASSWORD);
    const before = smsCount(phone);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Verification code').fill(await smsCode(phone, before));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** Marks the document: a navigation (a meta refresh) or a reload would drop the mark. */
  async function mark(page: Page) {
    await page.evaluate(() => Object.assign(window, { sameDocument: true }));
    return page.url();
  }

  async function stayed(page: Page, url: string) {
    assert.equal(
      await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
      true,
      `${url} was left or reloaded`,
    );
    assert.equal(page.url(), url);
  }

  /** Hovers the marker of a kind: its tooltip shows `text` literally, and nothing in it became an element. */
  async function tooltipOf(page: Page, kind: string, text: string) {
    const marker = page.locator(`path.marker-${kind}`);
    await marker.waitFor();
    await marker.hover();
    const tooltip = page.locator('.leaflet-tooltip-pane .leaflet-tooltip');
    await tooltip.waitFor();
    const shown = await tooltip.evaluate((el) => ({
      text: el.textContent,
      injected: [...el.querySelectorAll('meta, b, i, img')].map((e) => e.tagName.toLowerCase()),
    }));
    assert.deepEqual(shown, { text, injected: [] }, `the ${kind} marker's tooltip`);
    assert.equal(await page.locator('meta[http-equiv]').count(), 0, 'no meta element was added to the page');
    // Away from the map, so that the tooltip closes before the next marker is hovered.
    await page.mouse.move(1, 1);
    await tooltip.waitFor({ state: 'detached' });
  }

  test('accounts and a delivery with hostile names and addresses are accepted as text', async () => {
    const countries = (await (await fetch(`${h.base}/api/countries`)).json()) as {
      items: { id: string; code: string }[];
    };
    const kenya = countries.items.find((c) => c.code === 'KE')!.id;
    const admin = await apiLogin(ADMIN.email, ADMIN.phone);
    const company = await call<{ id: string }>('POST', '/admin/users', admin, {
      email: 'fleet@example.com',
      password: PASSWORD,
      firstName: HOSTILE.companyFirst,
      lastName: 'Fleet',
      phone: '+254744100001',
      role: 'COMPANY',
      countryId: kenya,
      companyName: '<b>Kamau Couriers</b>',
    });
    await call('POST', '/admin/users', admin, {
      email: 'rider@example.com',
      password: PASSWORD,
      firstName: HOSTILE.driverFirst,
      lastName: HOSTILE.driverLast,
      phone: '+254744100002',
      role: 'DRIVER',
      countryId: kenya,
      vehicleType: 'BIKE',
      vehiclePlate: 'KMEB 456B',
      companyId: company.id,
    });
    await call('POST', '/admin/users', admin, {
      email: 'shop@example.com',
      password: PASSWORD,
      firstName: HOSTILE.businessFirst,
      lastName: 'Shop',
      phone: '+254711200001',
      role: 'BUSINESS',
      countryId: kenya,
      businessName: '<img src=x onerror="alert(2)">',
      businessAddress: 'Moi Avenue 1',
    });
    const shop = await apiLogin('shop@example.com', '+254711200001');
    const pkg = await call<{ id: string; trackingUrl: string }>('POST', '/packages', shop, {
      pickup: {
        location: { lat: -1.2864, lng: 36.8172 },
        address: HOSTILE.pickupAddress,
        contactName: HOSTILE.pickupContact,
        contactPhone: '+254711200001',
      },
      dropoff: {
        location: { lat: -1.3, lng: 36.78 },
        address: HOSTILE.dropoffAddress,
        contactName: HOSTILE.dropoffContact,
        contactPhone: '+254722333444',
      },
      vehicleType: 'BIKE',
      countryId: kenya,
      parcel: { description: '<b>Roses</b>' },
      reference: 'ORDER-2001',
    });
    packageId = pkg.id;
    trackingPath = new URL(pkg.trackingUrl).pathname;
    const driver = await apiLogin('rider@example.com', '+254744100002');
    await call('POST', '/drivers/me/availability', driver, { status: 'ONLINE' });
    await call('POST', '/drivers/me/location', driver, { lat: -1.27, lng: 36.85 });
    await call('POST', `/packages/${pkg.id}/accept`, driver);
  });

  test("the admin's live map: the driver's tooltip is his name as text", async () => {
    const page = await newPage();
    await signIn(page, ADMIN.email, ADMIN.phone);
    await page.getByRole('link', { name: 'Live map' }).click();
    await page.locator('.page-head .live-live').waitFor();
    await page.getByText('1 driver in view, 1 online.').waitFor();
    const url = await mark(page);
    await tooltipOf(page, 'driver', `${HOSTILE.driverFirst} · BIKE · on a job`);
    await stayed(page, url);
    await page.context().close();
  });

  test("the company's drivers map: the driver's tooltip is his name as text", async () => {
    const page = await newPage();
    await signIn(page, 'fleet@example.com', '+254744100001');
    await page.getByRole('heading', { name: 'Drivers' }).waitFor();
    await page.getByRole('cell', { name: `${HOSTILE.driverFirst} ${HOSTILE.driverLast}` }).waitFor();
    await page.locator('.page-head .live-live').waitFor();
    const url = await mark(page);
    await tooltipOf(page, 'driver', `${HOSTILE.driverFirst} · BIKE · on a job`);
    await stayed(page, url);
    await page.context().close();
  });

  test("a delivery's page: the pickup, drop-off and driver tooltips are the addresses and the name as text", async () => {
    const page = await newPage();
    await signIn(page, 'shop@example.com', '+254711200001');
    await page.goto(`${h.base}/deliveries/${packageId}`);
    await page.getByRole('heading', { name: 'Delivery ORDER-2001' }).waitFor();
    await page.getByText(`${HOSTILE.driverFirst}, BIKE KMEB 456B`).waitFor();
    // React's own rendering of the same data, for comparison: text too.
    await page.getByText(`${HOSTILE.pickupAddress} — ${HOSTILE.pickupContact} +254711200001`).waitFor();
    await page.getByText(`${HOSTILE.dropoffAddress} — ${HOSTILE.dropoffContact} +254722333444`).waitFor();
    const url = await mark(page);
    await tooltipOf(page, 'pickup', `Pickup: ${HOSTILE.pickupAddress}`);
    await tooltipOf(page, 'dropoff', `Drop-off: ${HOSTILE.dropoffAddress}`);
    await tooltipOf(page, 'driver', `Driver ${HOSTILE.driverFirst}`);
    await stayed(page, url);
    assert.equal(await page.title(), 'Delivery ORDER-2001 · Delivery console');
    await page.context().close();
  });

  test('the public tracking page: its markers are labelled as text', async () => {
    const page = await newPage();
    await page.goto(`${h.base}${trackingPath}`);
    await page.getByRole('heading', { name: 'Your delivery' }).waitFor();
    const url = await mark(page);
    await tooltipOf(page, 'pickup', 'Pickup');
    await tooltipOf(page, 'dropoff', 'Drop-off');
    await tooltipOf(page, 'driver', 'Driver');
    await stayed(page, url);
    await page.context().close();
  });

  test('no page error and no CSP violation (an injected <img onerror> would be one)', () => {
    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
  });
});
