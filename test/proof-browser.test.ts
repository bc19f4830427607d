// Proof of delivery in a real browser (contract section 19): the driver app on a phone (Pixel 7 at
// 360 × 740, touch) takes a photo (a file given to the "Take photo" input), the recipient signs on the
// "Sign here" canvas with pointer moves, and "Delivered" uploads both before delivering; then the
// business's console shows the photo and the signature (fetched as blobs with the bearer header)
// and the recipient's name. Accounts are made through the API; the apps are signed in with a
// refresh token, as a returning user's tab is.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { devices } from 'playwright-core';
import sharp from 'sharp';
import { chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { waitFor } from './helpers/processes.js';
import { jpegWithGps } from './proof-helpers.js';

const skip = chromiumSkip('the proof-of-delivery');
const PASSWORD = 'proof-test-Passw0rd';
const PICKUP = { lat: -1.2864, lng: 36.8172 };
const DROPOFF = { lat: -1.3, lng: 36.78 };

describe('proof of delivery in Chromium: driver app (phone) and console', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-proof-browser-',
    password: PASSWORD,
    env: { RATE_LIMIT_LOGIN: '50/15m', RATE_LIMIT_GLOBAL: '2000/15m', DISPATCH_MODE: 'off' },
  });
  const { call, smsCount, smsCode, pageErrors } = h;
  let kenya: string;
  let adminToken: string;

  before(async () => {
    const countries = await call<{ items: { id: string; code: string }[] }>('GET', '/countries');
    kenya = countries.items.find((c) => c.code === 'KE')!.id;
    adminToken = (await login('admin@localhost', '+254700000000', h.adminPassword)).accessToken;
  });

  async function login(identifier: string, phone: string, password = PASSWORD) {
    const before = smsCount(phone);
    const step = await call<{ sessionId: string; phone: string }>('POST', '/auth/login', undefined, {
      identifier,
      password,
    });
    const code = await smsCode(phone, before);
    return call<{ accessToken: string; refreshToken: string }>('POST', '/auth/login/verify-otp', undefined, {
      sessionId: step.sessionId,
      phone: step.phone,
      code,
    });
  }

  async function account(role: 'DRIVER' | 'BUSINESS', phone: string, email: string, extra: Record<string, unknown>) {
    const before = smsCount(phone);
    const otp = await call<{ sessionId: string; phone: string }>('POST', '/auth/register/send-otp', undefined, {
      phone,
    });
    await call('POST', '/auth/register', undefined, {
      sessionId: otp.sessionId,
      phone: otp.phone,
      code: await smsCode(phone, before),
      email,
      password: PASSWORD,
      firstName: 'Test',
      lastName: role,
      role,
      countryId: kenya,
      ...extra,
    });
    const pending = await call<{ items: { id: string; email: string }[] }>(
      'GET',
      '/admin/users?status=PENDING_APPROVAL',
      adminToken,
    );
    const user = pending.items.find((u) => u.email === email)!;
    await call('POST', `/admin/users/${user.id}/approve`, adminToken);
    return { id: user.id, ...(await login(email, phone)) };
  }

  test('the driver takes a photo and collects a signature; Delivered uploads them; the console shows them', async () => {
    const shop = await account('BUSINESS', '+254733600002', 'proof.shop@example.com', { businessName: 'Proof Shop' });
    const driver = await account('DRIVER', '+254733600001', 'proof.rider@example.com', {
      vehicleType: 'BIKE',
      vehiclePlate: 'KMEB 001P',
    });
    await call('POST', '/drivers/me/availability', driver.accessToken, { status: 'ONLINE' });
    const pkg = await call<{ id: string }>('POST', '/packages', shop.accessToken, {
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
      reference: 'PROOF-1',
      proofRequired: ['PHOTO', 'SIGNATURE'],
    });
    await call('POST', `/packages/${pkg.id}/assign`, adminToken, { driverId: driver.id });
    await call('POST', `/packages/${pkg.id}/pickup`, driver.accessToken);
    await call('POST', `/packages/${pkg.id}/start`, driver.accessToken);

    // ---- the driver app, on a phone ----
    const phone = await h.browser.newContext({
      ...devices['Pixel 7'],
      viewport: { width: 360, height: 740 },
      geolocation: { latitude: DROPOFF.lat, longitude: DROPOFF.lng, accuracy: 10 },
      permissions: ['geolocation'],
    });
    await phone.addInitScript((token) => {
      if (!localStorage.getItem('driver.refreshToken')) localStorage.setItem('driver.refreshToken', token);
    }, driver.refreshToken);
    const page = await phone.newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    await page.goto(`${h.base}/driver/`);
    await page.getByRole('heading', { name: /Delivery IN TRANSIT/ }).waitFor();

    // Without the proof the server refuses, and the app says why.
    await page.getByRole('button', { name: 'Delivered' }).click();
    await page
      .getByRole('alert')
      .getByText(/proof of delivery/)
      .waitFor();

    const photo = await jpegWithGps();
    await page.getByLabel('Take photo').setInputFiles({ name: 'door.jpg', mimeType: 'image/jpeg', buffer: photo });
    await page.getByText('Photo ready: door.jpg').waitFor();
    const pad = page.getByRole('img', { name: 'Sign here' });
    const box = (await pad.boundingBox())!;
    assert.ok(box.width <= 360, 'the pad fits the phone');
    // A signature that is cleared is not sent; the one drawn after it is.
    await page.mouse.move(box.x + 20, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(box.x + 60, box.y + 60, { steps: 4 });
    await page.mouse.up();
    await page.getByRole('button', { name: 'Clear' }).click();
    assert.ok(await page.getByRole('button', { name: 'Clear' }).isDisabled());
    await page.mouse.move(box.x + 20, box.y + box.height * 0.7);
    await page.mouse.down();
    for (let i = 1; i <= 12; i += 1)
      await page.mouse.move(box.x + 20 + i * ((box.width - 40) / 12), box.y + box.height * (i % 2 ? 0.3 : 0.7), {
        steps: 2,
      });
    await page.mouse.up();
    await page.getByLabel('Recipient name').fill('Achieng Otieno');
    const layout = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      width: window.innerWidth,
    }));
    assert.ok(layout.scrollWidth <= layout.width, 'no horizontal scrolling');
    await page.evaluate(() => {
      const original = window.fetch;
      window.fetch = async (input, init) => {
        if (input instanceof Request && input.method === 'POST' && input.url.endsWith('/proof')) {
          const photo = (await input.clone().formData()).get('photo');
          if (photo instanceof Blob)
            (window as unknown as { sentPhoto: number[] }).sentPhoto = [...new Uint8Array(await photo.arrayBuffer())];
        }
        return original(input, init);
      };
    });
    const upload = page.waitForResponse(
      (r) => r.url().endsWith(`/api/packages/${pkg.id}/proof`) && r.request().method() === 'POST',
    );
    await page.getByRole('button', { name: 'Delivered' }).click();
    assert.equal((await upload).status(), 200);
    // The app scaled the 3000 × 2000 photo to 1600 px (JPEG) before sending it (the page's fetch
    // kept what it sent: Playwright does not give a multipart body with a file).
    const sentPhoto = await sharp(
      Buffer.from(await page.evaluate(() => (window as unknown as { sentPhoto: number[] }).sentPhoto)),
    ).metadata();
    assert.deepEqual(
      [sentPhoto.format, sentPhoto.width, sentPhoto.height, sentPhoto.exif],
      ['jpeg', 1600, 1067, undefined],
    );
    await page.getByText('Delivered. Well done.').waitFor();

    const delivered = await call<{
      status: string;
      proof: { photoUrl: string; signatureUrl: string; recipientName: string };
    }>('GET', `/packages/${pkg.id}`, shop.accessToken);
    assert.equal(delivered.status, 'DELIVERED');
    assert.equal(delivered.proof.recipientName, 'Achieng Otieno');
    const image = async (url: string) =>
      Buffer.from(
        await (
          await fetch(`${h.base}${url}`, { headers: { authorization: `Bearer ${shop.accessToken}` } })
        ).arrayBuffer(),
      );
    const storedPhoto = await sharp(await image(delivered.proof.photoUrl)).metadata();
    assert.deepEqual([storedPhoto.format, storedPhoto.width, storedPhoto.exif], ['jpeg', 1600, undefined]);
    const signature = await image(delivered.proof.signatureUrl);
    const signatureMeta = await sharp(signature).metadata();
    assert.equal(signatureMeta.format, 'png');
    // The strokes are there: some pixels are drawn (not all transparent).
    const { data } = await sharp(signature).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    let inked = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) inked += 1;
    assert.ok(inked > 200, `${inked} inked pixels`);
    await phone.close();

    // ---- the business's console ----
    const desk = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await desk.addInitScript((token) => {
      if (!sessionStorage.getItem('console.refreshToken')) sessionStorage.setItem('console.refreshToken', token);
    }, shop.refreshToken);
    const consolePage = await desk.newPage();
    consolePage.setDefaultTimeout(20_000);
    consolePage.on('pageerror', (err) => pageErrors.push(`${consolePage.url()}: ${err.message}`));
    await consolePage.goto(`${h.base}/deliveries/${pkg.id}`);
    await consolePage.getByRole('heading', { name: 'Proof of delivery' }).waitFor();
    await consolePage.getByTestId('proof-recipient').getByText('Achieng Otieno').waitFor();
    for (const alt of ['Proof of delivery photo', 'Recipient’s signature']) {
      const img = consolePage.getByRole('img', { name: alt });
      await img.waitFor();
      assert.match((await img.getAttribute('src')) ?? '', /^blob:/, `${alt} is an object URL, not a link to the API`);
      await waitFor(
        () => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0),
        10_000,
        `${alt} decoded`,
      );
    }
    const natural = await consolePage
      .getByRole('img', { name: 'Proof of delivery photo' })
      .evaluate((el) => (el as HTMLImageElement).naturalWidth);
    assert.equal(natural, 1600);
    await desk.close();
    assert.deepEqual(pageErrors, []);
  });
});
