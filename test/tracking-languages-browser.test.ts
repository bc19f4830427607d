// The public tracking page in Swahili and French (contract section 27) in Chromium: the words from
// the web catalog (no English word on screen), <html lang> following the locale, times in the job's
// zone named when it is not the viewer's, axe with the WCAG 2.2 AA tags finding nothing serious.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { chromiumSkip, useBrowserHarness } from './helpers/browser.js';
import { projectRoot } from './helpers/processes.js';

const skip = chromiumSkip('the tracking page');
const PASSWORD = 'languages-test-Passw0rd';
const ADMIN = { email: 'admin@example.com', phone: '+254700000027' };
const BUSINESS = { email: 'duka@example.com', phone: '+254744270001' };

const catalog = (locale: string) =>
  JSON.parse(readFileSync(path.join(projectRoot, 'web/src/shared/i18n', `${locale}.json`), 'utf8')) as Record<
    string,
    string
  >;
const words = (text: string) => new Set(text.toLowerCase().match(/\p{L}{3,}/gu) ?? []);

/** English words the page could show: every word of the English catalog, less those the other language shares. */
function englishWordsFor(locale: string): Set<string> {
  const english = words(
    Object.values(catalog('en'))
      .join(' ')
      .replace(/\{[^}]*\}|<\/?\w+>/g, ' '),
  );
  for (const w of words(Object.values(catalog(locale)).join(' '))) english.delete(w);
  return english;
}

describe('the tracking page in sw and fr', { skip }, () => {
  const h = useBrowserHarness({
    tmpPrefix: 'rd-languages-',
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
    const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa']).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      [],
      `axe on ${what}`,
    );
  }

  let trackingPath = '';

  test('a business creates a package with promised windows; its tracking link', async () => {
    const countries = (await (await fetch(`${h.base}/api/countries`)).json()) as {
      items: { id: string; code: string }[];
    };
    const kenya = countries.items.find((c) => c.code === 'KE')!.id;
    const admin = await h.apiLogin(ADMIN.email, ADMIN.phone);
    await h.call('POST', '/admin/users', admin, {
      email: BUSINESS.email,
      password: PASSWORD,
      firstName: 'Mama',
      lastName: 'Duka',
      phone: BUSINESS.phone,
      role: 'BUSINESS',
      countryId: kenya,
      businessName: 'Duka la Mama',
    });
    const business = await h.apiLogin(BUSINESS.email, BUSINESS.phone);
    const hour = 3600_000;
    const start = Math.ceil(Date.now() / hour) * hour + 2 * hour;
    const iso = (ms: number) => new Date(ms).toISOString();
    const stop = (lat: number, lng: number, name: string) => ({
      location: { lat, lng },
      address: `${name} Street 1`,
      contactName: name,
      contactPhone: '+254712345678',
    });
    const pkg = await h.call<{ trackingUrl: string }>('POST', '/packages', business, {
      pickup: stop(-1.2864, 36.8172, 'Amina'),
      dropoff: { ...stop(-1.3, 36.8, 'Otieno'), contactLocale: 'sw' },
      vehicleType: 'BIKE',
      countryId: kenya,
      parcel: { description: 'Mkate', size: 'SMALL' },
      pickupWindow: { start: iso(start), end: iso(start + hour) },
      dropoffWindow: { start: iso(start + 2 * hour), end: iso(start + 3 * hour) },
      timeZone: 'Africa/Nairobi',
    });
    trackingPath = new URL(pkg.trackingUrl).pathname;
    assert.match(trackingPath, /^\/t\/.+/);
  });

  for (const [locale, browserLocale, heading] of [
    ['sw', 'sw-KE', 'Kifurushi chako'],
    ['fr', 'fr-CD', 'Votre livraison'],
  ] as const) {
    test(`in ${locale}: catalog words only, lang="${locale}", the job's zone named, axe clean`, async () => {
      // A viewer in Paris: the job's Nairobi times are named with their zone.
      const context = await h.browser.newContext({ locale: browserLocale, timezoneId: 'Europe/Paris' });
      const page = h.watch(await context.newPage());
      page.setDefaultTimeout(15_000);
      await page.goto(`${h.base}${trackingPath}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await page.locator('.map .leaflet-container, .map.leaflet-container').first().waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.lang), locale);
      const text = await page.evaluate(() => document.body.innerText);
      const english = englishWordsFor(locale);
      const left = [...words(text)].filter((w) => english.has(w));
      assert.deepEqual(left, [], `English on the ${locale} page:\n${text}`);
      assert.ok(text.includes(catalog(locale)['tracking.noDriver']!), text);
      assert.ok(text.includes(catalog(locale)['status.PENDING']!), text);
      assert.match(text, /\(Africa\/Nairobi\)/);
      // 24-hour digits in the job's zone: the window starts on the hour.
      assert.match(text, /\b\d{2}:00–\d{2}:00\b/);
      assert.equal(await page.title(), `${catalog(locale)['tracking.title']} · ${catalog(locale)['tracking.brand']}`);
      await axe(page, `the tracking page in ${locale}`);
      await context.close();
    });
  }

  test('an English browser reads English; ?lang=fr in the link reads French', async () => {
    const context = await h.browser.newContext({ locale: 'en-US', timezoneId: 'Africa/Nairobi' });
    const page = h.watch(await context.newPage());
    await page.goto(`${h.base}${trackingPath}`);
    await page.getByRole('heading', { name: 'Your delivery', level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
    // The viewer is in the job's zone: not named.
    assert.doesNotMatch(await page.evaluate(() => document.body.innerText), /Africa\/Nairobi/);
    await page.goto(`${h.base}${trackingPath}?lang=fr`);
    await page.getByRole('heading', { name: 'Votre livraison', level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'fr');
    await context.close();
    assert.deepEqual(h.pageErrors, []);
    assert.deepEqual(h.cspViolations, []);
  });
});
