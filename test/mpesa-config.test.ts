// M-Pesa's configuration (contract section 26): off without MPESA_CONSUMER_KEY; with it, the
// required set is checked at start and every missing variable named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

const ON = {
  MPESA_CONSUMER_KEY: 'k',
  MPESA_CONSUMER_SECRET: 's',
  MPESA_SHORTCODE: '174379',
  MPESA_PASSKEY: 'p',
  MPESA_INITIATOR_NAME: 'testapi',
  MPESA_SECURITY_CREDENTIAL: 'c',
  MPESA_CALLBACK_BASE_URL: 'http://127.0.0.1:3000/',
};

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
};

test('M-Pesa is off without MPESA_CONSUMER_KEY, even with its other variables set', () => {
  assert.equal(loadConfig({}).mpesa, undefined);
  assert.equal(loadConfig({ MPESA_SHORTCODE: '174379' }).mpesa, undefined);
});

test('with MPESA_CONSUMER_KEY the required set is named in one error; the defaults are section 26s', () => {
  assert.deepEqual(problems({ MPESA_CONSUMER_KEY: 'k' }), [
    'MPESA_CONSUMER_SECRET, MPESA_SHORTCODE, MPESA_PASSKEY, MPESA_INITIATOR_NAME, MPESA_SECURITY_CREDENTIAL, MPESA_CALLBACK_BASE_URL required when MPESA_CONSUMER_KEY is set (contract section 26)',
  ]);
  const mpesa = loadConfig(ON).mpesa!;
  assert.equal(mpesa.b2cShortcode, '174379');
  assert.equal(mpesa.baseUrl, 'https://sandbox.safaricom.co.ke');
  assert.equal(mpesa.callbackBaseUrl, 'http://127.0.0.1:3000');
  assert.deepEqual([mpesa.stkMin, mpesa.stkMax, mpesa.b2cMin, mpesa.b2cMax], [1, 250_000, 10, 250_000]);
  assert.equal(mpesa.paymentTimeoutMs, 600_000);
  assert.deepEqual(problems({ ...ON, MPESA_B2C_MIN_AMOUNT: '500', MPESA_B2C_MAX_AMOUNT: '100' }), [
    'MPESA_B2C_MIN_AMOUNT must not be above MPESA_B2C_MAX_AMOUNT',
  ]);
  assert.deepEqual(problems({ ...ON, MPESA_SHORTCODE: 'abc' }), ['MPESA_SHORTCODE must be 5 to 7 digits (got "abc")']);
});

test('in production the callback base URL must be https', () => {
  const found = problems({ ...ON, NODE_ENV: 'production' });
  assert.ok(
    found.some((p) => p.startsWith('MPESA_CALLBACK_BASE_URL')),
    found.join('\n'),
  );
  assert.ok(
    !problems({ ...ON, NODE_ENV: 'production', MPESA_CALLBACK_BASE_URL: 'https://api.example.co.ke' }).some((p) =>
      p.startsWith('MPESA'),
    ),
  );
});
