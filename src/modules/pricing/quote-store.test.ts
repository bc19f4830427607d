// The quote encoding (Redis and memory) and the memory store's bounds, without a database: a fake
// repository stands for the `quotes` table (a used quote's row).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ManualClock } from '../../shared/clock.js';
import type { StoredQuote } from './price.js';
import { decodeQuote, encodeQuote, MemoryQuoteStore } from './quote-store.js';
import type { QuotesRepository } from './quotes.repository.js';

const TTL = 600_000;

const quote = (createdAt: number): StoredQuote => ({
  id: randomUUID(),
  accountId: randomUUID(),
  kind: 'RIDE',
  pickup: { lat: -1.2864123456789, lng: 36.8172987654321 },
  dropoff: { lat: -1.2676, lng: 36.8108 },
  vehicleType: 'VAN',
  countryId: randomUUID(),
  currency: 'KES',
  tariff: {
    base: 15000,
    perKm: 6000,
    perMinute: 600,
    minimum: 37500,
    bookingFee: 2000,
    cancellationFee: 15000,
    version: 4,
  },
  routing: 'great-circle×1.3',
  distanceMeters: 2871,
  durationSeconds: 345,
  amount: 41234,
  breakdown: {
    base: 15000,
    distance: 17226,
    time: 3450,
    surge: 1.2,
    surgeAmount: 7135,
    minimumTopUp: 0,
    bookingFee: 2000,
  },
  createdAt,
  expiresAt: createdAt + TTL,
});

const usedRows = (rows: StoredQuote[] = []) =>
  ({ getById: async (id: string) => rows.find((r) => r.id === id) }) as unknown as QuotesRepository;

test('a quote encoded for Redis or memory decodes to what went in', () => {
  const q = quote(Date.parse('2026-11-26T10:00:00Z'));
  const raw = encodeQuote(q);
  assert.ok(!raw.includes(q.id), 'the id is the key, not in the value');
  assert.ok(raw.length < 400, String(raw.length));
  assert.deepEqual(decodeQuote(q.id, raw), q);
});

test('memory: kept QUOTE_TTL beyond the expiry, then forgotten; a used quote is found by its row', async () => {
  const clock = new ManualClock(Date.parse('2026-11-26T10:00:00Z'));
  const used = quote(clock.nowMs());
  const store = new MemoryQuoteStore(clock, TTL, usedRows([used]));
  const q = quote(clock.nowMs());
  await store.put(q);
  clock.advance(2 * TTL);
  await store.put(quote(clock.nowMs()));
  assert.deepEqual(await store.get(q.id), q, 'expired QUOTE_TTL ago: still kept');
  clock.advance(1);
  await store.put(quote(clock.nowMs()));
  assert.equal(await store.get(q.id), undefined);
  assert.deepEqual(await store.get(used.id), used);
});

test('memory: beyond its bound the oldest quotes are forgotten first', async () => {
  const clock = new ManualClock(0);
  const store = new MemoryQuoteStore(clock, TTL, usedRows(), 3);
  const quotes = [quote(0), quote(1), quote(2), quote(3), quote(4)];
  for (const q of quotes) await store.put(q);
  const kept = await Promise.all(quotes.map((q) => store.get(q.id)));
  assert.deepEqual(
    kept.map((k) => k?.id),
    [undefined, undefined, quotes[2]!.id, quotes[3]!.id, quotes[4]!.id],
  );
});
