// The driver app in Chromium (issue 39): a push's tap opens its offer at once (a cold start at
// /driver/?offer=<id>, or the worker's notification.click message) without waiting for the socket;
// the shared phone: driver A signs out offline, nothing of A's stays for driver B, and A's sign-out
// reaches the server once the phone is back; releasing a job; the ratings page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { devices, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { chromiumSkip, launchChromium } from './helpers/browser.js';
import { packageBody, post, setDriverPosition, stop } from './packages-helpers.js';
import { generateVapidKeys } from '../src/modules/push/vapid-keys.js';

const skip = chromiumSkip('the driver app');
const vapid = generateVapidKeys();
const AT = { lat: -1.2864, lng: 36.8172 };

describe('driver app: push taps, the shared phone, releases and ratings in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let business: TestUser;
  const pageErrors: string[] = [];

  before(async () => {
    const { buildWeb, staleReason } = await import('../scripts/build-web.mjs');
    if (staleReason()) assert.ok(buildWeb().ok, 'the web apps build');
    t = await buildTestApp({
      env: {
        DISPATCH_OFFER_TTL: '300s',
        VAPID_PUBLIC_KEY: vapid.publicKey,
        VAPID_PRIVATE_KEY: vapid.privateKey,
        VAPID_SUBJECT: 'mailto:ops@example.com',
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    business = await createUser(t, { role: 'BUSINESS' });
    browser = await launchChromium();
    context = await browser.newContext({
      ...devices['Pixel 7'],
      viewport: { width: 360, height: 740 },
      serviceWorkers: 'allow',
      permissions: ['geolocation'],
      geolocation: { latitude: AT.lat, longitude: AT.lng },
    });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A driver ONLINE at AT, and the app signed in as it (the refresh token it keeps, as after the SMS code). */
  const drivers: string[] = [];
  async function driverOnPhone(firstName: string) {
    // Each test's offers go to its own driver: the earlier ones go offline.
    for (const id of drivers.splice(0)) await t.services.drivers.setAvailability(id, 'OFFLINE').catch(() => undefined);
    const driver = await createUser(t, { role: 'DRIVER', firstName, driver: { availability: 'ONLINE' } });
    await setDriverPosition(t, driver.id, AT.lat, AT.lng);
    drivers.push(driver.id);
    const tokens = await t.services.sessions.create(driver.id, 'DRIVER', true);
    return { ...driver, tokens, headers: { authorization: `Bearer ${tokens.accessToken}` } };
  }
  async function openAs(refreshToken: string, path = '/driver/') {
    await page.goto(`${base}/driver/`);
    await page.evaluate((token) => localStorage.setItem('driver.refreshToken', token), refreshToken);
    await page.goto(`${base}${path}`);
  }
  const newPackage = async (overrides: Record<string, unknown> = {}) => {
    const res = await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(AT.lat + 0.002, AT.lng), ...overrides }),
    );
    assert.equal(res.statusCode, 201, res.body);
    await t.services.dispatch.idle();
    return res.json() as { id: string };
  };
  const openOffer = async (driverId: string) => {
    const row = await t.db
      .selectFrom('dispatch_offers')
      .select('id')
      .where('driver_id', '=', driverId)
      .where('state', '=', 'OPEN')
      .executeTakeFirst();
    assert.ok(row, 'the driver holds an open offer');
    return row.id;
  };

  test('a push tap opens its offer at once, even with no socket: /driver/?offer=<id>, then the parameter is dropped; a lapsed one says so', async () => {
    // No WebSocket ever connects here: the offer must come from GET /drivers/me/offers at the tap.
    await page.routeWebSocket(/\/api\/drivers\/me\/stream/, () => undefined);
    const a = await driverOnPhone('Achieng');
    await newPackage();
    const offerId = await openOffer(a.id);
    await openAs(a.tokens.refreshToken, `/driver/?offer=${offerId}`);
    await page.getByRole('dialog', { name: 'Offer' }).waitFor();
    assert.equal(new URL(page.url()).search, '', 'the parameter is dropped');

    await page.getByRole('button', { name: 'Decline' }).click();
    await page.getByRole('dialog', { name: 'Offer' }).waitFor({ state: 'detached' });
    await page.goto(`${base}/driver/?offer=${offerId}`);
    await page.getByText('This offer has lapsed or was taken.').waitFor();
    assert.equal(new URL(page.url()).search, '');
  });

  test("the worker's notification.click message to the open app shows the offer at once", async () => {
    const b = await driverOnPhone('Baraka');
    await openAs(b.tokens.refreshToken);
    await page.getByRole('heading', { name: 'Hello, Baraka' }).waitFor();
    await page.evaluate(() => navigator.serviceWorker.ready);
    await newPackage();
    const offerId = await openOffer(b.id);
    const worker = context.serviceWorkers().find((w) => w.url() === `${base}/driver/sw.js`);
    assert.ok(worker, 'the worker is running');
    await worker.evaluate(
      `self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((cs) => cs.forEach((c) => c.postMessage({ type: 'notification.click', url: '${base}/driver/?offer=${offerId}', offerId: '${offerId}' })))`,
    );
    await page.getByRole('dialog', { name: 'Offer' }).waitFor();
    await page.getByRole('button', { name: 'Decline' }).click();
    await page.unrouteAll();
  });

  const storage = () =>
    page.evaluate(() => Object.fromEntries(Object.keys(localStorage).map((k) => [k, localStorage.getItem(k)])));
  const availability = async (id: string) =>
    (
      await t.db
        .selectFrom('driver_profiles')
        .select('availability')
        .where('user_id', '=', id)
        .executeTakeFirstOrThrow()
    ).availability;
  const sessionRevoked = async (refreshToken: string) =>
    (await post(t, '/api/auth/refresh', {}, { refreshToken })).statusCode === 401;

  test("the shared phone: driver A, on a job with a step queued, signs out offline; B signs in and sees nothing of A; A's sign-out reaches the server once back online", async () => {
    const a = await driverOnPhone('Amani');
    const pkg = await newPackage({
      pickup: stop(AT.lat + 0.002, AT.lng, { contactName: 'Wanjiru Secret', contactPhone: '+254711000111' }),
    });
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, a.headers)).statusCode, 200);
    await openAs(a.tokens.refreshToken);
    await page.getByText('Wanjiru Secret').waitFor();
    await page.evaluate(() => navigator.serviceWorker.ready);
    assert.ok(
      await page.evaluate(async () => Boolean(await caches.match('/driver/signed-in'))),
      'the worker hears a driver is signed in',
    );

    await context.setOffline(true);
    await page.getByRole('button', { name: 'Picked up' }).click();
    await page.getByText('Queued').first().waitFor();
    let said = '';
    page.once('dialog', (d) => {
      said = d.message();
      void d.accept();
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.match(said, /^1 step taken offline has not reached the service yet and will be lost/);
    const left = await storage();
    assert.deepEqual(
      Object.keys(left).filter((k) => k.startsWith('driver.')),
      ['driver.pendingSignOuts'],
      JSON.stringify(left),
    );
    assert.deepEqual(JSON.parse(left['driver.pendingSignOuts']!), [{ refreshToken: a.tokens.refreshToken }]);
    assert.equal(JSON.stringify(left).includes('Wanjiru'), false);
    assert.equal(
      await page.evaluate(async () => Boolean(await caches.match('/driver/signed-in'))),
      false,
      'no offer is shown with nobody signed in',
    );
    assert.equal(await availability(a.id), 'ONLINE', 'the server has not heard yet');

    await context.setOffline(false);
    for (const until = Date.now() + 30_000; Date.now() < until && !(await sessionRevoked(a.tokens.refreshToken));)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(
      await sessionRevoked(a.tokens.refreshToken),
      true,
      `A's session is revoked once the phone is back: ${JSON.stringify(await storage())}`,
    );
    assert.equal(await availability(a.id), 'OFFLINE');
    assert.equal((await storage())['driver.pendingSignOuts'], undefined);

    const b = await driverOnPhone('Bahati');
    await openAs(b.tokens.refreshToken);
    await page.getByRole('heading', { name: 'Hello, Bahati' }).waitFor();
    await page.getByText('No job yet: offers appear here.').waitFor();
    assert.equal(await page.getByText('Wanjiru Secret').count(), 0);
    assert.equal(await page.getByRole('dialog', { name: 'Offer' }).count(), 0);
    const pickedUp = await t.db
      .selectFrom('packages')
      .select('status')
      .where('id', '=', pkg.id)
      .executeTakeFirstOrThrow();
    assert.equal(pickedUp.status, 'ASSIGNED', "A's queued step was dropped, not sent under B");
  });

  test('Release job: a reason, a confirmation, and the package is PENDING again', async () => {
    const c = await driverOnPhone('Chege');
    const pkg = await newPackage();
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, c.headers)).statusCode, 200);
    await openAs(c.tokens.refreshToken);
    await page.getByRole('button', { name: 'Release job' }).click();
    await page.getByLabel('Reason for releasing').fill('Flat tyre');
    await page.getByRole('button', { name: 'Confirm release' }).click();
    await page.getByText('Job released: it goes to another driver.').waitFor();
    const row = await t.db
      .selectFrom('packages')
      .select(['status', 'driver_id'])
      .where('id', '=', pkg.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'PENDING', driver_id: null });
  });

  test('Ratings: received shows the stars only, given what the driver wrote', async () => {
    const d = await driverOnPhone('Dalmas');
    const pkg = await newPackage();
    for (const action of ['accept', 'pickup', 'start', 'deliver'])
      assert.equal((await post(t, `/api/packages/${pkg.id}/${action}`, d.headers)).statusCode, 200, action);
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/rating`, business.headers, { stars: 4, comment: 'Hidden remark' }))
        .statusCode,
      201,
    );
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/rating`, d.headers, { stars: 5, comment: 'Kind shopkeeper' })).statusCode,
      201,
    );
    // Free again, the driver would be offered the package released above: not in this test.
    await t.services.drivers.setAvailability(d.id, 'OFFLINE');
    await openAs(d.tokens.refreshToken);
    await page.getByRole('button', { name: 'Ratings' }).click();
    await page.getByRole('img', { name: '4 of 5 stars' }).waitFor();
    assert.equal(await page.getByText('Hidden remark').count(), 0);
    await page.getByRole('button', { name: 'Given' }).click();
    await page.getByText('Kind shopkeeper').waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
