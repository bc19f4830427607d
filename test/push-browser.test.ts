// The driver app's service worker and Web Push (contract section 19) in Chromium: the worker that
// /driver/ registers (Workbox's, which imports web/public/driver/push-sw.js) receives a push through
// the DevTools protocol (ServiceWorker.deliverPushMessage, as a push service would deliver it) and
// shows the offer as a notification whose data opens /driver/ at the offer. A real push service
// (FCM, Mozilla's, Apple's) cannot be reached from a test; the server's side of the way is
// test/push.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { devices, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { chromiumSkip, launchChromium } from './helpers/browser.js';

const skip = chromiumSkip('the push');

type Shown = { title: string; body: string; tag: string; data: { url?: string; offerId?: string } };

describe('driver app: push notifications in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let registrationId = '';
  const pageErrors: string[] = [];

  before(async () => {
    const { buildWeb, staleReason } = await import('../scripts/build-web.mjs');
    if (staleReason()) assert.ok(buildWeb().ok, 'the web apps build');
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    browser = await launchChromium();
    context = await browser.newContext({
      ...devices['Pixel 7'],
      viewport: { width: 360, height: 740 },
      serviceWorkers: 'allow',
    });
    await context.grantPermissions(['notifications'], { origin: base });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const notifications = () =>
    page.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      return (await reg.getNotifications()).map((n) => ({
        title: n.title,
        body: n.body,
        tag: n.tag,
        data: n.data as Record<string, string>,
      }));
    });

  async function waitForNotification(tag: string): Promise<Shown> {
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      const found = (await notifications()).find((n) => n.tag === tag);
      if (found) return found as Shown;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no notification ${tag}: ${JSON.stringify(await notifications())}`);
  }

  const deliver = (message: unknown) =>
    cdp.send('ServiceWorker.deliverPushMessage', { origin: base, registrationId, data: JSON.stringify(message) });

  test('/driver/ registers its service worker, which imports the push handlers', async () => {
    const sw = await (await fetch(`${base}/driver/sw.js`)).text();
    assert.match(sw, /importScripts\("\/driver\/push-sw\.js"\)/);
    const handlers = await fetch(`${base}/driver/push-sw.js`);
    assert.equal(handlers.status, 200);
    assert.match(handlers.headers.get('content-type') ?? '', /javascript/);

    cdp = await context.newCDPSession(page);
    const registered = new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const reg = registrations.find((r) => r.scopeURL === `${base}/driver/` && !r.isDeleted);
        if (reg) resolve(reg.registrationId);
      });
    });
    await cdp.send('ServiceWorker.enable');
    await page.goto(`${base}/driver/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.evaluate(() => navigator.serviceWorker.ready);
    registrationId = await registered;
    assert.ok(registrationId);
    assert.equal(await page.evaluate(() => Notification.permission), 'granted');
  });

  test('with nobody signed in on the phone, an offer push shows nothing', async () => {
    const offerId = '1d2c3b4a-0000-4000-8000-00000000000a';
    await deliver({
      type: 'offer',
      offerId,
      jobType: 'PACKAGE',
      jobId: 'x',
      deadline: new Date(Date.now() + 60_000).toISOString(),
      pickupArea: 'A',
      price: null,
    });
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(!(await notifications()).some((n) => n.tag === `offer-${offerId}`));
  });

  test('an offer pushed to the worker is shown as "New offer" with the pickup area and the price as the server wrote it; its data opens the offer', async () => {
    // What the driver app keeps while a driver is signed in (web/src/driver/sign-out.ts).
    await page.evaluate(async () =>
      (await caches.open('driver-signed-in')).put('/driver/signed-in', new Response('1')),
    );
    const offerId = '5b6c1c2e-8d1f-4a43-9d51-0f2f6f1b9a11';
    await deliver({
      type: 'offer',
      offerId,
      jobType: 'PACKAGE',
      jobId: '0a7e7d9e-4c4b-4a86-a3ab-3c6f2a0f3b22',
      deadline: new Date(Date.now() + 60_000).toISOString(),
      pickupArea: 'Moi Avenue 1, Nairobi',
      // PKR: ISO 4217 gives it 2 decimals, Chromium's Intl (CLDR) 0, which would show "PKR 35,000".
      price: { amount: 35000, currency: 'PKR' },
      priceText: 'PKR 350.00',
    });
    const shown = await waitForNotification(`offer-${offerId}`);
    assert.equal(shown.title, 'New offer');
    assert.equal(shown.body, 'Moi Avenue 1, Nairobi · PKR 350.00');
    assert.equal(shown.data.url, `${base}/driver/?offer=${offerId}`);
    assert.equal(shown.data.offerId, offerId);
  });

  test('a tap on the notification brings the app to the front (the worker handles notificationclick)', async () => {
    // Chromium offers no way to tap a notification from a test; the handler's effect is checked by
    // running it in the worker with a notification it showed: it closes the notification and sends
    // the open page the offer to show.
    const worker = context.serviceWorkers().find((w) => w.url() === `${base}/driver/sw.js`);
    assert.ok(worker, 'the worker is running');
    const messages = page.evaluate(
      () =>
        new Promise<unknown>((resolve) => {
          navigator.serviceWorker.addEventListener('message', (e) => resolve(e.data), { once: true });
        }),
    );
    // As text: the test's compiler would add helpers the worker does not have.
    const left = await worker.evaluate(`(async () => {
      const [notification] = await self.registration.getNotifications();
      const event = new NotificationEvent('notificationclick', { notification });
      // A synthetic event's waitUntil throws (it is not trusted): the work itself still runs.
      let pending = Promise.resolve();
      Object.defineProperty(event, 'waitUntil', { value: (p) => { pending = p; } });
      self.dispatchEvent(event);
      await pending.catch(() => undefined);
      return (await self.registration.getNotifications()).length;
    })()`);
    assert.equal(left, 0, 'the tapped notification is closed');
    const message = (await messages) as { type: string; url: string; offerId: string };
    assert.equal(message.type, 'notification.click');
    assert.match(message.url, /\/driver\/\?offer=5b6c1c2e-/);
  });

  test('an offer whose deadline passed while the phone was away is not shown; a customer moment is', async () => {
    await deliver({
      type: 'offer',
      offerId: 'c0ffee00-0000-4000-8000-000000000001',
      jobType: 'RIDE',
      jobId: 'x',
      deadline: new Date(Date.now() - 1000).toISOString(),
      pickupArea: 'A',
      price: null,
    });
    await deliver({ type: 'job', jobType: 'RIDE', jobId: '7d1f2a3b-0000-4000-8000-000000000002', status: 'ARRIVED' });
    const job = await waitForNotification('job-7d1f2a3b-0000-4000-8000-000000000002');
    assert.equal(job.title, 'Your driver has arrived');
    assert.ok(!(await notifications()).some((n) => n.tag === 'offer-c0ffee00-0000-4000-8000-000000000001'));
    assert.deepEqual(pageErrors, []);
  });

  test('the customer app: /app/sw.js imports the same handlers; a job moment opens /app/ at the ride', async () => {
    const sw = await (await fetch(`${base}/app/sw.js`)).text();
    assert.match(sw, /importScripts\("\/driver\/push-sw\.js"\)/);
    const customer = await context.newPage();
    customer.on('pageerror', (err) => pageErrors.push(err.message));
    const registered = new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const reg = registrations.find((r) => r.scopeURL === `${base}/app/` && !r.isDeleted);
        if (reg) resolve(reg.registrationId);
      });
    });
    await customer.goto(`${base}/app/`);
    await customer.getByRole('button', { name: 'Sign in' }).waitFor();
    await customer.evaluate(() => navigator.serviceWorker.ready);
    const appRegistration = await registered;
    const rideId = '9e2d4c1a-0000-4000-8000-000000000003';
    await cdp.send('ServiceWorker.deliverPushMessage', {
      origin: base,
      registrationId: appRegistration,
      // A payload without title and body (a server before section 27): the worker's own English line.
      data: JSON.stringify({ type: 'job', jobType: 'RIDE', jobId: rideId, status: 'ACCEPTED' }),
    });
    let shown: Shown | undefined;
    for (
      const until = Date.now() + 10_000;
      !shown && Date.now() < until;
      await new Promise((r) => setTimeout(r, 100))
    ) {
      shown = (
        await customer.evaluate(async () => {
          const reg = await navigator.serviceWorker.ready;
          return (await reg.getNotifications()).map((n) => ({
            title: n.title,
            body: n.body,
            tag: n.tag,
            data: n.data as Record<string, string>,
          }));
        })
      ).find((n) => n.tag === `job-${rideId}`) as Shown | undefined;
    }
    assert.ok(shown, 'the customer app shows the moment');
    assert.equal(shown.title, 'A driver accepted your ride');
    assert.equal(shown.data.url, `${base}/app/?ride=${rideId}`);
    await customer.close();
    assert.deepEqual(pageErrors, []);
  });
});
