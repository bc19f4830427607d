import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countSegments, nonGsmCharacters } from './segments.js';

test('the default alphabet has its 127 characters (128 positions less the escape) and the extension 10', () => {
  // Every one of these is one septet: a message of all of them is GSM-7.
  const all =
    '@£$¥èéùìòç\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
  assert.equal([...all].length, 127);
  assert.deepEqual(countSegments(all), { encoding: 'GSM-7', units: 127, segments: 1 });
  assert.deepEqual(countSegments('\f^{}\\[~]|€'), { encoding: 'GSM-7', units: 20, segments: 1 });
});

test('GSM-7: 160 septets in one segment, then 153 per segment, escape pairs never split', () => {
  assert.equal(countSegments('').segments, 1);
  assert.deepEqual(countSegments('a'.repeat(160)), { encoding: 'GSM-7', units: 160, segments: 1 });
  assert.deepEqual(countSegments('a'.repeat(161)), { encoding: 'GSM-7', units: 161, segments: 2 });
  assert.equal(countSegments('a'.repeat(306)).segments, 2);
  assert.equal(countSegments('a'.repeat(307)).segments, 3);
  // 80 euro signs are 160 septets: one segment; 81 are 162: two (76 pairs fit in 153 septets).
  assert.deepEqual(countSegments('€'.repeat(80)), { encoding: 'GSM-7', units: 160, segments: 1 });
  assert.equal(countSegments('€'.repeat(81)).segments, 2);
  // 152 plain septets then a pair: the pair does not fit in the first 153 and opens the second.
  assert.equal(countSegments(`${'a'.repeat(152)}€${'a'.repeat(152)}`).segments, 3);
  assert.equal(countSegments(`${'a'.repeat(151)}€${'a'.repeat(153)}`).segments, 2);
});

test('UCS-2 as soon as one character is outside GSM-7: 70 units, then 67, surrogate pairs whole', () => {
  assert.deepEqual(countSegments('Ç'), { encoding: 'UCS-2', units: 1, segments: 1 });
  assert.deepEqual(countSegments('Ж'.repeat(70)), { encoding: 'UCS-2', units: 70, segments: 1 });
  assert.equal(countSegments('Ж'.repeat(71)).segments, 2);
  assert.equal(countSegments('Ж'.repeat(134)).segments, 2);
  assert.equal(countSegments('Ж'.repeat(135)).segments, 3);
  // 66 units then an emoji (2 units): it moves whole to the second segment.
  assert.equal(countSegments(`${'Ж'.repeat(66)}😀${'Ж'.repeat(66)}`).segments, 3);
  assert.equal(countSegments(`${'Ж'.repeat(65)}😀${'Ж'.repeat(67)}`).segments, 2);
});

test('French and Swahili text: the characters that would force UCS-2 are named', () => {
  assert.equal(countSegments('Msimbo wako ni 123456. Usimpe mtu yeyote.').encoding, 'GSM-7');
  assert.deepEqual(nonGsmCharacters('Votre colis a été livré à 14 h — merci'), ['—']);
  assert.deepEqual(nonGsmCharacters('Reçu, ça coûte'), ['û']);
  assert.deepEqual(nonGsmCharacters('Vos colis: à livrer, éè'), []);
});
