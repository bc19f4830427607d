// User data on the console's maps is text, never markup: names and addresses that are HTML (a
// <meta http-equiv="refresh"> sends the viewer elsewhere; the CSP does not stop it) show literally in
// every marker's tooltip, and nothing they contain becomes an element. Playwright driving the
// operating system's Chromium against a started instance, as test/console.test.ts does.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { serverDatabaseUrl } from './helpers/database.js';
import { freePort, spawnNode, waitFor, type NodeProcess } from './helpers/processes.js';

function onPath(names: string[]): string | undefined {
  for (const name of names) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const chromiumPath = process.env.CHROMIUM_PATH || onPath(['chromium', 'chromium-browser', 'google-chrome']);
const skip = chromiumPath ? false : 'no Chromium on PATH (apt-get install chromium): the web console browser tests are skipped';
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
  let server: NodeProcess;
  let base: string;
  let dataDir: string;
  let smsFile: string;
  let browser: Browser;
  let database: { url?: string; close(): Promise<void> } | undefined;
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  let packageId = '';
  let trackingPath = '';

  before(async () => {
    const { buildWeb, staleReason } = await import('../scripts/build-web.mjs');
    if (staleReason()) assert.ok(buildWeb().ok, 'the console builds');
    dataDir = await mkdtemp(path.join(tmpdir(), 'rd-hostile-'));
    smsFile = path.join(dataDir, 'sms.log');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SMS_TRANSPORT: 'file',
      SMS_FILE: smsFile,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PHONE: ADMIN.phone,
      ADMIN_PASSWORD: PASSWORD,
      RATE_LIMIT_LOGIN: '50/15m',
      RATE_LIMIT_GLOBAL: '2000/15m',
      DISPATCH_MODE: 'off',
      TRACKING_INTERVAL: '500ms',
    };
    if (serverDatabaseUrl) {
      const { createTestDatabase } = await import('./helpers/database.js');
      database = await createTestDatabase({ migrate: false });
      env.DATABASE_URL = database.url!;
    }
    server = spawnNode(['--import', 'tsx', 'src/server.ts'], env);
    await waitFor(() => server.output().includes('"msg":"ready"'), 90_000, 'the server', server.output);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
  });

  after(async () => {
    await browser?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const smsCount = (phone: string) => (existsSync(smsFile) ? readFileSync(smsFile, 'utf8').split('\n').filter((l) => l.includes(`"${phone}"`)).length : 0);

  async function smsCode(phone: string, before: number): Promise<string> {
    let code = '';
    await waitFor(
      () => {
        if (!existsSync(smsFile)) return false;
        const lines = readFileSync(smsFile, 'utf8')
          .split('\n')
          .filter((l) => l.includes(`"${phone}"`));
        if (lines.length <= before) return false;
        code = /\b(\d{6})\b/.exec((JSON.parse(lines[lines.length - 1]) as { text: string }).text)?.[1] ?? '';
        return code !== '';
      },
      10_000,
      `an SMS to ${phone}`,
    );
    return code;
  }

  async function call<T = Record<string, unknown>>(method: string, url: string, token?: string, body?: unknown): Promise<T> {
    const res = await fetch(`${base}/api${url}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${url}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  }

  async function apiLogin(identifier: string, phone: string): Promise<string> {
    const before = smsCount(phone);
    const step = await call<{ sessionId: string; phone: string }>('POST', '/auth/login', undefined, { identifier, password: PASSWORD });
    const code = await smsCode(phone, before);
    return (await call<{ accessToken: string }>('POST', '/auth/login/verify-otp', undefined, { sessionId: step.sessionId, phone: step.phone, code })).accessToken;
  }

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.route(/tile\.openstreetmap\.org/, (route) => route.abort());
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    return page;
  }

  async function signIn(page: Page, identifier: string, phone: string) {
    await page.goto(`${base}/login`);
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
    assert.equal(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), true, `${url} was left or reloaded`);
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
    const countries = (await (await fetch(`${base}/api/countries`)).json()) as { items: { id: string; code: string }[] };
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
      pickup: { location: { lat: -1.2864, lng: 36.8172 }, address: HOSTILE.pickupAddress, contactName: HOSTILE.pickupContact, contactPhone: '+254711200001' },
      dropoff: { location: { lat: -1.3, lng: 36.78 }, address: HOSTILE.dropoffAddress, contactName: HOSTILE.dropoffContact, contactPhone: '+254722333444' },
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
    await page.goto(`${base}/deliveries/${packageId}`);
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
    await page.goto(`${base}${trackingPath}`);
    await page.getByRole('heading', { name: 'Your delivery' }).waitFor();
    const url = await mark(page);
    await tooltipOf(page, 'pickup', 'Pickup');
    await tooltipOf(page, 'dropoff', 'Drop-off');
    await tooltipOf(page, 'driver', 'Driver');
    await stayed(page, url);
    await page.context().close();
  });

  test('no page error and no CSP violation (an injected <img onerror> would be one)', () => {
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(cspViolations, []);
  });
});
