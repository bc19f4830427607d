// Sealed quote ids: what goes in comes out, nothing altered or foreign opens, no IV is used twice.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { QUOTE_ID_MAX_LENGTH, QUOTE_ID_PREFIX, QuoteSealer, type SealedQuote } from './quote-token.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes-0123456789';

const quote = (): SealedQuote => ({
  ref: randomUUID(),
  accountId: randomUUID(),
  kind: 'RIDE',
  pickup: { lat: -1.2864123456789, lng: 36.8172987654321 },
  dropoff: { lat: -1.2676, lng: 36.8108 },
  vehicleType: 'VAN',
  countryId: randomUUID(),
  currency: 'KES',
  tariff: { base: 15000, perKm: 6000, perMinute: 600, minimum: 37500, bookingFee: 2000, cancellationFee: 15000, version: 4 },
  routing: 'great-circle×1.3',
  distanceMeters: 2871,
  durationSeconds: 345,
  amount: 41234,
  breakdown: { base: 15000, distance: 17226, time: 3450, surge: 1.2, surgeAmount: 7135, minimumTopUp: 0, bookingFee: 2000 },
  createdAt: Date.parse('2026-11-26T10:00:00Z'),
  expiresAt: Date.parse('2026-11-26T10:10:00Z'),
});

test('a sealed quote opens to what went in, in an id of the documented form', () => {
  const sealer = new QuoteSealer(SECRET);
  const q = quote();
  const id = sealer.seal(q);
  assert.match(id, /^q1_[A-Za-z0-9_-]+$/);
  assert.ok(id.length < QUOTE_ID_MAX_LENGTH, String(id.length));
  assert.deepEqual(sealer.open(id), q);
  // Another instance with the same secret opens it too.
  assert.deepEqual(new QuoteSealer(SECRET).open(id), q);
});

test('nothing altered, truncated, foreign or malformed opens', () => {
  const sealer = new QuoteSealer(SECRET);
  const id = sealer.seal(quote());
  const body = id.slice(QUOTE_ID_PREFIX.length);
  for (let i = 0; i < body.length; i += 7) {
    const flipped = body[i] === 'A' ? 'B' : 'A';
    assert.equal(sealer.open(QUOTE_ID_PREFIX + body.slice(0, i) + flipped + body.slice(i + 1)), undefined, `character ${i}`);
  }
  assert.equal(sealer.open(id.slice(0, -4)), undefined);
  assert.equal(sealer.open(id + 'AAAA'), undefined);
  assert.equal(new QuoteSealer(`${SECRET}!`).open(id), undefined);
  for (const bad of ['', 'q1_', 'q1_AAAA', 'q2_' + body, body, randomUUID(), `q1_${'A'.repeat(QUOTE_ID_MAX_LENGTH)}`]) {
    assert.equal(sealer.open(bad), undefined, bad.slice(0, 20));
  }
});

test('every seal uses a new IV, in one process and across instances', () => {
  const a = new QuoteSealer(SECRET);
  const b = new QuoteSealer(SECRET);
  const q = quote();
  const ivs = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    for (const sealer of [a, b]) {
      const iv = Buffer.from(sealer.seal(q).slice(QUOTE_ID_PREFIX.length), 'base64url').subarray(0, 12).toString('hex');
      assert.ok(!ivs.has(iv), `IV used twice at ${i}`);
      ivs.add(iv);
    }
  }
});
