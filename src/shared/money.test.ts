import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ISO_4217_MINOR_UNITS, decimalsOf, formatMoney, minorUnitsOf, parseMoney, toMajorText } from './money.js';

const CURRENCIES = Object.keys(ISO_4217_MINOR_UNITS);
const SAMPLES = [
  0,
  1,
  5,
  10,
  99,
  100,
  101,
  999,
  1000,
  12_345,
  1_234_567,
  2_000_000_000,
  123_456_789_012,
  Number.MAX_SAFE_INTEGER,
];

test('ISO 4217 minor units, where browsers (CLDR) put the point elsewhere too', () => {
  for (const code of [
    'AFN',
    'ALL',
    'COP',
    'HUF',
    'IDR',
    'IRR',
    'KPW',
    'LAK',
    'LBP',
    'MGA',
    'MMK',
    'PKR',
    'SLL',
    'SOS',
    'SYP',
    'YER',
  ])
    assert.equal(minorUnitsOf(code), 2, code);
  assert.deepEqual(
    ['IQD', 'KWD', 'BHD', 'UGX', 'RWF', 'XOF', 'JPY', 'KES', 'CLF'].map(minorUnitsOf),
    [3, 3, 3, 0, 0, 0, 0, 2, 4],
  );
  assert.equal(CURRENCIES.length, 169);
  for (const code of CURRENCIES) assert.match(code, /^[A-Z]{3}$/);
  // Not currencies a country counts in (no minor unit), and nothing inherited from Object.
  for (const code of ['XAU', 'XDR', 'XXX', 'XTS', 'ABC', 'constructor', 'toString'])
    assert.equal(minorUnitsOf(code), undefined, code);
  assert.equal(decimalsOf('ABC'), 2);
});

test('over the whole table: format shows exactly the minor units, and parse reads it back', () => {
  for (const currency of CURRENCIES) {
    const units = ISO_4217_MINOR_UNITS[currency];
    for (const amount of SAMPLES) {
      const text = formatMoney(amount, currency);
      assert.ok(text.startsWith(`${currency} `), text);
      const decimals = /\.(\d+)$/.exec(text)?.[1] ?? '';
      assert.equal(decimals.length, units, `${currency} ${amount}: ${text}`);
      assert.equal(parseMoney(text, units), amount, `${currency} ${amount}: ${text}`);
      assert.equal(parseMoney(toMajorText(amount, units), units), amount, `${currency} ${amount}`);
    }
  }
});

test('any safe amount in any currency survives format and parse exactly (no floating point)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.constantFrom(...CURRENCIES),
      (amount, currency) => {
        assert.equal(parseMoney(formatMoney(amount, currency), decimalsOf(currency)), amount);
      },
    ),
    { numRuns: 2000 },
  );
});

test('formatting: the English grouping, the code, negative amounts, a server-given digit count', () => {
  assert.equal(formatMoney(17430, 'KES'), 'KES 174.30');
  assert.equal(formatMoney(1_234_567, 'PKR'), 'PKR 12,345.67');
  assert.equal(formatMoney(1_234_567, 'IQD'), 'IQD 1,234.567');
  assert.equal(formatMoney(1500, 'UGX'), 'UGX 1,500');
  assert.equal(formatMoney(-250, 'NGN'), '-NGN 2.50');
  assert.equal(formatMoney(9_007_199_254_740_991, 'USD'), 'USD 90,071,992,547,409.91');
  assert.equal(formatMoney(1234, 'KES', 3), 'KES 1.234');
  assert.equal(toMajorText(5, 3), '0.005');
  assert.equal(toMajorText(-250, 2), '-2.50');
  assert.equal(toMajorText(42, 0), '42');
});

test('parsing what a person types', () => {
  const cases: [string, number, number | undefined][] = [
    ['70', 2, 7000],
    ['70.5', 2, 7050],
    ['70,5', 2, 7050],
    ['70.', 2, 7000],
    [' 1 234.50 ', 2, 123_450],
    ["1'234.50", 2, 123_450],
    ['1,234.50', 2, 123_450],
    ['1.234,50', 2, 123_450],
    ['1,500', 2, 150_000],
    ['1,500', 0, 1500],
    ['1,234,567', 2, 123_456_700],
    ['1,5', 3, 1500],
    ['1.005', 3, 1005],
    ['0.29', 3, 290],
    ['kes 12', 2, 1200],
    ['0', 2, 0],
    ['1.005', 2, undefined],
    ['1.5', 0, undefined],
    ['', 2, undefined],
    ['.5', 2, undefined],
    ['-5', 2, undefined],
    ['1e3', 2, undefined],
    ['12,34,5', 2, undefined],
    ['1.2.3', 2, undefined],
    ['abc', 2, undefined],
    ['99999999999999999', 2, undefined],
  ];
  for (const [text, units, expected] of cases) assert.equal(parseMoney(text, units), expected, JSON.stringify(text));
});
