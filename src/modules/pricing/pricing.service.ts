// Prices (contract section 18): quotes, the price locked by a quote or computed at creation, the
// final ride fare and the cancellation fee, and tariff administration. One service per app
// (`pricingService(deps)`), so the packages and rides modules price with the same surge state.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Counter } from 'prom-client';
import type { Database, VehicleType } from '../../db/schema.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import { distanceMeters } from '../matching/driver-index.js';
import type { LiveDrivers } from '../matching/live-drivers.js';
import { mayBeIn, surelyDifferentCountries } from './country-bounds.js';
import type { OpenJobsRepository } from './open-jobs.repository.js';
import { quoteInputs, type JobPrice, type PriceRequest, type StoredQuote } from './price.js';
import type { QuoteStore } from './quote-store.js';
import type { TariffsRepository } from './tariffs.repository.js';
import type { QuotesRepository } from './quotes.repository.js';
import { StraightRouter, type Router } from '../routing/router.js';
import { pathDistanceMeters, type Point } from './routing.js';
import { Surge } from './surge.js';
import {
  quoteMismatch,
  tariffValues,
  toTariffResult,
  type CountryInfo,
  type LockQuoteInput,
  type QuoteResult,
  type TariffResult,
} from './pricing-shapes.js';
import type { QuoteTiming } from './quote-timing.js';
import { validateScheduledAt, validateWindows, type WindowsInput } from '../scheduling/windows.js';
import {
  cancellationFeeAmount,
  finalFare,
  priceTrip,
  tenthsFromSurge,
  type CancelledBy,
  type TariffValues,
} from './tariff.js';

export const VEHICLE_TYPES: readonly VehicleType[] = ['BIKE', 'CAR', 'VAN', 'TRUCK'];

/** Pickup ETA: the nearest eligible driver within this distance, else null. */
export const PICKUP_ETA_RADIUS_METERS = 10_000;
/** Unused quote rows deleted per statement by the purge. */
const QUOTE_PURGE_BATCH = 10_000;
const COUNTRY_CACHE_MS = 60_000;
/** A tariff's commission rate when none was set (section 21: 20 %). */
const DEFAULT_COMMISSION_RATE = 2000;
/** A return costs the whole way back unless the tariff says otherwise (contract section 23). */
const DEFAULT_RETURN_RATE = 10_000;
/** Other instances learn of a tariff change through the bus; this bounds it should a message be lost. */
const TARIFF_CACHE_MS = 10_000;

export type { JobPrice, PriceInputs, PriceRequest } from './price.js';
export type { LockQuoteInput, QuoteResult, TariffResult } from './pricing-shapes.js';
export { QUOTE_POINT_TOLERANCE_METERS } from './pricing-shapes.js';

type Db = Kysely<Database>;

/** What pricing needs (built in src/services.ts). */
export interface PricingDeps {
  db: Db;
  quotes: QuotesRepository;
  tariffs: TariffsRepository;
  /** Surge's demand: the jobs waiting for a driver. */
  openJobs: OpenJobsRepository;
  /** Where quotes are kept until they expire (createQuoteStore). */
  quoteStore: QuoteStore;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  /** Shares the surge between instances when set. */
  redis: Redis | undefined;
  config: Pick<Config, 'pricing' | 'drivers' | 'redis'> & Partial<Pick<Config, 'scheduling'>>;
  /** A quote's pickupEta, dropoffEta and availability (section 22); absent: not answered. */
  timing?: QuoteTiming;
}

/** What a quote says about time (section 22): the same fields as the job it prices. */
export interface QuoteTime extends WindowsInput {
  scheduledAt?: string;
}

export class PricingService {
  readonly surge: Surge;
  private readonly db: Db;
  private readonly tariffsRepo: TariffsRepository;
  private readonly quotes: QuotesRepository;
  /** Where quotes are kept until they expire (Redis, PostgreSQL or memory: quote-store.ts). */
  readonly quoteStore: QuoteStore;
  private readonly quotesGiven: Counter<'kind' | 'vehicle_type'>;
  private readonly countries = new Map<string, { info: CountryInfo; until: number }>();
  private readonly tariffs = new Map<
    string,
    { values: TariffValues & { version: number }; commissionRate: number; returnRate: number; until: number }
  >();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly deps: PricingDeps,
    private readonly live: LiveDrivers,
    private readonly router: Router = new StraightRouter(),
  ) {
    this.db = deps.db;
    this.quotes = deps.quotes;
    this.tariffsRepo = deps.tariffs;
    this.quoteStore = deps.quoteStore;
    this.quotesGiven = new Counter({
      name: 'quotes_total',
      help: 'Quotes given (POST /quotes), by kind and vehicle type: with the jobs created from quotes, the conversion',
      labelNames: ['kind', 'vehicle_type'],
      registers: [deps.registry],
    });
    const index = live.index;
    const { pricing, drivers } = deps.config;
    this.surge = new Surge({
      cellMeters: pricing.surgeCellMeters,
      intervalMs: pricing.surgeIntervalMs,
      maxTenths: pricing.surgeMaxTenths,
      accountCap: pricing.surgeAccountCap,
      clock: deps.clock,
      logger: deps.logger,
      openJobs: (createdBefore) => deps.openJobs.waiting(createdBefore),
      countIdle: (type, south, west, north, east) =>
        index.countIdle(type, south, west, north, east, deps.clock.nowMs() - drivers.locationTtlMs),
      redis: deps.redis,
      redisKeyPrefix: deps.config.redis.keyPrefix,
      onShared: () => deps.bus.publishToOthers('pricing.changed', { what: 'surge' }),
    });
  }

  async start(): Promise<void> {
    this.unsubscribe = this.deps.bus.subscribe('pricing.changed', ({ what }) => {
      if (what === 'tariff') this.tariffs.clear();
      else void this.surge.refresh();
    });
    await this.surge.start();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.surge.stop();
  }

  /** POST /quotes: prices the trip and keeps the quote (quote-store.ts) under a new UUID, valid for QUOTE_TTL. */
  async quote(accountId: string, request: PriceRequest, time: QuoteTime = {}): Promise<QuoteResult> {
    const rules = this.deps.config.scheduling;
    const nowMs = this.deps.clock.nowMs();
    const windows = rules ? validateWindows(time, nowMs, rules) : null;
    const scheduledAt = rules ? validateScheduledAt(time.scheduledAt, nowMs, rules) : null;
    const price = await this.price(request, null);
    const now = this.deps.clock.nowMs();
    // The surge is the breakdown's, and the time is createdAt: the rest of the inputs go in as they are.
    const { surge: _surge, pricedAt: _pricedAt, ...inputs } = price.inputs;
    const quote: StoredQuote = {
      ...inputs,
      id: randomUUID(),
      accountId,
      amount: price.amount,
      breakdown: price.breakdown,
      createdAt: now,
      expiresAt: now + this.deps.config.pricing.quoteTtlMs,
    };
    await this.quoteStore.put(quote);
    this.quotesGiven.inc({ kind: request.kind, vehicle_type: request.vehicleType });
    const pickupEtaSeconds = await this.pickupEtaSeconds(request);
    return {
      id: quote.id,
      amount: price.amount,
      currency: price.currency,
      breakdown: price.breakdown,
      distanceMeters: quote.distanceMeters,
      durationSeconds: quote.durationSeconds,
      pickupEtaSeconds,
      expiresAt: new Date(quote.expiresAt).toISOString(),
      ...(this.deps.timing && windows
        ? await this.deps.timing.answer({
            vehicleType: request.vehicleType,
            pickup: request.pickup,
            windows,
            scheduledAt,
            pickupEtaSeconds,
            durationSeconds: quote.durationSeconds,
          })
        : {}),
    };
  }

  /**
   * The price of a job created with `quoteId`: the quote's, if it is the caller's, for the same kind,
   * points (within 25 m), vehicle type and country, unexpired and unused. Marks it used in its row of
   * `quotes` (written if it has none): pass the job's transaction as `db`, so a job that is not
   * created leaves the quote usable.
   * Errors: 404 QUOTE_NOT_FOUND (no quote kept under this id: never given, or forgotten at least
   * QUOTE_TTL after it expired), 400 QUOTE_MISMATCH, 409 QUOTE_EXPIRED, 409 QUOTE_ALREADY_USED.
   */
  async lockQuote(input: LockQuoteInput, db: Db = this.db): Promise<JobPrice> {
    // Ids are given in lower case; a UUID in upper case is the same one (Redis keys are case-sensitive).
    const quote = await this.quoteStore.get(input.quoteId.toLowerCase(), db);
    if (!quote) throw notFound('Quote not found', 'QUOTE_NOT_FOUND');
    const mismatch = quoteMismatch(quote, input);
    if (mismatch) throw badRequest(`The quote is for ${mismatch}`, 'QUOTE_MISMATCH');
    const now = this.deps.clock.now();
    if (quote.expiresAt <= now.getTime()) throw conflict('The quote has expired: ask for a new one', 'QUOTE_EXPIRED');
    if (!(await this.quotes.markUsed(db, quote, now)))
      throw conflict('The quote has already been used', 'QUOTE_ALREADY_USED');
    return {
      amount: quote.amount,
      currency: quote.currency,
      breakdown: quote.breakdown,
      tariffVersion: quote.tariff.version,
      surge: quote.breakdown.surge,
      quoteId: quote.id,
      inputs: quoteInputs(quote),
    };
  }

  /**
   * The price of a job created without a quote: computed now, as a quote would be (same errors). Pass
   * the job's transaction as `db` (the embedded database has one connection: a read beside an open
   * transaction would wait for it).
   */
  async priceWithoutQuote(request: PriceRequest, db: Db = this.db): Promise<JobPrice> {
    const price = await this.price(request, null, db);
    price.inputs.pricedAt = this.deps.clock.now().toISOString();
    return price;
  }

  /**
   * A completed ride's fare from its price's inputs (the same tariff and surge) over the actual trip:
   * either its distance and time, or the positions the driver reported between start and completion
   * (great-circle between consecutive positions, and the time from the first to the last). Never more
   * than 1.25 × the price.
   */
  finalRideFare(
    price: Pick<JobPrice, 'amount' | 'currency' | 'inputs'>,
    actual:
      | { distanceMeters: number; durationSeconds: number }
      | { positions: readonly (Point & { at: Date | string | number })[] },
  ) {
    let trip: { distanceMeters: number; durationSeconds: number };
    if ('positions' in actual) {
      const { positions } = actual;
      const ms =
        positions.length > 1
          ? new Date(positions[positions.length - 1].at).getTime() - new Date(positions[0].at).getTime()
          : 0;
      trip = { distanceMeters: pathDistanceMeters(positions), durationSeconds: Math.max(0, Math.round(ms / 1000)) };
    } else
      trip = {
        distanceMeters: Math.max(0, Math.round(actual.distanceMeters)),
        durationSeconds: Math.max(0, Math.round(actual.durationSeconds)),
      };
    const fare = finalFare(
      price.inputs.tariff,
      { amount: price.amount, surgeTenths: tenthsFromSurge(price.inputs.surge) },
      trip,
    );
    return {
      ...fare,
      currency: price.currency,
      distanceMeters: trip.distanceMeters,
      durationSeconds: trip.durationSeconds,
    };
  }

  /**
   * The fee when a job is cancelled: the tariff's cancellation fee (as it was when the job was priced)
   * when its creator cancels after assignment; null when a driver releases it, an admin cancels it,
   * or no driver was assigned.
   */
  cancellationFee(
    price: Pick<JobPrice, 'currency' | 'inputs'>,
    cancellation: { cancelledBy: CancelledBy; afterAssignment: boolean },
  ) {
    const amount = cancellationFeeAmount(price.inputs.tariff, cancellation);
    return amount === null ? null : { amount, currency: price.currency };
  }

  private async price(request: PriceRequest, quoteId: string | null, db: Db = this.db): Promise<JobPrice> {
    if (!VEHICLE_TYPES.includes(request.vehicleType)) throw badRequest('Unknown vehicle type', 'VALIDATION_FAILED');
    const country = await this.country(request.countryId, db);
    if (!country) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    const { pickup, dropoff } = request;
    if (surelyDifferentCountries(pickup, dropoff))
      throw badRequest('The pickup and the dropoff are in different countries', 'POINTS_IN_DIFFERENT_COUNTRIES');
    if (!mayBeIn(country.code, pickup) || !mayBeIn(country.code, dropoff)) {
      throw badRequest(`The pickup and the dropoff must be in the country (${country.code})`, 'POINT_OUTSIDE_COUNTRY');
    }
    const maxMeters = this.deps.config.pricing.maxTripDistanceMeters;
    if (distanceMeters(pickup.lat, pickup.lng, dropoff.lat, dropoff.lng) > maxMeters) {
      throw badRequest(`The pickup and the dropoff are more than ${maxMeters / 1000} km apart`, 'TRIP_TOO_LONG');
    }
    const tariff = await this.tariff(request.countryId, request.vehicleType, db);
    if (!tariff) throw notFound(`No tariff for ${request.vehicleType} in ${country.code}`, 'TARIFF_NOT_FOUND');
    const { routing, ...trip } = await this.router.route(pickup, dropoff, request.vehicleType);
    const surgeTenths = this.surge.tenthsAt(request.vehicleType, pickup.lat, pickup.lng);
    const { amount, breakdown } = priceTrip(tariff, { ...trip, surgeTenths });
    return {
      amount,
      currency: country.currency,
      breakdown,
      tariffVersion: tariff.version,
      surge: breakdown.surge,
      quoteId,
      inputs: {
        kind: request.kind,
        pickup: { lat: pickup.lat, lng: pickup.lng },
        dropoff: { lat: dropoff.lat, lng: dropoff.lng },
        vehicleType: request.vehicleType,
        countryId: request.countryId,
        currency: country.currency,
        tariff,
        routing,
        distanceMeters: trip.distanceMeters,
        durationSeconds: trip.durationSeconds,
        surge: breakdown.surge,
        pricedAt: '',
      },
    };
  }

  /** The nearest eligible driver's time to the pickup (same routing), or null when none is within 10 km. */
  private async pickupEtaSeconds(request: PriceRequest): Promise<number | null> {
    const [nearest] = this.live.index.nearest({
      lat: request.pickup.lat,
      lng: request.pickup.lng,
      radiusMeters: PICKUP_ETA_RADIUS_METERS,
      limit: 1,
      vehicleType: request.vehicleType,
      orderType: request.kind === 'RIDE' ? 'RIDE' : 'PACKAGE_DELIVERY',
      countryId: request.countryId,
      staleBefore: this.deps.clock.nowMs() - this.deps.config.drivers.locationTtlMs,
    });
    if (!nearest) return null;
    return (await this.router.route(nearest.driver.position!, request.pickup, request.vehicleType)).durationSeconds;
  }

  private async country(id: string, db: Db = this.db): Promise<CountryInfo | undefined> {
    const now = this.deps.clock.nowMs();
    const cached = this.countries.get(id);
    if (cached && cached.until > now) return cached.info;
    const row = await this.tariffsRepo.country(db, id);
    if (!row) return undefined;
    const info = { id: row.id, code: row.code.trim(), currency: row.currency.trim() };
    this.countries.set(id, { info, until: now + COUNTRY_CACHE_MS });
    return info;
  }

  private async tariff(
    countryId: string,
    vehicleType: VehicleType,
    db: Db = this.db,
  ): Promise<(TariffValues & { version: number }) | undefined> {
    return (await this.cachedTariff(countryId, vehicleType, db))?.values;
  }

  private async cachedTariff(countryId: string, vehicleType: VehicleType, db: Db = this.db) {
    const key = `${countryId}:${vehicleType}`;
    const now = this.deps.clock.nowMs();
    const cached = this.tariffs.get(key);
    if (cached && cached.until > now) return cached;
    const row = await this.tariffsRepo.get(db, countryId, vehicleType);
    if (!row) return undefined;
    const entry = {
      values: { ...tariffValues(row), version: row.version },
      commissionRate: row.commission_rate,
      returnRate: row.return_rate,
      until: now + TARIFF_CACHE_MS,
    };
    this.tariffs.set(key, entry);
    return entry;
  }

  /**
   * The commission rate a job created now keeps (section 21): its tariff's, in basis points; the
   * default (2000) where the country has no tariff for the vehicle type. Pass the job's transaction.
   */
  async commissionRate(countryId: string, vehicleType: VehicleType, db: Db = this.db): Promise<number> {
    return (await this.cachedTariff(countryId, vehicleType, db))?.commissionRate ?? DEFAULT_COMMISSION_RATE;
  }

  /**
   * The return rate a return created now is priced with (section 23): its tariff's, in basis points
   * of the way back's price less the booking fee; 10000 (100 %) where there is no tariff.
   */
  async returnRate(countryId: string, vehicleType: VehicleType, db: Db = this.db): Promise<number> {
    return (await this.cachedTariff(countryId, vehicleType, db))?.returnRate ?? DEFAULT_RETURN_RATE;
  }

  // Tariff administration (ADMIN routes).

  async getTariff(countryId: string, vehicleType: VehicleType): Promise<TariffResult> {
    const country = await this.requireCountry(countryId);
    const row = await this.tariffsRepo.get(this.db, countryId, vehicleType);
    if (!row) throw notFound(`No tariff for ${vehicleType} in ${country.code}`, 'TARIFF_NOT_FOUND');
    return toTariffResult(row, country);
  }

  /** Creates or replaces the tariff; its version goes up by one. Quotes already given keep their price. */
  async putTariff(
    countryId: string,
    vehicleType: VehicleType,
    values: TariffValues & { commissionRate?: number; returnRate?: number },
    adminId: string,
  ): Promise<TariffResult> {
    const country = await this.requireCountry(countryId);
    const columns = {
      // Absent: the tariff keeps its rate (a new one gets the default, 2000).
      ...(values.commissionRate !== undefined ? { commission_rate: values.commissionRate } : {}),
      ...(values.returnRate !== undefined ? { return_rate: values.returnRate } : {}),
      base: values.base,
      per_km: values.perKm,
      per_minute: values.perMinute,
      minimum: values.minimum,
      booking_fee: values.bookingFee,
      cancellation_fee: values.cancellationFee,
      updated_by: adminId,
      updated_at: this.deps.clock.now(),
    };
    const row = await this.tariffsRepo.upsert(countryId, vehicleType, columns);
    this.tariffs.clear();
    this.deps.bus.publishToOthers('pricing.changed', { what: 'tariff' });
    return toTariffResult(row, country);
  }

  async listTariffs(filter: { countryId?: string; vehicleType?: VehicleType }): Promise<TariffResult[]> {
    const rows = await this.tariffsRepo.list(filter);
    return rows.map((row) =>
      toTariffResult(row, { id: row.country_id, code: row.code.trim(), currency: row.currency.trim() }),
    );
  }

  private async requireCountry(id: string): Promise<CountryInfo> {
    const country = await this.country(id);
    if (!country) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    return country;
  }

  /**
   * Deletes the unused quote rows (kept in PostgreSQL) that expired more than QUOTE_TTL ago, in
   * batches; used ones stay (the record of the price a job was created with). Returns how many.
   */
  async deleteExpiredQuotes(): Promise<number> {
    const before = new Date(this.deps.clock.nowMs() - this.deps.config.pricing.quoteTtlMs);
    let deleted = 0;
    for (;;) {
      const n = await this.quotes.deleteUnusedExpiredBefore(before, QUOTE_PURGE_BATCH);
      deleted += n;
      if (n < QUOTE_PURGE_BATCH) return deleted;
    }
  }
}
