// Where a quote is kept until it expires (contract section 18), so that the instance a job is created
// on finds it whichever instance gave it: Redis when configured and reachable, else PostgreSQL; memory
// only on the embedded database (one process by construction: DATA_DIR is locked). Every store keeps a
// quote at least QUOTE_TTL beyond its expiry, so that a late use is told 409 QUOTE_EXPIRED rather than
// 404 QUOTE_NOT_FOUND. A used quote also has its row in `quotes` for good (the used mark).
import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Database } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import type { Clock } from '../../shared/clock.js';
import type { RedisHealth } from '../../shared/redis.js';
import type { StoredQuote } from './price.js';
import type { QuotesRepository } from './quotes.repository.js';

type Db = Kysely<Database>;

export interface QuoteStore {
  readonly kind: 'redis' | 'database' | 'memory';
  /** Keeps the quote; resolves once any instance can find it. */
  put(quote: StoredQuote): Promise<void>;
  /** The quote kept under `id`, or undefined. `db`: the job's transaction, for what is read from PostgreSQL. */
  get(id: string, db?: Db): Promise<StoredQuote | undefined>;
}

export function createQuoteStore(
  deps: Pick<Deps, 'config' | 'database' | 'redis' | 'redisHealth' | 'clock'>,
  repo: QuotesRepository,
): QuoteStore {
  const keepMs = deps.config.pricing.quoteTtlMs;
  const database = new DatabaseQuoteStore(repo);
  if (deps.redis)
    return new RedisQuoteStore({
      redis: deps.redis,
      health: deps.redisHealth,
      keyPrefix: deps.config.redis.keyPrefix,
      clock: deps.clock,
      keepMs,
      fallback: database,
    });
  if (deps.database.kind === 'pglite') return new MemoryQuoteStore(deps.clock, keepMs, repo);
  return database;
}

/** Rows per INSERT. */
const MAX_ROWS = 1000;

interface Waiting {
  quote: StoredQuote;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Quotes in the `quotes` table. The quotes given during one turn of the event loop go in one INSERT
 * (up to MAX_ROWS; several may be in flight), and each waits for its statement's commit: a quote
 * answered is one any instance finds. At thousands of quotes a second this is a few statements a
 * second instead of one per quote.
 */
export class DatabaseQuoteStore implements QuoteStore {
  readonly kind = 'database';
  private queue: Waiting[] = [];

  constructor(private readonly repo: QuotesRepository) {}

  put(quote: StoredQuote): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.queue.push({ quote, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  get(id: string, db?: Db): Promise<StoredQuote | undefined> {
    return this.repo.getById(id, db);
  }

  private flush(): void {
    const waiting = this.queue;
    this.queue = [];
    for (let i = 0; i < waiting.length; i += MAX_ROWS) void this.write(waiting.slice(i, i + MAX_ROWS));
  }

  private async write(group: Waiting[]): Promise<void> {
    try {
      await this.repo.insertMany(group.map((w) => w.quote));
      for (const w of group) w.resolve();
      return;
    } catch (err) {
      // Class 23: the database refused a row (an account deleted meanwhile): only that quote fails.
      // Anything else (the connection) fails them all.
      if (group.length === 1 || !String((err as { code?: unknown }).code ?? '').startsWith('23')) {
        for (const w of group) w.reject(err);
        return;
      }
    }
    await Promise.all(group.map((w) => this.repo.insertMany([w.quote]).then(w.resolve, w.reject)));
  }
}

/**
 * Quotes in Redis (`<prefix>quote:<id>`, SET … PX), and in PostgreSQL (the fallback) while Redis is
 * away or refuses a write. A lookup asks Redis, then PostgreSQL: a quote written there during an
 * outage, by any instance, is found after it too.
 */
export class RedisQuoteStore implements QuoteStore {
  readonly kind = 'redis';
  private pending: { quote: StoredQuote; resolve: () => void; reject: (err: unknown) => void }[] = [];

  constructor(
    private readonly o: {
      redis: Redis;
      health: RedisHealth | undefined;
      keyPrefix: string;
      clock: Clock;
      keepMs: number;
      fallback: DatabaseQuoteStore;
    },
  ) {}

  private key(id: string): string {
    return `${this.o.keyPrefix}quote:${id}`;
  }

  async put(quote: StoredQuote): Promise<void> {
    const { health } = this.o;
    if (health?.up !== false) {
      try {
        await new Promise<void>((resolve, reject) => {
          if (this.pending.push({ quote, resolve, reject }) === 1) setImmediate(() => this.flush());
        });
        return;
      } catch (err) {
        health?.failure('quotes', err);
      }
    }
    await this.o.fallback.put(quote);
  }

  /**
   * The SETs of one event-loop turn in one pipeline: one socket write for all of them. A write per
   * SET was 18 % of the server's busy CPU at 5,000 quotes/s (B10 profile). On a cluster each goes
   * alone (a pipeline must keep to one node), each still bounded by the command timeout.
   */
  private flush(): void {
    const { redis, clock, keepMs } = this.o;
    const batch = this.pending;
    this.pending = [];
    const px = (q: StoredQuote) => Math.max(1, q.expiresAt + keepMs - clock.nowMs());
    if (batch.length === 1 || redis.isCluster) {
      for (const w of batch)
        redis.set(this.key(w.quote.id), encodeQuote(w.quote), 'PX', px(w.quote)).then(() => w.resolve(), w.reject);
      return;
    }
    const pipeline = redis.pipeline();
    for (const { quote } of batch) pipeline.set(this.key(quote.id), encodeQuote(quote), 'PX', px(quote));
    pipeline.exec().then(
      (results) =>
        batch.forEach((w, i) => {
          const err = results ? results[i]?.[0] : new Error('no reply to the pipeline');
          if (err) w.reject(err);
          else w.resolve();
        }),
      (err: unknown) => batch.forEach((w) => w.reject(err)),
    );
  }

  async get(id: string, db?: Db): Promise<StoredQuote | undefined> {
    const { redis, health } = this.o;
    if (health?.up !== false) {
      try {
        const raw = await redis.get(this.key(id));
        if (raw) return decodeQuote(id, raw);
      } catch (err) {
        health?.failure('quotes', err);
      }
    }
    return this.o.fallback.get(id, db);
  }
}

/** Beyond this many quotes the oldest are forgotten (about 300 bytes each: the memory stays bounded). */
export const MEMORY_MAX_QUOTES = 200_000;

/**
 * Quotes in this process's memory (the embedded database: one process), encoded as for Redis, in the
 * order given, which is the order they expire in (one QUOTE_TTL for all).
 */
export class MemoryQuoteStore implements QuoteStore {
  readonly kind = 'memory';
  private readonly quotes = new Map<string, { expiresAt: number; raw: string }>();

  constructor(
    private readonly clock: Clock,
    private readonly keepMs: number,
    /** For the used mark: a used quote is found by its row once it has left memory. */
    private readonly repo: QuotesRepository,
    private readonly maxQuotes = MEMORY_MAX_QUOTES,
  ) {}

  async put(quote: StoredQuote): Promise<void> {
    const before = this.clock.nowMs() - this.keepMs;
    for (const [id, kept] of this.quotes) {
      if (kept.expiresAt >= before && this.quotes.size < this.maxQuotes) break;
      this.quotes.delete(id);
    }
    this.quotes.set(quote.id, { expiresAt: quote.expiresAt, raw: encodeQuote(quote) });
  }

  async get(id: string, db?: Db): Promise<StoredQuote | undefined> {
    const kept = this.quotes.get(id);
    return kept ? decodeQuote(id, kept.raw) : this.repo.getById(id, db);
  }
}

// A quote as a JSON array in this order (half the size of an object with its keys); the id is the key.
type Encoded = [
  accountId: string,
  kind: StoredQuote['kind'],
  pickupLat: number,
  pickupLng: number,
  dropoffLat: number,
  dropoffLng: number,
  vehicleType: StoredQuote['vehicleType'],
  countryId: string,
  currency: string,
  tariff: [
    base: number,
    perKm: number,
    perMinute: number,
    minimum: number,
    bookingFee: number,
    cancellationFee: number,
    version: number,
  ],
  routing: string,
  distanceMeters: number,
  durationSeconds: number,
  amount: number,
  breakdown: [
    base: number,
    distance: number,
    time: number,
    surge: number,
    surgeAmount: number,
    minimumTopUp: number,
    bookingFee: number,
  ],
  createdAt: number,
  expiresAt: number,
];

export function encodeQuote(q: StoredQuote): string {
  const { tariff: t, breakdown: b } = q;
  const encoded: Encoded = [
    q.accountId,
    q.kind,
    q.pickup.lat,
    q.pickup.lng,
    q.dropoff.lat,
    q.dropoff.lng,
    q.vehicleType,
    q.countryId,
    q.currency,
    [t.base, t.perKm, t.perMinute, t.minimum, t.bookingFee, t.cancellationFee, t.version],
    q.routing,
    q.distanceMeters,
    q.durationSeconds,
    q.amount,
    [b.base, b.distance, b.time, b.surge, b.surgeAmount, b.minimumTopUp, b.bookingFee],
    q.createdAt,
    q.expiresAt,
  ];
  return JSON.stringify(encoded);
}

export function decodeQuote(id: string, raw: string): StoredQuote {
  const e = JSON.parse(raw) as Encoded;
  const [base, perKm, perMinute, minimum, bookingFee, cancellationFee, version] = e[9];
  const [bBase, distance, time, surge, surgeAmount, minimumTopUp, bBookingFee] = e[14];
  return {
    id,
    accountId: e[0],
    kind: e[1],
    pickup: { lat: e[2], lng: e[3] },
    dropoff: { lat: e[4], lng: e[5] },
    vehicleType: e[6],
    countryId: e[7],
    currency: e[8],
    tariff: { base, perKm, perMinute, minimum, bookingFee, cancellationFee, version },
    routing: e[10],
    distanceMeters: e[11],
    durationSeconds: e[12],
    amount: e[13],
    breakdown: { base: bBase, distance, time, surge, surgeAmount, minimumTopUp, bookingFee: bBookingFee },
    createdAt: e[15],
    expiresAt: e[16],
  };
}
