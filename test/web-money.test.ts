// Money in the web apps (issue 39): every site that shows or reads an amount puts the point where
// ISO 4217 does, the server's table (src/shared/money.ts), not where the browser's Intl does (CLDR
// differs for 17 currencies: PKR 0 and IQD 0 in the browser, 2 and 3 in ISO 4217).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as server from '../src/shared/money.js';
import { toMinorUnits as consoleToMinorUnits, toMajorText } from '../web/src/console/money/money.js';
import * as web from '../web/src/shared/money.js';
import { generateWebMoney, MONEY_FILE } from '../scripts/web-types.js';

// The apps' .tsx modules, loaded at run time: the server's typecheck (this file's) has no JSX.
const tsx = (file: string) => import(new URL(`../web/src/${file}`, import.meta.url).href);
const { formatMoney } = (await tsx('shared/ui.tsx')) as { formatMoney: (amount: number, currency: string) => string };
const { toMinorUnits: cashToMinorUnits } = (await tsx('driver/cash.tsx')) as {
  toMinorUnits: (text: string, currency: string) => number | undefined;
};
const { toMinor } = (await tsx('shared/rate.tsx')) as {
  toMinor: (text: string, currency: string) => number | undefined;
};

test("the web apps' money module is the server's, as npm run web:types writes it", () => {
  const copy = readFileSync(MONEY_FILE, 'utf8');
  assert.ok(copy === generateWebMoney(), 'web/src/shared/money.ts is out of date: run npm run web:types');
  assert.deepEqual(web.ISO_4217_MINOR_UNITS, server.ISO_4217_MINOR_UNITS);
  for (const currency of Object.keys(server.ISO_4217_MINOR_UNITS)) {
    assert.equal(formatMoney(123_456_789, currency), server.formatMoney(123_456_789, currency), currency);
  }
});

test('the web apps show PKR with 2 decimals and IQD with 3, as the server and its PDFs do', () => {
  assert.equal(formatMoney(1234567, 'PKR'), 'PKR 12,345.67');
  assert.equal(formatMoney(1234567, 'IQD'), 'IQD 1,234.567');
  assert.equal(formatMoney(17430, 'KES'), 'KES 174.30');
  assert.equal(formatMoney(1500, 'UGX'), 'UGX 1,500');
  assert.equal(toMajorText(7050, 'PKR'), '70.50');
  assert.equal(toMajorText(7050, 'IQD'), '7.050');
});

test('the web apps read a typed PKR or IQD amount into the right minor units', () => {
  assert.equal(consoleToMinorUnits('70.5', 'PKR'), 7050);
  assert.equal(consoleToMinorUnits('7.05', 'IQD'), 7050);
  assert.equal(cashToMinorUnits('500.5', 'PKR'), 50050);
  assert.equal(cashToMinorUnits('1.234', 'IQD'), 1234);
  assert.equal(toMinor('50.5', 'PKR'), 5050);
  assert.equal(toMinor('0.29', 'IQD'), 290);
  // Floats would give 1.005 × 100 = 100.49999… here.
  assert.equal(toMinor('1.005', 'KWD'), 1005);
});
