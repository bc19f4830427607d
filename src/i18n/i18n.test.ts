import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOCALES } from '../shared/locales.js';
import { countSegments, nonGsmCharacters } from '../sms/segments.js';
import { CATALOGS, formatClock, translate, type MessageKey } from './i18n.js';

const SMS_VALUES = {
  code: '123456',
  minutes: 10,
  time: '18:00',
  url: 'https://example.com/t/eyJhbGciOiJIUzI1NiJ9.abcdefghijklmnop',
};

test('every catalog has exactly the keys of the English one, and every message parses', () => {
  const keys = Object.keys(CATALOGS.en).sort();
  for (const locale of LOCALES) {
    assert.deepEqual(Object.keys(CATALOGS[locale]).sort(), keys, `${locale}: the same keys as en`);
    for (const key of keys)
      assert.doesNotThrow(
        () =>
          translate(locale, key as MessageKey, {
            ...SMS_VALUES,
            number: 'INV-1',
            month: '2026-10',
            date: '2026-11-01',
            currency: 'KES',
            count: 3,
            hasPrice: 'yes',
            area: 'A',
            price: 'KES 1.00',
          }),
        `${locale} ${key}`,
      );
  }
});

test('each SMS template encodes as GSM-7 in every language, in one or two segments', () => {
  const counted: string[] = [];
  for (const locale of LOCALES) {
    for (const key of Object.keys(CATALOGS.en).filter((k) => k.startsWith('sms.'))) {
      const text = translate(locale, key as MessageKey, SMS_VALUES);
      assert.deepEqual(nonGsmCharacters(text), [], `${locale} ${key}: ${text}`);
      const { encoding, segments } = countSegments(text);
      assert.equal(encoding, 'GSM-7', `${locale} ${key}`);
      assert.ok(segments <= 2, `${locale} ${key}: ${segments} segments`);
      counted.push(`${locale} ${key}: ${segments}`);
    }
  }
  assert.equal(counted.length, 3 * 7);
});

test('the SMS texts in en, sw and fr', () => {
  assert.equal(
    translate('en', 'sms.code.LOGIN', { code: '123456', minutes: 1 }),
    'Your login code is 123456. It expires in 1 minute.',
  );
  assert.equal(
    translate('sw', 'sms.code.LOGIN', { code: '123456', minutes: 10 }),
    'Nambari yako ya kuingia ni 123456. Itaisha baada ya dakika 10.',
  );
  assert.equal(
    translate('fr', 'sms.code.LOGIN', { code: '123456', minutes: 10 }),
    'Votre code de connexion est 123456. Il expire dans 10 minutes.',
  );
  assert.equal(
    translate('fr', 'sms.tracking.IN_TRANSIT', { url: 'https://x.test/t/1' }),
    'Votre livraison est en route. Suivez-la en direct : https://x.test/t/1',
  );
  assert.equal(
    translate('sw', 'sms.tracking.CREATED', { url: 'https://x.test/t/1' }),
    'Kifurushi kinakuja kwako. Kifuatilie moja kwa moja: https://x.test/t/1',
  );
});

test('a French character GSM-7 lacks would put the SMS in UCS-2 (the reason the templates avoid ê, ô, ’)', () => {
  assert.equal(countSegments('Votre colis sera livré à 18:00.').encoding, 'GSM-7');
  assert.equal(countSegments('Votre colis doit être livré.').encoding, 'UCS-2');
  assert.equal(countSegments('Aujourd’hui').encoding, 'UCS-2');
});

test('times are 24-hour digits in the zone given, in every language', () => {
  const at = new Date('2026-12-07T15:05:00Z');
  for (const locale of LOCALES) assert.equal(formatClock(at, locale, 'Africa/Nairobi'), '18:05', locale);
  assert.equal(formatClock(at, 'fr', 'Africa/Kinshasa'), '16:05');
});
