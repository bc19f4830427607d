import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decimalsOf as minorUnits } from '../../shared/money.js';
import { payoutFileCsv, toMajorUnits } from './payout-file.js';

test('major units carry exactly the ISO 4217 decimals of the currency', () => {
  assert.deepEqual(
    [minorUnits('KES'), minorUnits('UGX'), minorUnits('RWF'), minorUnits('KWD'), minorUnits('IQD')],
    [2, 0, 0, 3, 3],
  );
  assert.equal(toMajorUnits(123_456, 'KES'), '1234.56');
  assert.equal(toMajorUnits(5, 'KES'), '0.05');
  assert.equal(toMajorUnits(50_000, 'UGX'), '50000');
  assert.equal(toMajorUnits(1, 'KWD'), '0.001');
  assert.equal(toMajorUnits(-250, 'NGN'), '-2.50');
  assert.equal(toMajorUnits(Number.MAX_SAFE_INTEGER, 'USD'), '90071992547409.91');
});

test('a major amount read back as minor units is the amount (no floating point on the way)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      fc.constantFrom('KES', 'UGX', 'KWD'),
      (amount, currency) => {
        assert.equal(BigInt(toMajorUnits(amount, currency).replace('.', '')), BigInt(amount));
      },
    ),
  );
});

test('the bulk-upload file: header, CRLF, names neutralised, phones and amounts as they are', () => {
  const csv = payoutFileCsv([
    { name: '@SUM(A1)', phone: '+254712345678', amount: 100, currency: 'KES', reference: 'PO-1-00001' },
    { name: 'Wanjiru, Amina', phone: '+254712345679', amount: 7, currency: 'KES', reference: 'PO-1-00002' },
  ]);
  assert.equal(
    csv,
    'name,phone,amount,currency,reference\r\n\'@SUM(A1),+254712345678,1.00,KES,PO-1-00001\r\n"Wanjiru, Amina",+254712345679,0.07,KES,PO-1-00002\r\n',
  );
});
