// A quote id is the quote itself, sealed: its price, the inputs the price came from, the account it
// was made for and its expiry, encrypted and authenticated with AES-256-GCM under a key derived from
// JWT_SECRET (HKDF-SHA256). Any instance that shares JWT_SECRET opens it without reading a table, so a
// quote is answered without waiting for a database write and is usable at once from any instance;
// nobody can read, forge or alter one (a changed byte fails authentication). Nothing is stored when a
// quote is given; the quotes table gets its row when a job uses it (the mark that makes it single-use).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { VehicleType } from '../../db/schema.js';
import type { QuoteKind } from '../../db/tables/pricing.js';
import type { PriceInputs } from './pricing.service.js';
import type { Breakdown } from './tariff.js';

/** Every quote id starts with this (the format's version): anything else is not a quote. */
export const QUOTE_ID_PREFIX = 'q1_';
/** An id is about 400–600 characters (430 and 441 seen; coordinates with many decimals make it longer); the schema allows up to this. */
export const QUOTE_ID_MAX_LENGTH = 1024;

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * What a quote id carries: the inputs its price came from (the surge is the breakdown's), the price,
 * the account, and when. `ref` is the quote's uuid: its row in `quotes` and the jobs' `quote_id`.
 */
export interface SealedQuote extends Omit<PriceInputs, 'surge' | 'pricedAt'> {
  ref: string;
  accountId: string;
  amount: number;
  breakdown: Breakdown;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
}

// The payload is a JSON array in this order (half the size of an object with its keys).
type Payload = [
  ref: string,
  accountId: string,
  kind: QuoteKind,
  pickupLat: number,
  pickupLng: number,
  dropoffLat: number,
  dropoffLng: number,
  vehicleType: VehicleType,
  countryId: string,
  currency: string,
  tariff: [base: number, perKm: number, perMinute: number, minimum: number, bookingFee: number, cancellationFee: number, version: number],
  routing: string,
  distanceMeters: number,
  durationSeconds: number,
  amount: number,
  breakdown: [base: number, distance: number, time: number, surge: number, surgeAmount: number, minimumTopUp: number, bookingFee: number],
  createdAt: number,
  expiresAt: number,
];

export class QuoteSealer {
  private readonly key: Buffer;
  /**
   * GCM needs an IV never used twice under one key. Each IV is this process's random 96-bit base with
   * a counter XORed into its last 8 bytes: unique within a process, and across the processes that
   * share the key as long as their random bases keep them apart (two processes collide with a chance
   * of about their quote count over 2^96). Not the fixed-field construction of NIST SP 800-38D 8.2.1,
   * whose fixed field would have to be assigned per instance. A random IV per quote cost a getrandom
   * call each, 5 % of a quote's CPU (B10 profile). What it shows: ids from one process share their
   * first 4 bytes, so a collector of ids could count processes and quotes; nothing about a quote.
   */
  private readonly ivBase = randomBytes(IV_BYTES);
  private counter = 0;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'quote-id', 'AES-256-GCM quote id v1', 32));
  }

  seal(quote: SealedQuote): string {
    const { tariff: t, breakdown: b } = quote;
    const payload: Payload = [
      quote.ref,
      quote.accountId,
      quote.kind,
      quote.pickup.lat,
      quote.pickup.lng,
      quote.dropoff.lat,
      quote.dropoff.lng,
      quote.vehicleType,
      quote.countryId,
      quote.currency,
      [t.base, t.perKm, t.perMinute, t.minimum, t.bookingFee, t.cancellationFee, t.version],
      quote.routing,
      quote.distanceMeters,
      quote.durationSeconds,
      quote.amount,
      [b.base, b.distance, b.time, b.surge, b.surgeAmount, b.minimumTopUp, b.bookingFee],
      quote.createdAt,
      quote.expiresAt,
    ];
    const iv = this.nextIv();
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
    return QUOTE_ID_PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  private nextIv(): Buffer {
    const n = this.counter++;
    const iv = Buffer.from(this.ivBase);
    iv.writeUInt32BE((this.ivBase.readUInt32BE(4) ^ Math.floor(n / 0x1_0000_0000)) >>> 0, 4);
    iv.writeUInt32BE((this.ivBase.readUInt32BE(8) ^ n % 0x1_0000_0000) >>> 0, 8);
    return iv;
  }

  /** The quote inside `id`, or undefined when it is not one of ours (garbled, altered, or sealed under another secret). */
  open(id: string): SealedQuote | undefined {
    if (!id.startsWith(QUOTE_ID_PREFIX) || id.length > QUOTE_ID_MAX_LENGTH) return undefined;
    const raw = Buffer.from(id.slice(QUOTE_ID_PREFIX.length), 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
    let text: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
    const p = JSON.parse(text) as Payload;
    const [base, perKm, perMinute, minimum, bookingFee, cancellationFee, version] = p[10];
    const [bBase, distance, time, surge, surgeAmount, minimumTopUp, bBookingFee] = p[15];
    return {
      ref: p[0],
      accountId: p[1],
      kind: p[2],
      pickup: { lat: p[3], lng: p[4] },
      dropoff: { lat: p[5], lng: p[6] },
      vehicleType: p[7],
      countryId: p[8],
      currency: p[9],
      tariff: { base, perKm, perMinute, minimum, bookingFee, cancellationFee, version },
      routing: p[11],
      distanceMeters: p[12],
      durationSeconds: p[13],
      amount: p[14],
      breakdown: { base: bBase, distance, time, surge, surgeAmount, minimumTopUp, bookingFee: bBookingFee },
      createdAt: p[16],
      expiresAt: p[17],
    };
  }
}
