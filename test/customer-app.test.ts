// The customer app (contract section 20) in a real browser: Playwright driving the operating system's
// Chromium as a phone (Pixel 7 at 360 × 740, touch, geolocation allowed) against a started instance.
// A customer creates an account in the app, books a ride from the phone's position to a tap on the
// map with a quote per vehicle type; a scripted driver (the API) accepts and moves, and the app
// follows without a reload (the driver, the map, the ETA) until the ride completes with its fare;
// a ride cancelled after acceptance shows its fee; a destination in another country, a trip too long
// and an expired quote show the API's message; a package is sent and followed; the history shows the
// prices, fares and fees. No horizontal scrolling, touch targets of 48 px at least, no uncaught page
// error, no CSP violation.
// CUSTOMER_SCREENSHOTS=docs/screenshots saves each screen as customer-<name>.png.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { before, describe, test } from 'node:test';
import { devices, type BrowserContext, type Page } from 'playwright-core';
import { assertPhoneLayout, chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { projectRoot, waitFor } from './helpers/processes.js';

const skip = chromiumSkip('the customer app');
const screenshots = process.env.CUSTOMER_SCREENSHOTS
  ? path.resolve(projectRoot, process.env.CUSTOMER_SCREENSHOTS)
  : undefined;
const PASSWORD = 'customer-test-Passw0rd';
const PICKUP = { lat: -1.2864, lng: 36.8172 };
// Places the test's geocoder finds: one across the border, one too far for MAX_TRIP_DISTANCE (300 km).
const KAMPALA = { lat: 0.3476, lng: 32.5825 };
const MOMBASA = { lat: -4.0435, lng: 39.6682 };
const QUOTE_TTL_S = 30;

type Money = { amount: number; currency: string };
interface Ride {
  id: string;
  status: string;
  price: Money;
  fare: Money | null;
  cancellationFee: Money | null;
  cancellationFeeNow?: Money | null;
}

describe('customer app in Chromium (phone)', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-customer-app-',
    password: PASSWORD,
    env: {
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '3000/15m',
      // The scripted driver takes the rides itself.
      DISPATCH_MODE: 'off',
      TRACKING_INTERVAL: '500ms',
      // Short enough for the expired-quote case to wait it out.
      QUOTE_TTL: `${QUOTE_TTL_S}s`,
    },
  });
  const { smsCount, smsCode, call, apiLogin } = h;
  let adminToken: string;
  let driverToken: string;
  let customerToken: string;
  let kenya: string;
  let context: BrowserContext;
  let page: Page;
  const customer = { phone: '+254733600001', email: 'amina.rider@example.com', first: 'Amina', last: 'Customer' };
  const driver = {
    phone: '+254733600002',
    email: 'baraka.driver@example.com',
    first: 'Baraka',
    last: 'Driver',
    plate: 'KMEC 321C',
  };

  before(async () => {
    const countries = (await (await fetch(`${h.base}/api/countries`)).json()) as {
      items: { id: string; code: string }[];
    };
    kenya = countries.items.find((c) => c.code === 'KE')!.id;
    adminToken = await apiLogin('admin@localhost', '+254700000000', h.adminPassword);
    await call('POST', '/admin/users', adminToken, {
      email: driver.email,
      password: PASSWORD,
      firstName: driver.first,
      lastName: driver.last,
      phone: driver.phone,
      role: 'DRIVER',
      countryId: kenya,
      vehicleType: 'BIKE',
      vehiclePlate: driver.plate,
    });
    driverToken = await apiLogin(driver.email, driver.phone);
    await call('POST', '/drivers/me/availability', driverToken, { status: 'ONLINE' });
    await call('POST', '/drivers/me/location', driverToken, { lat: PICKUP.lat - 0.01, lng: PICKUP.lng - 0.01 });
    if (screenshots) mkdirSync(screenshots, { recursive: true });
  });

  // ---- helpers ----------------------------------------------------------------------------------

  const phoneLayout = (what: string) => assertPhoneLayout(page, what);

  async function shot(name: string) {
    if (screenshots)
      await page.screenshot({ path: path.join(screenshots, `customer-${name}.png`), scale: 'css', fullPage: true });
  }

  async function newPhone(): Promise<Page> {
    const ctx = await h.browser.newContext({
      ...devices['Pixel 7'],
      viewport: { width: 360, height: 740 },
      geolocation: { latitude: PICKUP.lat, longitude: PICKUP.lng, accuracy: 10 },
      permissions: ['geolocation'],
      serviceWorkers: 'block',
    });
    const p = h.watch(await ctx.newPage());
    p.setDefaultTimeout(15_000);
    // No network for the tiles: the map must still show its markers.
    await p.route(/tile\.openstreetmap\.org/, (route) => route.abort());
    return p;
  }

  /** What the phone shows, for a failure's message. */
  async function dump(p: Page, err: Error): Promise<never> {
    if (screenshots)
      await p
        .screenshot({ path: path.join(screenshots, 'customer-failure.png'), fullPage: true })
        .catch(() => undefined);
    throw new Error(
      `${err.message}\n--- the screen:\n${await p
        .locator('main')
        .innerText()
        .catch(() => '?')}`,
    );
  }

  /** Marks the document: a reload would drop the mark. */
  const mark = (p: Page) => p.evaluate(() => Object.assign(window, { sameDocument: true }));
  const stayed = async (p: Page) =>
    assert.equal(
      await p.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
      true,
      'the page was reloaded',
    );

  /** The ride the app just requested (the customer's newest). */
  async function newestRide(): Promise<Ride> {
    const rides = await call<{ items: Ride[] }>('GET', '/rides?limit=1', customerToken);
    assert.ok(rides.items[0], 'a ride was requested');
    return rides.items[0];
  }

  /** A tap on the map, `dx`/`dy` pixels from its centre. */
  async function tapMap(p: Page, dx: number, dy: number) {
    const map = p.locator('.leaflet-container');
    await map.waitFor();
    const box = (await map.boundingBox())!;
    await p.mouse.click(box.x + box.width / 2 + dx, box.y + box.height / 2 + dy);
  }

  /** Whether the markers of these kinds are drawn inside the map's visible area (Leaflet draws off-screen ones too). */
  async function markersInView(p: Page, kinds: string[], what: string) {
    await waitFor(
      async () => {
        const map = await p.locator('.leaflet-container').boundingBox();
        if (!map) return false;
        for (const kind of kinds) {
          const box = await p.locator(`path.marker-${kind}`).boundingBox();
          if (!box) return false;
          const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
          if (x < map.x || x > map.x + map.width || y < map.y || y > map.y + map.height) return false;
        }
        return true;
      },
      5000,
      `the map shows ${kinds.join(' and ')} (${what})`,
    );
  }

  /** From the booking screen: the phone's position, a tap for the destination, the bike's quote, request. */
  async function bookBike(p: Page) {
    await p.getByRole('heading', { name: 'Where to?' }).waitFor();
    await p
      .getByTestId('pickup')
      .filter({ hasText: PICKUP.lat.toFixed(5) })
      .waitFor();
    await tapMap(p, 90, -70);
    await p
      .getByTestId('destination')
      .filter({ hasText: /^-?\d+\.\d{5}, \d+\.\d{5}$/ })
      .waitFor();
    const bike = p.getByRole('radio', { name: /^Bike KES [\d,.]+ / });
    await bike.waitFor();
    await waitFor(async () => await bike.isEnabled(), 15_000, "the bike's quote");
    await bike.check();
    await p.getByRole('button', { name: 'Request ride' }).click();
    await p.getByRole('heading', { name: 'Looking for a driver…' }).waitFor();
    return newestRide();
  }

  // ---- serving ----------------------------------------------------------------------------------

  test("the customer app's JavaScript at first load is small (gzipped)", (t) => {
    const html = readFileSync(path.join(projectRoot, 'dist/web/app/index.html'), 'utf8');
    const initial = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
    assert.ok(
      initial.some((f) => f.startsWith('customer-')),
      'its own entry chunk',
    );
    assert.ok(
      !initial.some((f) => f.startsWith('console-') || f.startsWith('driver-')),
      "not the console's or the driver's",
    );
    const bytes = initial.reduce(
      (sum, file) => sum + gzipSync(readFileSync(path.join(projectRoot, 'dist/web/assets', file)), { level: 9 }).length,
      0,
    );
    t.diagnostic(`customer app initial JavaScript: ${(bytes / 1024).toFixed(1)} KiB gzipped (${initial.join(', ')})`);
    assert.ok(bytes <= 200 * 1024, `${bytes} bytes`);
  });

  test('/app/ serves the page, the manifest, the icons and a service worker that precaches the shell', async () => {
    const redirect = await fetch(`${h.base}/app`, { redirect: 'manual' });
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get('location'), '/app/');
    for (const url of ['/app/', '/app/rides/1']) {
      const res = await fetch(`${h.base}${url}`);
      assert.equal(res.status, 200, url);
      assert.match(res.headers.get('content-security-policy') ?? '', /connect-src 'self'/);
      assert.doesNotMatch(res.headers.get('content-security-policy') ?? '', /unsafe-inline/);
      assert.match(await res.text(), /<link rel="manifest" href="\/app\/manifest.webmanifest"/);
    }
    const sw = await fetch(`${h.base}/app/sw.js`);
    assert.equal(sw.status, 200);
    assert.equal(sw.headers.get('cache-control'), 'no-cache');
    const worker = await sw.text();
    assert.match(worker, /\/app\/index\.html/);
    assert.match(worker, /\/assets\/customer-[\w-]+\.js/);
    assert.doesNotMatch(worker, /\/assets\/(?:console|driver)-[\w-]+\.js/, "not the other apps' chunks");
    const manifest = (await (await fetch(`${h.base}/app/manifest.webmanifest`)).json()) as {
      start_url: string;
      scope: string;
      display: string;
      icons: { src: string; sizes: string }[];
    };
    assert.deepEqual([manifest.start_url, manifest.scope, manifest.display], ['/app/', '/app/', 'standalone']);
    for (const size of ['192x192', '512x512']) {
      const icon = manifest.icons.find((i) => i.sizes === size)!;
      const png = Buffer.from(await (await fetch(`${h.base}${icon.src}`)).arrayBuffer());
      assert.equal(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`, size, `${icon.src} is ${size}`);
    }
  });

  // ---- the flows --------------------------------------------------------------------------------

  test('a customer creates an account in the app and is signed in at once', async () => {
    page = await newPhone();
    context = page.context();
    await page.goto(`${h.base}/app/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await phoneLayout('sign in');
    await shot('sign-in');
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByLabel('Phone').fill(customer.phone);
    const before = smsCount(customer.phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Verification code').fill(await smsCode(customer.phone, before));
    await page.getByLabel('First name').fill(customer.first);
    await page.getByLabel('Last name').fill(customer.last);
    await page.getByLabel('Email').fill(customer.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Country').selectOption({ label: 'Kenya' });
    await phoneLayout('create an account');
    await shot('sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Where to?' }).waitFor();
    customerToken = await apiLogin(customer.email, customer.phone);
  });

  test('booking: the pickup from the phone, the destination by a tap (no geocoder here), a quote per vehicle type', async () => {
    await page
      .getByTestId('pickup')
      .filter({ hasText: `${PICKUP.lat.toFixed(5)}, ${PICKUP.lng.toFixed(5)}` })
      .waitFor();
    // No geocoder on this instance: the search goes and the app says to tap on the map.
    await page.getByLabel('Destination').fill('Westlands');
    await page.getByText('Address search is not available here: tap on the map to set the destination.').waitFor();
    assert.equal(await page.getByLabel('Destination').count(), 0, 'the search is hidden');
    await tapMap(page, 90, -70);
    for (const name of ['Bike', 'Car', 'Van', 'Truck']) {
      const radio = page.getByRole('radio', {
        name: new RegExp(`^${name} KES [\\d,.]+ (pickup in \\d+ min|no driver nearby yet)$`),
      });
      await radio.waitFor();
    }
    // The driver is about 1.5 km away: the bike's pickup ETA is known.
    await page.getByRole('radio', { name: /^Bike KES [\d,.]+ pickup in \d+ min$/ }).waitFor();
    await page.locator('path.marker-pickup').waitFor();
    await page.locator('path.marker-dropoff').waitFor();
    await phoneLayout('booking');
    await page.getByRole('radio', { name: /^Bike/ }).check();
    await page.getByTestId('quote').waitFor();
    await shot('book');
  });

  test('live, without a reload: searching, the driver accepts and moves, arrives, the trip, completed with the fare', async () => {
    await mark(page);
    await page.getByRole('button', { name: 'Request ride' }).click();
    await page.getByRole('heading', { name: 'Looking for a driver…' }).waitFor();
    const ride = await newestRide();
    await page.locator('.live-live').waitFor();
    await phoneLayout('searching');

    await call('POST', `/rides/${ride.id}/accept`, driverToken);
    await page.getByRole('heading', { name: 'Your driver is on the way' }).waitFor();
    const card = page.getByRole('region', { name: 'Your driver' });
    await card.getByText(driver.first).waitFor();
    await card.getByText(driver.plate).waitFor();
    await card.getByText(/Bike/).waitFor();
    await card.getByTestId('rating').waitFor();

    // The driver moves toward the pickup: the marker appears, moves, and the ETA shows.
    await call('POST', '/drivers/me/location', driverToken, { lat: PICKUP.lat - 0.006, lng: PICKUP.lng - 0.006 });
    const marker = page.locator('path.marker-driver');
    await marker.waitFor();
    await page
      .getByTestId('eta')
      .filter({ hasText: /^Driver at the pickup in about \d+ min$/ })
      .waitFor();
    const from = await marker.getAttribute('d');
    await new Promise((r) => setTimeout(r, 700));
    await call('POST', '/drivers/me/location', driverToken, { lat: PICKUP.lat - 0.002, lng: PICKUP.lng - 0.002 });
    await waitFor(async () => (await marker.getAttribute('d')) !== from, 10_000, "the driver's marker to move");
    await page.getByTestId('position').waitFor();
    await phoneLayout('driver on the way');
    await shot('driver-coming');

    await call('POST', `/rides/${ride.id}/arrive`, driverToken);
    await page.getByRole('heading', { name: 'Your driver has arrived' }).waitFor();
    await call('POST', `/rides/${ride.id}/start`, driverToken);
    await page.getByRole('heading', { name: 'On the trip' }).waitFor();
    for (const step of [0.001, 0.002, 0.003]) {
      await new Promise((r) => setTimeout(r, 600));
      await call('POST', '/drivers/me/location', driverToken, { lat: PICKUP.lat + step, lng: PICKUP.lng + step });
    }
    await page
      .getByTestId('eta')
      .filter({ hasText: /^At the destination in about \d+ min$/ })
      .waitFor();
    await shot('on-trip');
    await call('POST', `/rides/${ride.id}/complete`, driverToken);
    await page.getByRole('heading', { name: 'Trip completed' }).waitFor();
    const done = await call<Ride>('GET', `/rides/${ride.id}`, customerToken);
    assert.equal(done.status, 'COMPLETED');
    assert.ok(done.fare, 'the API gives the fare');
    const fare = `KES ${(done.fare.amount / 100).toFixed(2)}`;
    await page
      .getByTestId('fare')
      .filter({ hasText: fare.replace(/\B(?=(\d{3})+(?!\d))/g, ',') })
      .or(page.getByTestId('fare').filter({ hasText: fare }))
      .waitFor();
    await page.getByRole('radio', { name: '5 stars' }).waitFor();
    await page.getByLabel('Tip amount').waitFor();
    await stayed(page);
    await phoneLayout('completed');
    await shot('completed');
  });

  test('rating the driver (five stars) and a tip', async () => {
    const ride = await newestRide();
    await page.getByRole('radio', { name: '5 stars' }).check();
    await page.getByRole('button', { name: 'Rate' }).click();
    await page.getByText('Thank you for rating.').waitFor();
    await page.getByLabel('Tip amount').fill('20');
    await page.getByRole('button', { name: 'Tip' }).click();
    await page
      .getByText(/You tipped KES 20\.00|Thank you: all of the tip goes to the driver/)
      .first()
      .waitFor();
    const rated = await call<{ tip: Money | null; driver: { rating: number | null; ratingCount: number } }>(
      'GET',
      `/rides/${ride.id}`,
      customerToken,
    );
    assert.deepEqual(rated.tip, { amount: 2000, currency: 'KES' });
    assert.deepEqual([rated.driver.rating, rated.driver.ratingCount], [5, 1]);
    // Opened again from the history: the tip is there.
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('button', { name: 'Open ride' }).first().click();
    await page.getByTestId('tip').filter({ hasText: 'You tipped KES 20.00.' }).waitFor();
    await phoneLayout('rated and tipped');
    await shot('rated');
  });

  test('cancelling after acceptance shows the fee before and after confirming', async () => {
    await page.getByRole('button', { name: 'Ride', exact: true }).click();
    const ride = await bookBike(page);
    await call('POST', `/rides/${ride.id}/accept`, driverToken);
    await page.getByRole('heading', { name: 'Your driver is on the way' }).waitFor();
    // Rated once (five stars) when the ratings API is there: the card shows the average and the count.
    await page.getByTestId('rating').filter({ hasText: '★ 5.0 (1)' }).waitFor();
    await page.getByRole('button', { name: 'Cancel ride' }).click();
    const confirm = page.getByRole('group', { name: 'Cancel the ride?' });
    await confirm.waitFor();
    const now = await call<Ride>('GET', `/rides/${ride.id}`, customerToken);
    if (now.cancellationFeeNow) await confirm.getByText(/^Cancelling now costs KES [\d,.]+\.$/).waitFor();
    else if (now.cancellationFeeNow === null) await confirm.getByText('Cancelling now is free.').waitFor();
    else await confirm.getByText('A fee may apply once a driver has accepted.').waitFor();
    await phoneLayout('cancel confirmation');
    await shot('cancel');
    await confirm.getByRole('button', { name: 'Confirm cancellation' }).click();
    await page.getByRole('heading', { name: 'Ride cancelled' }).waitFor();
    const cancelled = await call<Ride>('GET', `/rides/${ride.id}`, customerToken);
    assert.equal(cancelled.status, 'CANCELLED');
    assert.ok(cancelled.cancellationFee && cancelled.cancellationFee.amount > 0, 'a fee after acceptance');
    await page.getByText(`Cancellation fee: KES ${(cancelled.cancellationFee.amount / 100).toFixed(2)}.`).waitFor();
  });

  test("bad input shows the API's message: a destination in another country, a trip too long, an expired quote", async () => {
    const p = await newPhone();
    // This instance has no geocoder: the test plays GET /api/geocode's answer, two places.
    await p.route(/\/api\/geocode\?/, (route) =>
      route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify([
          { name: 'Kampala, Uganda', ...KAMPALA },
          { name: 'Mombasa, Kenya', ...MOMBASA },
        ]),
      }),
    );
    await p.goto(`${h.base}/app/`);
    await p.getByLabel('Email or phone').fill(customer.email);
    await p.getByLabel('Password').fill(PASSWORD);
    const before = smsCount(customer.phone);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByLabel('Verification code').fill(await smsCode(customer.phone, before));
    await p.getByRole('button', { name: 'Verify' }).click();
    await p.getByRole('heading', { name: 'Where to?' }).waitFor();
    await p
      .getByTestId('pickup')
      .filter({ hasText: PICKUP.lat.toFixed(5) })
      .waitFor();

    const refusal = async (to: { lat: number; lng: number }) => {
      const res = await fetch(`${h.base}/api/quotes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${customerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          kind: 'RIDE',
          pickup: { location: PICKUP },
          dropoff: { location: to },
          vehicleType: 'BIKE',
          countryId: kenya,
        }),
      });
      assert.equal(res.status, 400);
      return ((await res.json()) as { message: string }).message;
    };
    // A destination tapped near the pickup first: the map has fitted both, close up.
    await tapMap(p, 40, 40);
    await p
      .getByTestId('destination')
      .filter({ hasText: /^-?\d+\.\d{5}, \d+\.\d{5}$/ })
      .waitFor();
    await markersInView(p, ['pickup', 'dropoff'], 'a tapped destination');
    for (const [place, at] of [
      ['Kampala, Uganda', KAMPALA],
      ['Mombasa, Kenya', MOMBASA],
    ] as const) {
      await p.getByLabel('Destination').fill(place.split(',')[0]!);
      await p.getByRole('button', { name: place }).click();
      await p.getByTestId('destination').filter({ hasText: place }).waitFor();
      // The map follows a destination found by search: the pickup and it, in view.
      await markersInView(p, ['pickup', 'dropoff'], place).catch((err: Error) => dump(p, err));
      await p
        .getByRole('alert')
        .filter({ hasText: await refusal(at) })
        .first()
        .waitFor()
        .catch((err: Error) => dump(p, err));
      if (place.startsWith('Mombasa')) {
        page = p;
        await phoneLayout('a trip too long');
        await shot('error');
      }
    }

    // An expired quote: the request waits until the chosen quote has expired, then reaches the
    // server, whose 409 the app shows; it has a new price ready. The map shows Mombasa now: the tap
    // goes beside the pickup.
    await p.locator('.leaflet-container').scrollIntoViewIfNeeded();
    const map = (await p.locator('.leaflet-container').boundingBox())!;
    const pickupAt = (await p.locator('path.marker-pickup').boundingBox())!;
    const [px, py] = [pickupAt.x + pickupAt.width / 2, pickupAt.y + pickupAt.height / 2];
    // 25 px from the pickup, towards the map's centre (inside the map whatever the fit).
    const [cx, cy] = [map.x + map.width / 2 - px, map.y + map.height / 2 - py];
    const away = Math.hypot(cx, cy) || 1;
    await p.mouse.click(px + (cx / away) * 25, py + (cy / away) * 25);
    await p
      .getByTestId('destination')
      .filter({ hasText: /^-?\d+\.\d{5}, \d+\.\d{5}$/ })
      .waitFor();
    const bike = p.getByRole('radio', { name: /^Bike KES/ });
    await waitFor(async () => await bike.isEnabled(), 15_000, "the bike's quote");
    await bike.check();
    const until = Date.parse((await p.getByTestId('quote').locator('time').getAttribute('datetime'))!);
    await p.route(/\/api\/rides$/, async (route) => {
      await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now() + 1500)));
      await route.continue();
    });
    const answer = p.waitForResponse((res) => res.url().endsWith('/api/rides') && res.request().method() === 'POST', {
      timeout: (QUOTE_TTL_S + 20) * 1000,
    });
    await p.getByRole('button', { name: 'Request ride' }).click();
    const res = await answer;
    assert.equal(res.status(), 409);
    const { message, code } = (await res.json()) as { message: string; code: string };
    assert.equal(code, 'QUOTE_EXPIRED');
    await p.getByRole('alert').filter({ hasText: message }).first().waitFor();
    await p.getByText('Here is a new price: check it and request the ride again.').waitFor();
    await p.context().close();
  });

  test('sending a package: points, contacts, parcel, quote, create, then follow it', async () => {
    page = context.pages()[0]!;
    await page.getByRole('button', { name: 'Send a package' }).click();
    await page.getByRole('heading', { name: 'New delivery' }).waitFor();
    const fields: [string, string][] = [
      ['Pickup latitude', String(PICKUP.lat)],
      ['Pickup longitude', String(PICKUP.lng)],
      ['Pickup address', 'Kenyatta Avenue 1'],
      ['Pickup contact name', 'Amina'],
      ['Pickup contact phone', customer.phone],
      ['Drop-off latitude', '-1.3'],
      ['Drop-off longitude', '36.78'],
      ['Drop-off address', 'Ngong Road 5'],
      ['Drop-off contact name', 'Juma'],
      ['Drop-off contact phone', '+254733600009'],
      ['Parcel description', 'A birthday cake'],
    ];
    for (const [label, value] of fields) await page.getByLabel(label, { exact: true }).fill(value);
    await page.getByLabel('Country').selectOption({ label: 'Kenya' });
    await page.getByTestId('quote').locator('.price').waitFor();
    await phoneLayout('send a package');
    await shot('package');
    await page
      .getByRole('button', { name: 'Create delivery' })
      .click()
      .catch((err: Error) => dump(page, err));
    await page.getByRole('heading', { name: /^Delivery / }).waitFor();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await page
      .getByTestId('price')
      .filter({ hasText: /^KES [\d,.]+$/ })
      .waitFor();
    await page.locator('.live-live').waitFor();
  });

  test('history: the rides and the package with their prices, the fare and the fee', async () => {
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    const list = page.getByRole('list', { name: 'Past rides and packages' });
    await list.getByRole('listitem').filter({ hasText: 'COMPLETED' }).getByText('Fare').waitFor();
    await list.getByRole('listitem').filter({ hasText: 'COMPLETED' }).getByText('KES 20.00').waitFor();
    await list.getByRole('listitem').filter({ hasText: 'CANCELLED' }).getByText('Cancellation fee').waitFor();
    await list.getByRole('listitem').filter({ hasText: 'A birthday cake' }).getByText('Price').waitFor();
    await phoneLayout('history');
    await shot('history');
  });

  test("a notification's URL opens its job: /app/?ride=<id> shows that ride; the History screen has the Notifications switch", async () => {
    await page.getByRole('switch', { name: 'Notifications' }).waitFor();
    const ride = await newestRide();
    await page.goto(`${h.base}/app/?ride=${ride.id}`);
    await page.getByRole('heading', { name: 'Ride cancelled' }).waitFor();
    assert.equal(new URL(page.url()).pathname + new URL(page.url()).search, '/app/', 'the query is dropped');
  });

  test('no uncaught page error and no CSP violation', () => {
    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
  });
});
