import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseLocale, isLocale, localeOfTag } from './locales.js';

test('a tag counts by its language: sw-KE is sw, FR is fr, de-DE and garbage are none', () => {
  assert.equal(localeOfTag('sw-KE'), 'sw');
  assert.equal(localeOfTag('FR'), 'fr');
  assert.equal(localeOfTag('fr_CD'), 'fr');
  assert.equal(localeOfTag('de-DE'), undefined);
  assert.equal(localeOfTag(''), undefined);
  assert.equal(localeOfTag(null), undefined);
  assert.equal(isLocale('sw'), true);
  assert.equal(isLocale('sw-KE'), false);
});

test("a person: their own locale wins over the browser's, which wins over the country's default", () => {
  assert.equal(chooseLocale('fr', ['sw-TZ', 'en'], 'en'), 'fr');
  assert.equal(chooseLocale(null, ['sw-TZ', 'en'], 'fr'), 'sw');
  // The browser's first language we have, not its first language.
  assert.equal(chooseLocale(null, ['de-DE', 'fr-FR', 'sw'], 'sw'), 'fr');
  assert.equal(chooseLocale(null, ['de-DE', 'it'], 'sw'), 'sw');
  assert.equal(chooseLocale(undefined, [], 'fr'), 'fr');
});

test("an SMS to a recipient: contactLocale, else the creator's, else the country's, else English", () => {
  assert.equal(chooseLocale('sw', 'fr', 'en'), 'sw');
  assert.equal(chooseLocale(undefined, 'fr', 'sw'), 'fr');
  assert.equal(chooseLocale(undefined, null, 'sw'), 'sw');
  assert.equal(chooseLocale(undefined, null, null), 'en');
  assert.equal(chooseLocale('xx', 'yy', 'zz'), 'en');
});
