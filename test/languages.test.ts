// Languages (contract section 27) through the API: a user's locale, a country's default, the
// recipient's SMS in the language the rule picks, GET /admin/sms, push texts and the invoice PDF.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { renderInvoicePdf, type InvoiceDocument } from '../src/modules/invoices/invoice-pdf.js';
import { PushService } from '../src/modules/push/push.service.js';
import type { PushMessage } from '../src/modules/push/push-sender.js';
import { buildSmsTestApp, type SmsTestApp } from './auth-support.js';
import { countryId, createUser, type TestUser } from './helpers/factories.js';
import { packageBody } from './packages-helpers.js';

const run = promisify(execFile);

describe('languages', () => {
  let t: SmsTestApp;
  let admin: TestUser;
  let business: TestUser;
  let ke: string;

  before(async () => {
    t = await buildSmsTestApp();
    admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS' });
    ke = await countryId(t);
  });
  after(async () => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, user: TestUser, payload?: object) =>
    t.app.inject({ method, url: `/api${url}`, headers: user.headers, ...(payload ? { payload } : {}) });

  test('PATCH /auth/me sets the locale (en, sw, fr; null gives it back); anything else is 400', async () => {
    const me = await createUser(t);
    assert.equal((await call('GET', '/auth/me', me)).json().locale, null);
    const set = await call('PATCH', '/auth/me', me, { locale: 'sw' });
    assert.equal(set.statusCode, 200);
    assert.equal(set.json().locale, 'sw');
    assert.equal((await call('GET', '/auth/me', me)).json().locale, 'sw');
    for (const bad of ['de', 'SW', 'sw-KE', 3, '']) {
      const res = await call('PATCH', '/auth/me', me, { locale: bad });
      assert.equal(res.statusCode, 400, String(bad));
      assert.equal(res.json().code, 'VALIDATION_FAILED');
    }
    assert.equal((await call('PATCH', '/auth/me', me, {})).statusCode, 400);
    assert.equal((await call('PATCH', '/auth/me', me, { locale: 'fr', role: 'ADMIN' })).statusCode, 400);
    assert.equal((await call('PATCH', '/auth/me', me, { locale: null })).json().locale, null);
    const anonymous = await t.app.inject({ method: 'PATCH', url: '/api/auth/me', payload: { locale: 'fr' } });
    assert.equal(anonymous.statusCode, 401);
  });

  test("a country's defaultLocale is the admin's to set (en by default), and checked", async () => {
    const created = await call('POST', '/admin/countries', admin, {
      code: 'CD',
      name: 'Congo (DRC)',
      currency: 'CDF',
      dialCode: '+243',
      defaultLocale: 'fr',
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().defaultLocale, 'fr');
    const listed = (await t.app.inject({ method: 'GET', url: '/api/countries' })).json();
    const items = (Array.isArray(listed) ? listed : listed.items) as { code: string; defaultLocale: string }[];
    assert.equal(items.find((c) => c.code === 'KE')?.defaultLocale, 'en');
    const bad = await call('PATCH', `/admin/countries/${created.json().id}`, admin, { defaultLocale: 'ln' });
    assert.equal(bad.statusCode, 400);
    const sw = await call('PATCH', `/admin/countries/${ke}`, admin, { defaultLocale: 'sw' });
    assert.equal(sw.json().defaultLocale, 'sw');
    const notAdmin = await call('PATCH', `/admin/countries/${ke}`, business, { defaultLocale: 'fr' });
    assert.equal(notAdmin.statusCode, 403);
  });

  test("the recipient's SMS: dropoff.contactLocale, else the creator's locale, else the country's default", async () => {
    await call('PATCH', `/admin/countries/${ke}`, admin, { defaultLocale: 'sw' });
    const send = async (creator: TestUser, contactLocale?: string) => {
      const body = packageBody(ke, { notifyRecipient: true });
      if (contactLocale) (body.dropoff as Record<string, unknown>).contactLocale = contactLocale;
      const before = t.messages().length;
      const res = await call('POST', '/packages', creator, body);
      assert.equal(res.statusCode, 201, res.body);
      for (let i = 0; i < 50 && t.messages().length === before; i++) await new Promise((r) => setTimeout(r, 20));
      return { text: t.messages().at(-1)!.text, pkg: res.json() };
    };
    const fr = await send(business, 'fr');
    assert.equal(fr.pkg.dropoff.contactLocale, 'fr');
    assert.match(fr.text, /^Une livraison arrive pour vous\. Suivez-la en direct : https?:\/\/\S+\/t\/\S+$/);
    await call('PATCH', '/auth/me', business, { locale: 'en' });
    assert.match((await send(business)).text, /^A delivery is coming to you\. Follow it live: /);
    await call('PATCH', '/auth/me', business, { locale: null });
    assert.match((await send(business)).text, /^Kifurushi kinakuja kwako\. Kifuatilie moja kwa moja: /);
    const refused = await call('POST', '/packages', business, {
      ...packageBody(ke),
      dropoff: { ...packageBody(ke).dropoff, contactLocale: 'de' },
    });
    assert.equal(refused.statusCode, 400);
    await call('PATCH', `/admin/countries/${ke}`, admin, { defaultLocale: 'en' });
  });

  test('GET /admin/sms lists what was sent, masked, with encoding and segments, never the text of a code or a link', async () => {
    const approvedUser = await createUser(t, { role: 'BUSINESS', status: 'PENDING_APPROVAL' });
    await t.db.updateTable('users').set({ locale: 'fr' }).where('id', '=', approvedUser.id).execute();
    assert.equal((await call('POST', `/admin/users/${approvedUser.id}/approve`, admin)).statusCode, 200);
    const res = await call('GET', '/admin/sms?limit=100', admin);
    assert.equal(res.statusCode, 200);
    const items = res.json().items as Record<string, unknown>[];
    const approved = items.find((i) => i.template === 'accountApproved')!;
    assert.equal(approved.locale, 'fr');
    assert.equal(approved.text, 'Votre compte a été approuvé. Vous pouvez maintenant vous connecter.');
    assert.equal(approved.encoding, 'GSM-7');
    assert.equal(approved.segments, 1);
    assert.equal(approved.status, 'SENT');
    assert.match(approved.recipient as string, /^\+2547\*+\d{3}$/);
    assert.ok(!JSON.stringify(items).includes(approvedUser.phone));
    const links = items.filter((i) => String(i.template).startsWith('tracking.'));
    assert.ok(links.length >= 3);
    for (const l of links) assert.equal(l.text, null);
    assert.deepEqual(links.map((l) => l.locale).sort(), ['en', 'fr', 'sw']);
    // A code: logged, its text never stored.
    const phone = '+254700111222';
    const otp = await t.app.inject({ method: 'POST', url: '/api/auth/register/send-otp', payload: { phone } });
    assert.equal(otp.statusCode, 200, otp.body);
    const all = (await call('GET', '/admin/sms?limit=100', admin)).json().items as Record<string, unknown>[];
    const code = all.find((i) => i.template === 'code.REGISTER')!;
    assert.equal(code.text, null);
    assert.equal(code.encoding, 'GSM-7');
    const stored = await t.db.selectFrom('sms_messages').select('text').where('template', 'like', 'code.%').execute();
    assert.equal(stored.length, 1);
    assert.ok(stored.every((r) => r.text === null));
    const page = await call('GET', '/admin/sms?limit=1', admin);
    assert.equal(page.json().items.length, 1);
    const next = await call('GET', `/admin/sms?limit=1&cursor=${page.json().nextCursor}`, admin);
    assert.notEqual(next.json().items[0].id, page.json().items[0].id);
    assert.equal((await call('GET', '/admin/sms?cursor=nonsense', admin)).statusCode, 400);
    assert.equal((await call('GET', '/admin/sms', business)).statusCode, 403);
  });

  test("push payloads carry title and body in the recipient's language", () => {
    const sent: { userId: string; message: PushMessage }[] = [];
    const push = new PushService({
      db: t.db,
      repo: undefined as never,
      clock: t.deps.clock,
      sender: { toUser: (userId: string, message: PushMessage) => sent.push({ userId, message }) } as never,
      publicKey: 'k',
      urlRules: undefined as never,
    });
    push.offerMade('d1', {
      id: 'o1',
      jobType: 'PACKAGE',
      jobId: 'j1',
      pickup: { location: { lat: -1.28, lng: 36.82 }, address: 'Moi Avenue 1' },
      price: { amount: 35000, currency: 'KES' },
      expiresAt: new Date(t.deps.clock.nowMs() + 60_000).toISOString(),
    });
    push.jobChanged({ jobType: 'PACKAGE', jobId: 'j1', status: 'DELIVERED', customerId: 'c1' });
    push.rideUnaccepted('c1', { jobId: 'r1', scheduledAt: '2026-12-07T15:00:00.000Z' });
    const texts = (locale: 'en' | 'sw' | 'fr') =>
      sent.map(({ message }) => {
        const m = typeof message === 'function' ? message({ locale, timeZone: 'Africa/Nairobi' }) : message;
        return [m.title, m.body];
      });
    assert.deepEqual(texts('en'), [
      ['New offer', 'Pickup: Moi Avenue 1 · KES 350.00'],
      ['Your package', 'Your package was delivered.'],
      ['Your ride at 18:00', 'No driver has accepted it yet: we keep looking until 10 minutes after it.'],
    ]);
    assert.deepEqual(texts('sw'), [
      ['Ofa mpya', 'Kuchukua: Moi Avenue 1 · KES 350.00'],
      ['Kifurushi chako', 'Kifurushi chako kimefikishwa.'],
      ['Safari yako ya 18:00', 'Hakuna dereva aliyeikubali bado: tunaendelea kutafuta hadi dakika 10 baada yake.'],
    ]);
    assert.deepEqual(texts('fr'), [
      ['Nouvelle proposition', 'Enlèvement : Moi Avenue 1 · KES 350.00'],
      ['Votre colis', 'Votre colis a été livré.'],
      [
        'Votre course de 18:00',
        "Aucun chauffeur ne l'a encore acceptée : nous cherchons jusqu'à 10 minutes après l'heure prévue.",
      ],
    ]);
  });

  test('the invoice PDF in en, sw and fr, read back with pdftotext', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rd-i18n-pdf-'));
    const doc: InvoiceDocument = {
      number: 'INV-000042',
      month: '2026-10',
      issuedAt: '2026-11-01T00:10:00.000Z',
      currency: 'KES',
      business: { id: business.id, name: 'Duka la Mama', address: null },
      openingBalance: 0,
      closingBalance: -45000,
      amountDue: 45000,
      totals: {
        deliveries: -45000,
        deliveryCount: 2,
        cancellationFees: 0,
        tips: 0,
        cashOnDelivery: 0,
        payments: 0,
        payouts: 0,
        other: 0,
        net: -45000,
      },
      lines: [
        {
          date: '2026-10-05T09:00:00.000Z',
          kind: 'DELIVERY',
          description: 'Delivery',
          jobType: 'PACKAGE',
          jobId: null,
          reference: 'ORD-1',
          amount: -25000,
        },
        {
          date: '2026-10-06T09:00:00.000Z',
          kind: 'DELIVERY',
          description: 'Ride',
          jobType: 'RIDE',
          jobId: null,
          reference: null,
          amount: -20000,
        },
      ],
    };
    const expected = {
      en: ['Invoice INV-000042', 'Billed to', 'Description', 'Delivery', 'Ride', 'Deliveries (2)', 'Amount due'],
      sw: [
        'Ankara INV-000042',
        'Inatozwa kwa',
        'Maelezo',
        'Usafirishaji',
        'Safari',
        'Usafirishaji (2)',
        'Kiasi kinachodaiwa',
      ],
      fr: ['Facture INV-000042', 'Facturé à', 'Libellé', 'Livraison', 'Course', 'Livraisons (2)', 'Montant dû'],
    } as const;
    try {
      for (const locale of ['en', 'sw', 'fr'] as const) {
        const file = path.join(dir, `${locale}.pdf`);
        writeFileSync(file, await renderInvoicePdf(doc, locale));
        const { stdout } = await run('pdftotext', ['-layout', file, '-']);
        for (const words of expected[locale]) assert.ok(stdout.includes(words), `${locale}: "${words}" in\n${stdout}`);
        if (locale !== 'en') assert.doesNotMatch(stdout, /Invoice|Billed|Amount due|Opening balance/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
