// The driver app (contract section 19) in a real browser: Playwright driving the operating system's
// Chromium as a phone (Pixel 7 at 360 × 740, touch, geolocation allowed and moving) against a started
// instance. A driver registers in the app, is approved, signs in, goes online (positions over the
// WebSocket), gets the offer for a package created nearby, accepts, navigates, picks up, starts and
// delivers with the delivery code; the business sees DELIVERED. The app shell opens offline once the
// service worker is installed, with the current job as last seen. No horizontal scrolling, touch
// targets of 48 px at least, no uncaught page error, no CSP violation.
// DRIVER_SCREENSHOTS=docs/screenshots saves each screen as driver-<name>.png.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { before, describe, test } from 'node:test';
import { devices, type BrowserContext, type Page } from 'playwright-core';
import { assertPhoneLayout, chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { projectRoot, waitFor } from './helpers/processes.js';

const skip = chromiumSkip('the driver app');
const screenshots = process.env.DRIVER_SCREENSHOTS
  ? path.resolve(projectRoot, process.env.DRIVER_SCREENSHOTS)
  : undefined;
const PASSWORD = 'driver-test-Passw0rd';
const PICKUP = { lat: -1.2864, lng: 36.8172 };
const DROPOFF = { lat: -1.3, lng: 36.78 };

describe('driver app in Chromium (phone)', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-driver-app-',
    password: PASSWORD,
    env: {
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '2000/15m',
      DISPATCH_MODE: 'offer',
      // Long enough for a loaded machine to show the card and tap Accept.
      DISPATCH_OFFER_TTL: '120s',
    },
  });
  const { smsCount, smsCode, call, apiLogin } = h;
  let adminToken: string;
  let context: BrowserContext;
  let page: Page;
  let kenya: string;
  const driver = {
    phone: '+254733500001',
    email: 'otieno.rider@example.com',
    first: 'Otieno',
    last: 'Rider',
    plate: 'KMEA 123B',
  };
  const shop = { phone: '+254733500002', email: 'mama.shop@example.com' };

  before(async () => {
    const countries = (await (await fetch(`${h.base}/api/countries`)).json()) as {
      items: { id: string; code: string }[];
    };
    kenya = countries.items.find((c) => c.code === 'KE')!.id;
    adminToken = await apiLogin('admin@localhost', '+254700000000', h.adminPassword);
    if (screenshots) mkdirSync(screenshots, { recursive: true });
  });

  // ---- helpers ----------------------------------------------------------------------------------

  async function approve(email: string) {
    const pending = await call<{ items: { id: string; email: string }[] }>(
      'GET',
      '/admin/users?status=PENDING_APPROVAL',
      adminToken,
    );
    const user = pending.items.find((u) => u.email === email);
    assert.ok(user, `${email} waits for approval`);
    await call('POST', `/admin/users/${user.id}/approve`, adminToken);
  }

  const phoneLayout = (what: string) => assertPhoneLayout(page, what);

  async function shot(name: string) {
    if (screenshots)
      await page.screenshot({ path: path.join(screenshots, `driver-${name}.png`), scale: 'css', fullPage: true });
  }

  // ---- the flow ---------------------------------------------------------------------------------

  test("the driver app's JavaScript at first load is small (gzipped)", (t) => {
    const html = readFileSync(path.join(projectRoot, 'dist/web/driver/index.html'), 'utf8');
    const initial = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
    assert.ok(
      initial.some((f) => f.startsWith('driver-')),
      'its own entry chunk',
    );
    assert.ok(!initial.some((f) => f.startsWith('console-')), "not the console's");
    const bytes = initial.reduce(
      (sum, file) => sum + gzipSync(readFileSync(path.join(projectRoot, 'dist/web/assets', file)), { level: 9 }).length,
      0,
    );
    t.diagnostic(`driver app initial JavaScript: ${(bytes / 1024).toFixed(1)} KiB gzipped (${initial.join(', ')})`);
    assert.ok(bytes <= 200 * 1024, `${bytes} bytes`);
  });

  test('/driver/ serves the page, the manifest and a service worker that is never cached for long', async () => {
    const redirect = await fetch(`${h.base}/driver`, { redirect: 'manual' });
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get('location'), '/driver/');
    const pageRes = await fetch(`${h.base}/driver/`);
    assert.equal(pageRes.status, 200);
    assert.match(pageRes.headers.get('content-security-policy') ?? '', /connect-src 'self'/);
    assert.match(await pageRes.text(), /<link rel="manifest" href="\/driver\/manifest.webmanifest"/);
    const sw = await fetch(`${h.base}/driver/sw.js`);
    assert.equal(sw.status, 200);
    assert.match(sw.headers.get('content-type') ?? '', /javascript/);
    assert.equal(sw.headers.get('cache-control'), 'no-cache');
    const manifestRes = await fetch(`${h.base}/driver/manifest.webmanifest`);
    assert.match(manifestRes.headers.get('content-type') ?? '', /manifest\+json/);
    const manifest = (await manifestRes.json()) as {
      start_url: string;
      scope: string;
      display: string;
      icons: { src: string; sizes: string }[];
    };
    assert.equal(manifest.start_url, '/driver/');
    assert.equal(manifest.scope, '/driver/');
    assert.equal(manifest.display, 'standalone');
    for (const size of ['192x192', '512x512']) {
      const icon = manifest.icons.find((i) => i.sizes === size)!;
      const res = await fetch(`${h.base}${icon.src}`);
      assert.equal(res.headers.get('content-type'), 'image/png');
      const png = Buffer.from(await res.arrayBuffer());
      assert.equal(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`, size, `${icon.src} is ${size}`);
    }
    // The console is unchanged: no worker or manifest on its page.
    const consoleHtml = await (await fetch(`${h.base}/`)).text();
    assert.doesNotMatch(consoleHtml, /manifest|sw\.js/);
  });

  test('a driver registers in the app and waits for approval', async () => {
    context = await h.browser.newContext({
      ...devices['Pixel 7'],
      viewport: { width: 360, height: 740 },
      geolocation: { latitude: PICKUP.lat - 0.004, longitude: PICKUP.lng - 0.003, accuracy: 12 },
      permissions: ['geolocation'],
      serviceWorkers: 'allow',
    });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    h.watch(page);
    await page.goto(`${h.base}/driver/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await phoneLayout('sign in');
    await shot('sign-in');
    await page.getByRole('button', { name: 'Register as a driver' }).click();
    await page.getByRole('heading', { name: 'Register as a driver' }).waitFor();
    await page.getByLabel('Phone').fill(driver.phone);
    const before = smsCount(driver.phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Verification code').fill(await smsCode(driver.phone, before));
    await page.getByLabel('First name').fill(driver.first);
    await page.getByLabel('Last name').fill(driver.last);
    await page.getByLabel('Email').fill(driver.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Country').selectOption({ label: 'Kenya' });
    await page.getByLabel('Vehicle type').selectOption({ label: 'Bike' });
    await page.getByLabel('Plate').fill(driver.plate);
    await phoneLayout('register');
    await shot('register');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Waiting for approval' }).waitFor();
    await phoneLayout('waiting for approval');
    await shot('waiting');
  });

  test('approved, the driver signs in (password, then the SMS code) and goes online: positions go out over the WebSocket', async () => {
    await approve(driver.email);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Email or phone').fill(driver.email);
    await page.getByLabel('Password').fill(PASSWORD);
    const before = smsCount(driver.phone);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Verification code').fill(await smsCode(driver.phone, before));
    await phoneLayout('verification');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: `Hello, ${driver.first}` }).waitFor();
    await page.getByRole('button', { name: 'Go online' }).click();
    await page.getByRole('button', { name: 'Go offline' }).waitFor();
    await page.getByText('Connected', { exact: true }).waitFor();
    await page.getByText('± 12 m').waitFor();
    // Moving towards the pickup: the server's live index follows the phone.
    for (const [i, step] of [0.003, 0.002, 0.001].entries()) {
      await context.setGeolocation({ latitude: PICKUP.lat - step, longitude: PICKUP.lng - step, accuracy: 8 + i });
    }
    const bbox = `${PICKUP.lng - 0.05},${PICKUP.lat - 0.05},${PICKUP.lng + 0.05},${PICKUP.lat + 0.05}`;
    await waitFor(
      async () => {
        const live = await call<{ drivers: { firstName: string; location: { lat: number; lng: number } | null }[] }>(
          'GET',
          `/admin/drivers/live?bbox=${bbox}`,
          adminToken,
        );
        const me = live.drivers.find((d) => d.firstName === driver.first);
        return !!me?.location && Math.abs(me.location.lat - (PICKUP.lat - 0.001)) < 1e-6;
      },
      15_000,
      'the newest position at the server',
    );
    await page
      .getByText(/Last position sent: |s ago/)
      .first()
      .waitFor();
    await phoneLayout('home, online');
    await shot('home-online');
  });

  let packageId = '';
  let deliveryCode = '';
  let shopToken = '';

  test('a package created nearby is offered: the card shows distance, ETA, areas, price and a countdown; the driver accepts', async () => {
    const before = smsCount(shop.phone);
    const otp = await call<{ sessionId: string; phone: string }>('POST', '/auth/register/send-otp', undefined, {
      phone: shop.phone,
    });
    await call('POST', '/auth/register', undefined, {
      sessionId: otp.sessionId,
      phone: otp.phone,
      code: await smsCode(shop.phone, before),
      email: shop.email,
      password: PASSWORD,
      firstName: 'Mama',
      lastName: 'Shop',
      role: 'BUSINESS',
      countryId: kenya,
      businessName: 'Mama Shop',
    });
    await approve(shop.email);
    shopToken = await apiLogin(shop.email, shop.phone);
    const created = await call<{ id: string; deliveryCode: string }>('POST', '/packages', shopToken, {
      pickup: { location: PICKUP, address: 'Moi Avenue 1', contactName: 'Wanjiru', contactPhone: '+254711200001' },
      dropoff: {
        location: DROPOFF,
        address: 'Ngong Road 10',
        contactName: 'Achieng Otieno',
        contactPhone: '+254722333444',
      },
      vehicleType: 'BIKE',
      countryId: kenya,
      parcel: { description: 'Flowers', size: 'SMALL' },
      reference: 'ORDER-7001',
      requireDeliveryCode: true,
      // Cash on delivery (section 21): the driver collects KES 1,500.00 for the shop.
      cashOnDelivery: { amount: 150_000 },
    });
    packageId = created.id;
    deliveryCode = created.deliveryCode;
    assert.match(deliveryCode, /^\d{4}$/);

    const offer = page.getByRole('dialog', { name: 'Offer' });
    await offer.waitFor();
    await offer.getByText('Moi Avenue 1').waitFor();
    await offer.getByText(/KES \d/).waitFor();
    assert.match((await offer.textContent()) ?? '', /\d+ m · (under a minute|\d+ min)/);
    assert.match((await offer.locator('.countdown').textContent()) ?? '', /^\d+ s left$/);
    await offer.getByText(`${DROPOFF.lat.toFixed(4)}, ${DROPOFF.lng.toFixed(4)}`).waitFor();
    await phoneLayout('offer');
    await shot('offer');
    await offer.getByRole('button', { name: 'Accept' }).click();
    await offer.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: /Delivery ASSIGNED/ }).waitFor();
  });

  test('the current job: Navigate to the pickup, call or text its contact', async () => {
    const navigate = page.getByRole('link', { name: 'Navigate' });
    assert.equal(await navigate.getAttribute('href'), `geo:${PICKUP.lat},${PICKUP.lng}?q=${PICKUP.lat},${PICKUP.lng}`);
    assert.equal(
      await page.getByRole('link', { name: 'Open in Google Maps' }).getAttribute('href'),
      `https://www.google.com/maps/dir/?api=1&destination=${PICKUP.lat},${PICKUP.lng}`,
    );
    assert.equal(await page.getByRole('link', { name: 'Call' }).getAttribute('href'), 'tel:+254711200001');
    assert.equal(await page.getByRole('link', { name: 'Text' }).getAttribute('href'), 'sms:+254711200001');
    await phoneLayout('job');
    // A tap hands geo: to the phone's maps and the app stays where it is. In a tab of its own: headless
    // Chromium keeps the tab that launched an external protocol from taking any more input.
    const tab = await context.newPage();
    await tab.goto(`${h.base}/driver/`);
    await tab.getByRole('link', { name: 'Navigate' }).click();
    await tab.getByRole('button', { name: 'Picked up' }).waitFor();
    assert.equal(new URL(tab.url()).pathname, '/driver/');
    await tab.close();
    await shot('job');
  });

  test('offline, the installed app shell opens and shows the current job as last seen', async () => {
    await page.evaluate(() => navigator.serviceWorker.ready);
    await waitFor(
      () => page.evaluate(() => navigator.serviceWorker.controller !== null),
      15_000,
      'the service worker controls the page',
    );
    await context.setOffline(true);
    await page.reload();
    await page.getByRole('heading', { name: 'Offline' }).waitFor();
    await page.getByText('Moi Avenue 1').waitFor();
    await page.getByText('Wanjiru').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Picked up' }).count(), 0, 'no steps offline');
    await phoneLayout('offline');
    await shot('offline');
    await context.setOffline(false);
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('button', { name: 'Picked up' }).waitFor();
  });

  test('Picked up, Start delivery, the delivery code, Delivered: the business sees DELIVERED', async () => {
    await page.getByRole('button', { name: 'Picked up' }).click();
    await page.getByRole('heading', { name: /Delivery PICKED UP/ }).waitFor();
    assert.equal(
      await page.getByRole('link', { name: 'Navigate' }).getAttribute('href'),
      `geo:${DROPOFF.lat},${DROPOFF.lng}?q=${DROPOFF.lat},${DROPOFF.lng}`,
    );
    assert.equal(await page.getByRole('link', { name: 'Call' }).getAttribute('href'), 'tel:+254722333444');
    await page.getByRole('button', { name: 'Start delivery' }).click();
    await page.getByRole('heading', { name: /Delivery IN TRANSIT/ }).waitFor();
    // The cash to collect is shown before "Delivered"; a different amount is refused (409 COD_MISMATCH).
    await page.getByText('Cash to collect:').waitFor();
    await page.getByText('KES 1,500.00').waitFor();
    await page.getByLabel('Cash collected').fill('1400');
    await page.getByLabel('Delivery code').fill(deliveryCode);
    await page.getByRole('button', { name: 'Delivered' }).click();
    await page
      .getByRole('alert')
      .getByText(/cashCollected/)
      .waitFor();
    await page.getByLabel('Cash collected').fill('1500');
    await page.getByLabel('Delivery code').fill('');
    // Without the code the server refuses, and says why.
    await page.getByRole('button', { name: 'Delivered' }).click();
    await page
      .getByRole('alert')
      .getByText(/deliveryCode/)
      .waitFor();
    await page.getByLabel('Delivery code').fill(deliveryCode);
    await phoneLayout('deliver');
    await shot('deliver');
    await page.getByRole('button', { name: 'Delivered' }).click();
    await page.getByText('Delivered. Well done.').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Call' }).count(), 0, 'no contact once the job is over');
    const pkg = await call<{ status: string; cashCollected: { amount: number } | null }>(
      'GET',
      `/packages/${packageId}`,
      shopToken,
    );
    assert.equal(pkg.status, 'DELIVERED');
    assert.deepEqual(pkg.cashCollected, { amount: 150_000, currency: 'KES' });

    // The earnings of the day: one job, its earnings and the cash collected, as the API reports them.
    await page.getByRole('button', { name: 'Earnings' }).click();
    const today = page.getByRole('region', { name: 'Today' });
    await today.waitFor();
    const facts = (await today.locator('dd').allTextContents()).map((text) => text.trim());
    assert.equal(facts[0], '1', `jobs today: ${facts.join(' | ')}`);
    assert.match(facts[1] ?? '', /^KES [1-9][\d,]*\.\d\d$/, 'earnings today');
    assert.equal(facts[3], 'KES 1,500.00', 'cash collected today');
    await phoneLayout('earnings');
    await shot('earnings');

    await page.getByRole('button', { name: 'Past jobs' }).click();
    await page.getByRole('heading', { name: 'Past jobs' }).waitFor();
    await page.getByText('DELIVERED').waitFor();
    await phoneLayout('past jobs');
    await shot('past-jobs');
    await page.getByRole('button', { name: 'Home' }).click();
    await page.getByRole('button', { name: 'Go offline' }).waitFor();
  });

  async function newPackage(reference: string): Promise<string> {
    const created = await call<{ id: string }>('POST', '/packages', shopToken, {
      pickup: {
        location: PICKUP,
        address: `Kenyatta Avenue ${reference}`,
        contactName: 'Wanjiru',
        contactPhone: '+254711200001',
      },
      dropoff: {
        location: DROPOFF,
        address: 'Ngong Road 10',
        contactName: 'Achieng Otieno',
        contactPhone: '+254722333444',
      },
      vehicleType: 'BIKE',
      countryId: kenya,
      parcel: { description: 'Books' },
      reference,
    });
    return created.id;
  }

  test('Decline: the card leaves the screen and the offer is recorded as declined', async () => {
    const id = await newPackage('ORDER-7002');
    const offer = page.getByRole('dialog', { name: 'Offer' });
    await offer.getByText('Kenyatta Avenue ORDER-7002').waitFor();
    await offer.getByRole('button', { name: 'Decline' }).click();
    await offer.waitFor({ state: 'detached' });
    const log = await call<{ offers: { outcome: string }[] }>('GET', `/admin/dispatch/${id}`, adminToken);
    assert.deepEqual(
      log.offers.map((o) => o.outcome),
      ['DECLINED'],
    );
    await call('POST', `/packages/${id}/cancel`, shopToken, {});
  });

  test('withdrawn: the business cancels while the card is up, and the card leaves the screen', async () => {
    const id = await newPackage('ORDER-7003');
    const offer = page.getByRole('dialog', { name: 'Offer' });
    await offer.getByText('Kenyatta Avenue ORDER-7003').waitFor();
    await call('POST', `/packages/${id}/cancel`, shopToken, { reason: 'Changed my mind' });
    await offer.waitFor({ state: 'detached' });
    await page.getByText('No job yet: offers appear here.').waitFor();
  });

  async function acceptNew(reference: string): Promise<string> {
    const id = await newPackage(reference);
    const offer = page.getByRole('dialog', { name: 'Offer' });
    await offer.getByText(`Kenyatta Avenue ${reference}`).waitFor();
    await offer.getByRole('button', { name: 'Accept' }).click();
    await offer.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: /Delivery ASSIGNED/ }).waitFor();
    return id;
  }

  test('offline taps are queued with an Idempotency-Key and replayed in order once back online: Picked up lands exactly once', async () => {
    const id = await acceptNew('ORDER-7004');
    const sent: string[] = [];
    const onRequest = (r: { url(): string; headers(): Record<string, string> }) => {
      if (r.url().endsWith(`/api/packages/${id}/pickup`)) sent.push(r.headers()['idempotency-key'] ?? '');
    };
    page.on('request', onRequest);
    try {
      await context.setOffline(true);
      await page.getByRole('button', { name: 'Picked up' }).click();
      const queued = page.getByRole('status').filter({ hasText: 'Queued' });
      await queued.waitFor();
      await queued.getByText('Picked up').waitFor();
      // The next step is there at once (the job as it will be); the server has not heard of it yet.
      await page.getByRole('button', { name: 'Start delivery' }).waitFor();
      assert.equal((await call<{ status: string }>('GET', `/packages/${id}`, shopToken)).status, 'ASSIGNED');
      // Kept on the phone (a reload would keep it), with its key.
      const stored = await page.evaluate(
        () => JSON.parse(localStorage.getItem('driver.queuedSteps') ?? '[]') as { action: string; key: string }[],
      );
      assert.deepEqual(
        stored.map((s) => s.action),
        ['pickup'],
      );
      await new Promise((r) => setTimeout(r, 3000));
      await phoneLayout('queued');
      await shot('queued');
      await context.setOffline(false);
      await queued.waitFor({ state: 'detached', timeout: 30_000 });
      const pkg = await call<{ status: string; statusHistory: { status: string }[] }>(
        'GET',
        `/packages/${id}`,
        shopToken,
      );
      assert.equal(pkg.status, 'PICKED_UP');
      assert.equal(pkg.statusHistory.filter((h) => h.status === 'PICKED_UP').length, 1, 'applied exactly once');
      await page.getByRole('heading', { name: /Delivery PICKED UP/ }).waitFor();
      assert.ok(
        sent.length >= 1 && sent.every((k) => k === stored[0]!.key),
        `every attempt carried the step's key: ${JSON.stringify(sent)}`,
      );
      assert.equal(await page.evaluate(() => localStorage.getItem('driver.queuedSteps')), null);
    } finally {
      page.off('request', onRequest);
    }
    // Ends the job (the next tests need a free driver).
    await page.getByRole('button', { name: 'Failed' }).click();
    await page.getByRole('radio', { name: 'No answer' }).check();
    await page.getByLabel('Details').fill('Recipient away');
    await page.getByRole('button', { name: 'Report failure' }).click();
    await page.getByText('The job is failed.').waitFor();
  });

  test("offline taps: the server's answer wins (the job cancelled meanwhile is shown as such)", async () => {
    const id = await acceptNew('ORDER-7005');
    await context.setOffline(true);
    await page.getByRole('button', { name: 'Picked up' }).click();
    await page.getByRole('status').filter({ hasText: 'Queued' }).waitFor();
    await call('POST', `/packages/${id}/cancel`, shopToken, { reason: 'Changed my mind' });
    await context.setOffline(false);
    await page.getByText(/“Picked up” was not applied: .*The job is cancelled\./).waitFor({ timeout: 30_000 });
    assert.equal((await call<{ status: string }>('GET', `/packages/${id}`, shopToken)).status, 'CANCELLED');
    await page.getByText('No job yet: offers appear here.').waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('driver.queuedSteps')), null);
  });

  test('Traccar Client set-up: a device key shown once with the server URL, as text and QR codes; listed, then revoked', async () => {
    await page.getByRole('button', { name: 'Background positions (Traccar Client)' }).click();
    await page.getByRole('heading', { name: 'Traccar Client' }).waitFor();
    await page.getByLabel('Device name').fill('My Android');
    await page.getByRole('button', { name: 'Make a device key' }).click();
    const made = page.getByRole('region', { name: 'New device key' });
    await made.getByText(`${h.base}/api/positions/osmand`).waitFor();
    const key = (await made.locator('dd').nth(1).textContent()) ?? '';
    assert.match(key, /^dk_[A-Za-z0-9_-]{32}$/);
    await made.getByRole('img', { name: 'QR code of the device identifier' }).waitFor();
    // Drawn by the lazily loaded library: the canvas is not blank.
    const drawn = await made
      .locator('canvas')
      .first()
      .evaluate((c: HTMLCanvasElement) => c.toDataURL().length);
    assert.ok(drawn > 1000, `a QR code is drawn (${drawn})`);
    await phoneLayout('traccar');
    await shot('traccar');
    // Traccar Client's request, as it sends it, with that key.
    const sent = await fetch(
      `${h.base}/api/positions/osmand?id=${encodeURIComponent(key)}&lat=${PICKUP.lat}&lon=${PICKUP.lng}&timestamp=${Math.floor(Date.now() / 1000)}&speed=0&bearing=0&accuracy=5`,
      { method: 'POST' },
    );
    assert.equal(sent.status, 200);
    await made.getByRole('button', { name: 'Done' }).click();
    await page.getByText('My Android', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Revoke My Android' }).click();
    await page.getByText('No device keys yet.').waitFor();
    const refused = await fetch(
      `${h.base}/api/positions/osmand?id=${encodeURIComponent(key)}&lat=${PICKUP.lat}&lon=${PICKUP.lng}`,
    );
    assert.equal(refused.status, 401);
    await page.getByRole('button', { name: 'Back' }).click();
    await page.getByRole('button', { name: 'Go offline' }).waitFor();
  });

  test('a ride: the offer, Accept, Arrived, Start trip, Complete trip; the customer sees COMPLETED; the next one cancelled by the driver', async () => {
    const phone = '+254733500003';
    const before = smsCount(phone);
    const otp = await call<{ sessionId: string; phone: string }>('POST', '/auth/register/send-otp', undefined, {
      phone,
    });
    const customer = await call<{ accessToken: string }>('POST', '/auth/register', undefined, {
      sessionId: otp.sessionId,
      phone: otp.phone,
      code: await smsCode(phone, before),
      email: 'amina.rider@example.com',
      password: PASSWORD,
      firstName: 'Amina',
      lastName: 'Customer',
      role: 'CUSTOMER',
      countryId: kenya,
    });
    const ride = await call<{ id: string }>('POST', '/rides', customer.accessToken, {
      pickupLocation: PICKUP,
      destinationLocation: DROPOFF,
      vehicleType: 'BIKE',
      countryId: kenya,
    });
    const offer = page.getByRole('dialog', { name: 'Offer' });
    await offer.getByText('Ride', { exact: true }).waitFor();
    await offer.getByRole('button', { name: 'Accept' }).click();
    await offer.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: /Ride ACCEPTED/ }).waitFor();
    assert.equal(
      await page.getByRole('link', { name: 'Navigate' }).getAttribute('href'),
      `geo:${PICKUP.lat},${PICKUP.lng}?q=${PICKUP.lat},${PICKUP.lng}`,
    );
    await page.getByRole('button', { name: 'Arrived' }).click();
    await page.getByRole('button', { name: 'Start trip' }).click();
    await page.getByRole('heading', { name: /Ride IN PROGRESS/ }).waitFor();
    assert.equal(
      await page.getByRole('link', { name: 'Navigate' }).getAttribute('href'),
      `geo:${DROPOFF.lat},${DROPOFF.lng}?q=${DROPOFF.lat},${DROPOFF.lng}`,
    );
    await phoneLayout('ride');
    await shot('ride');
    await page.getByRole('button', { name: 'Complete trip' }).click();
    await page.getByText('Trip completed.').waitFor();
    assert.equal(
      (await call<{ status: string }>('GET', `/rides/${ride.id}`, customer.accessToken)).status,
      'COMPLETED',
    );

    // The next ride: accepted, then cancelled by the driver before the trip, with a reason.
    const second = await call<{ id: string }>('POST', '/rides', customer.accessToken, {
      pickupLocation: PICKUP,
      destinationLocation: DROPOFF,
      vehicleType: 'BIKE',
      countryId: kenya,
    });
    await offer.getByText('Ride', { exact: true }).waitFor();
    await offer.getByRole('button', { name: 'Accept' }).click();
    await offer.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: /Ride ACCEPTED/ }).waitFor();
    await page.getByRole('button', { name: 'Cancel ride' }).click();
    await page.getByLabel('Reason').fill('Flat tyre');
    await page.getByRole('button', { name: 'Cancel ride' }).click();
    await page.getByText('The job is cancelled.').waitFor();
    const cancelled = await call<{ status: string; statusHistory: { status: string; reason?: string }[] }>(
      'GET',
      `/rides/${second.id}`,
      customer.accessToken,
    );
    assert.equal(cancelled.status, 'CANCELLED');
    assert.equal(cancelled.statusHistory.at(-1)?.reason, 'Flat tyre');
  });

  test('a cut socket: the app reconnects and sends the newest position only, not those of the gap', async () => {
    // A context of its own whose driver socket passes through Playwright (routeWebSocket), which sees
    // what the app sends and can cut the connection. Not the main page's: that one proves the real
    // socket works under the CSP.
    const cut = await h.browser.newContext({
      ...devices['Pixel 7'],
      viewport: { width: 360, height: 740 },
      geolocation: { latitude: PICKUP.lat, longitude: PICKUP.lng, accuracy: 5 },
      permissions: ['geolocation'],
      serviceWorkers: 'block',
    });
    const sockets: { close(options?: { code?: number; reason?: string }): Promise<void> }[] = [];
    const sent: { socket: number; message: { type: string; lat?: number; lng?: number } }[] = [];
    await cut.routeWebSocket(/\/api\/drivers\/me\/stream/, (ws) => {
      const server = ws.connectToServer();
      const socket = sockets.push(ws);
      ws.onMessage((message) => {
        sent.push({ socket, message: JSON.parse(String(message)) });
        server.send(message);
      });
    });
    const phone = await cut.newPage();
    phone.setDefaultTimeout(15_000);
    phone.on('pageerror', (err) => h.pageErrors.push(`${phone.url()}: ${err.message}`));
    await phone.goto(`${h.base}/driver/`);
    await phone.getByLabel('Email or phone').fill(driver.email);
    await phone.getByLabel('Password').fill(PASSWORD);
    const before = smsCount(driver.phone);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByLabel('Verification code').fill(await smsCode(driver.phone, before));
    await phone.getByRole('button', { name: 'Verify' }).click();
    // Still ONLINE at the server: the app goes online by itself.
    await phone.getByText('Connected', { exact: true }).waitFor();
    await waitFor(() => sent.some((s) => s.message.type === 'location'), 15_000, 'a first position');

    await sockets[0].close({ code: 4500, reason: 'cut by the test' });
    const gap = [0.0005, 0.001, 0.0015].map((d) => ({ latitude: PICKUP.lat + d, longitude: PICKUP.lng + d }));
    for (const p of gap) await cut.setGeolocation({ ...p, accuracy: 5 });
    await phone
      .getByText(/Reconnecting in \d+ s|Connecting…/)
      .first()
      .waitFor();
    await phone.getByText('Connected', { exact: true }).waitFor();
    await waitFor(
      () => sent.some((s) => s.socket === 2 && s.message.type === 'location'),
      15_000,
      'a position on the new socket',
    );
    const newest = gap[gap.length - 1];
    const after = sent
      .filter((s) => s.socket === 2 && s.message.type === 'location')
      .map((s) => [s.message.lat, s.message.lng]);
    assert.deepEqual(after, [[newest.latitude, newest.longitude]], 'the newest position only, once');
    await cut.close();
  });

  test('Go offline', async () => {
    await page.getByRole('button', { name: 'Go offline' }).click();
    await page.getByRole('button', { name: 'Go online' }).waitFor();
    await page.getByText('Go online to receive offers.').waitFor();
  });

  test('no uncaught page error and no CSP violation (the WebSocket is within connect-src self)', () => {
    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
  });
});
