import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import {
  buildHeaders,
  eventHeaderName,
  generateSecret,
  signHex,
  signStandard,
  standardKey,
  verifyHex,
  verifyStandard,
} from './webhook-signature.js';

// The published Standard Webhooks test vector (reference libraries' tests and the svix docs).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

test('webhook-signature reproduces the Standard Webhooks test vector', () => {
  assert.equal(signStandard(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
  assert.equal(signStandard(VECTOR.secret, VECTOR.id, VECTOR.timestamp, Buffer.from(VECTOR.body)), VECTOR.signature);
  // Without the prefix the key is the same.
  assert.equal(signStandard(VECTOR.secret.slice(6), VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
});

test('the Standard Webhooks key is the base64-decoded part after whsec_', () => {
  assert.deepEqual(standardKey('whsec_AAEC'), Buffer.from([0, 1, 2]));
});

test('X-Service-Signature is hex HMAC-SHA256 keyed with the UTF-8 bytes of the whole secret string', () => {
  const expected = createHmac('sha256', Buffer.from(VECTOR.secret, 'utf8')).update(VECTOR.body).digest('hex');
  assert.equal(signHex(VECTOR.secret, VECTOR.body), expected);
  assert.match(signHex(VECTOR.secret, VECTOR.body), /^[0-9a-f]{64}$/);
  // Known value, computed independently (openssl dgst -sha256 -hmac "$secret").
  assert.equal(signHex('whsec_test', '{}'), '46bdc2a2e83964bd2695acc6a1f97162d8bafc135a071aa5cd5c99aae5481440');
  assert.notEqual(signHex(VECTOR.secret, VECTOR.body), signHex(VECTOR.secret, `${VECTOR.body} `));
  assert.notEqual(signHex(VECTOR.secret, VECTOR.body), signHex(`${VECTOR.secret}x`, VECTOR.body));
});

test('verifyHex accepts the right signature (any case) and refuses a wrong, short or missing one', () => {
  const sig = signHex(VECTOR.secret, VECTOR.body);
  assert.equal(verifyHex(VECTOR.secret, VECTOR.body, sig), true);
  assert.equal(verifyHex(VECTOR.secret, VECTOR.body, sig.toUpperCase()), true);
  assert.equal(
    verifyHex(VECTOR.secret, VECTOR.body, `${sig.slice(0, -1)}0`.replace(/0$/, sig.endsWith('0') ? '1' : '0')),
    false,
  );
  assert.equal(verifyHex(VECTOR.secret, VECTOR.body, sig.slice(0, 10)), false);
  assert.equal(verifyHex(VECTOR.secret, VECTOR.body, ''), false);
  assert.equal(verifyHex(VECTOR.secret, VECTOR.body, undefined), false);
  assert.equal(verifyHex(VECTOR.secret, `${VECTOR.body}x`, sig), false);
});

test('verifyStandard checks signature, id, timestamp and tolerance, and accepts one of several signatures', () => {
  const headers = { id: VECTOR.id, timestamp: String(VECTOR.timestamp), signature: VECTOR.signature };
  assert.equal(verifyStandard(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp), true);
  assert.equal(
    verifyStandard(
      VECTOR.secret,
      { ...headers, signature: `v1,bm9wZQ== ${VECTOR.signature}` },
      VECTOR.body,
      VECTOR.timestamp,
    ),
    true,
  );
  assert.equal(
    verifyStandard(
      VECTOR.secret,
      { ...headers, signature: VECTOR.signature.replace('v1,', 'v2,') },
      VECTOR.body,
      VECTOR.timestamp,
    ),
    false,
  );
  assert.equal(verifyStandard(VECTOR.secret, { ...headers, id: 'msg_other' }, VECTOR.body, VECTOR.timestamp), false);
  assert.equal(verifyStandard(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp + 301), false);
  assert.equal(verifyStandard(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp - 301), false);
  assert.equal(verifyStandard(VECTOR.secret, { ...headers, timestamp: 'abc' }, VECTOR.body, VECTOR.timestamp), false);
  assert.equal(
    verifyStandard(VECTOR.secret, { ...headers, signature: undefined }, VECTOR.body, VECTOR.timestamp),
    false,
  );
  assert.equal(verifyStandard(generateSecret(), headers, VECTOR.body, VECTOR.timestamp), false);
});

test('generateSecret is whsec_ + base64 of 32 random bytes', () => {
  const secret = generateSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(standardKey(secret).length, 32);
  assert.notEqual(generateSecret(), secret);
  assert.equal(
    generateSecret(() => Buffer.alloc(32, 1)),
    `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
  );
});

test('the event header name follows the configured signature header', () => {
  assert.equal(eventHeaderName('X-Service-Signature'), 'X-Service-Event');
  assert.equal(eventHeaderName('X-Acme-Signature'), 'X-Acme-Event');
  assert.equal(eventHeaderName('X-Acme-Sig'), 'X-Acme-Sig-Event');
});

test('buildHeaders carries both schemes, the event and the stable id', () => {
  const headers = buildHeaders({
    secret: VECTOR.secret,
    signatureHeader: 'X-Service-Signature',
    event: 'delivery.assigned',
    webhookId: VECTOR.id,
    timestampSeconds: VECTOR.timestamp,
    body: VECTOR.body,
  });
  assert.deepEqual(headers, {
    'content-type': 'application/json',
    'x-service-signature': signHex(VECTOR.secret, VECTOR.body),
    'x-service-event': 'delivery.assigned',
    'webhook-id': VECTOR.id,
    'webhook-timestamp': String(VECTOR.timestamp),
    'webhook-signature': VECTOR.signature,
  });
});
