// Package deliveries: creation, visibility, the lifecycle (section 9) and the driver's busy state.
import { createHmac, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import { CompiledQuery, sql, type Transaction } from 'kysely';
import type pg from 'pg';
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import type { AuthContext } from '../../shared/auth-context.js';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../shared/errors.js';
import { beforeCursor, decodeCursor, toPage } from '../../shared/pagination.js';
import type { DriverIndex } from '../matching/driver-index.js';
import { recordDeliveryEvent } from '../webhooks/outbox.js';
import {
  claimDriver,
  DRIVER_SUMMARY_COLUMNS,
  explainClaimFailure,
  publishDriverJob,
  pushNearbyJob,
  releaseDriver,
  toDriverSummary,
  json,
} from '../jobs/driver-claims.js';
import { checkPackageTransition, FINAL_PACKAGE_STATUSES, type PackageActor } from './package-status.js';
import type { CreatePackageBody, PackageListQuery, PackageResponse } from './packages.schemas.js';
import type { PackageStatus, ParcelJson, StatusHistoryItemJson, StopJson } from '../../db/tables/jobs.js';

const MAX_DELIVERY_CODE_ATTEMPTS = 5;
/**
 * GET /packages/:id is polled hard by integrators, so each instance keeps recent answers. Every
 * change to a package drops it at once on every instance (bus 'package.changed', through Redis when
 * configured), so the lifetime only bounds what changes elsewhere: the assigned driver's position
 * (written behind about once a second), hence one second with a driver and 30 seconds without.
 */
const READ_CACHE_TTL_MS = 1000;
const READ_CACHE_TTL_NO_DRIVER_MS = 30_000;
const READ_CACHE_MAX = 20_000;

/** An instant as JavaScript's toISOString writes it (UTC, milliseconds, Z). */
const isoSql = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The poll's read: who may see each package, and the package object itself as JSON text built by
 * PostgreSQL, sent to the client as it is. It is the object toResponse builds from the row (a test
 * holds the two equal, state by state); building it here spares the poll, the hottest read, parsing
 * some twenty columns and four JSON documents only to serialize them again.
 */
const PACKAGE_JSON_BY_IDS = `
  select p.id, p.created_by, p.customer_id, p.driver_id, dp.company_id as driver_company_id,
    json_build_object(
      'id', p.id, 'status', p.status, 'orderType', 'PACKAGE_DELIVERY', 'vehicleType', p.vehicle_type,
      'countryId', p.country_id, 'businessId', p.business_id, 'customerId', p.customer_id, 'reference', p.reference,
      'pickup', p.pickup, 'dropoff', p.dropoff, 'parcel', p.parcel,
      'driver', case when p.driver_id is not null and dp.vehicle_type is not null then json_build_object(
        'id', p.driver_id, 'firstName', coalesce(du.first_name, ''), 'phone', coalesce(du.phone, ''),
        'vehicleType', dp.vehicle_type, 'vehiclePlate', coalesce(dp.vehicle_plate, ''),
        'location', case when dp.last_lat is not null and dp.last_lng is not null and dp.last_location_at is not null
          then json_build_object('lat', dp.last_lat, 'lng', dp.last_lng, 'heading', dp.last_heading, 'speed', dp.last_speed,
                                 'updatedAt', ${isoSql('dp.last_location_at')}) end) end,
      'statusHistory', p.status_history,
      'createdAt', ${isoSql('p.created_at')}, 'updatedAt', ${isoSql('p.updated_at')}
    )::text as body
  from packages p
  left join users du on du.id = p.driver_id
  left join driver_profiles dp on dp.user_id = p.driver_id
  where p.id = any($1::uuid[])`;

interface PackageJsonRow {
  id: string;
  created_by: string;
  customer_id: string | null;
  driver_id: string | null;
  driver_company_id: string | null;
  /** The package object (PackageResponse) as JSON text. */
  body: string;
}

export interface PackageServiceDeps {
  db: DB;
  bus: Bus;
  clock: Clock;
  /** Keys the delivery-code HMAC, so a stolen database does not reveal codes by brute force alone. */
  secret: string;
  driverLocationTtlMs: number;
  /** The live driver index: who is near a new package's pickup. */
  driverIndex: DriverIndex;
  /** The PostgreSQL server's pool, when there is one: the hot read then runs as a named prepared statement. */
  pgPool?: pg.Pool;
}

type PackageRow = Awaited<ReturnType<ReturnType<PackageService['selectPackages']>['executeTakeFirstOrThrow']>>;

export const packageNotFound = () => notFound('Package not found', 'PACKAGE_NOT_FOUND');

export class PackageService {
  private readonly codeKey: Buffer;
  private readonly readCache = new LRUCache<string, PackageJsonRow>({ max: READ_CACHE_MAX, ttl: READ_CACHE_TTL_NO_DRIVER_MS });
  /** Bumped by every invalidation: a read that overlapped a change is not cached. */
  private cacheEpoch = 0;
  private readonly unsubscribe: () => void;
  /** The hot read (every poll), built and compiled once; each call only binds the id. */
  private readonly byId: CompiledQuery<PackageRow>;
  /** The same read for many ids at once: the polls that arrive together share one statement. */
  private readonly byIds: CompiledQuery<PackageRow>;
  /**
   * Reads outside a transaction are batched: every id asked for while the event loop handles one
   * round of I/O is fetched by one query when that round ends (setImmediate). Under load this turns
   * dozens of round trips into one; alone, a read waits for nothing but the end of its own round.
   */
  private readonly loader: DataLoader<string, PackageRow | undefined>;
  /** The polls' reads (PACKAGE_JSON_BY_IDS), batched the same way. */
  private readonly jsonLoader: DataLoader<string, PackageJsonRow | undefined>;

  constructor(private readonly deps: PackageServiceDeps) {
    this.codeKey = createHmac('sha256', deps.secret).update('delivery-code').digest();
    this.byId = this.selectPackages().where('p.id', '=', '00000000-0000-0000-0000-000000000000').compile();
    this.byIds = this.selectPackages()
      .where(sql<boolean>`p.id = any(${[] as string[]}::uuid[])`)
      .compile();
    const batching = { cache: false, maxBatchSize: 100, batchScheduleFn: (callback: () => void) => setImmediate(callback) };
    this.loader = new DataLoader((ids) => this.loadMany(ids), batching);
    this.jsonLoader = new DataLoader((ids) => this.loadJson(ids), batching);
    const offChanged = deps.bus.subscribe('package.changed', ({ packageId }) => {
      this.cacheEpoch += 1;
      this.readCache.delete(packageId);
    });
    const offResync = deps.bus.subscribe('bus.resync', () => {
      this.cacheEpoch += 1;
      this.readCache.clear();
    });
    this.unsubscribe = () => {
      offChanged();
      offResync();
    };
  }

  close(): void {
    this.unsubscribe();
    this.readCache.clear();
  }

  /** The bus delivers to this instance's own subscriber at once (and to the others through Redis). */
  private changed(packageId: string): void {
    this.deps.bus.publish('package.changed', { packageId });
  }

  /** One query for the whole package object: row, driver and status history. */
  selectPackages(db: DB | Transaction<Database> = this.deps.db) {
    return db
      .selectFrom('packages as p')
      .leftJoin('users as du', 'du.id', 'p.driver_id')
      .leftJoin('driver_profiles as dp', 'dp.user_id', 'p.driver_id')
      .select([
        'p.id',
        'p.status',
        'p.vehicle_type',
        'p.country_id',
        'p.created_by',
        'p.business_id',
        'p.customer_id',
        'p.driver_id',
        'p.reference',
        'p.pickup',
        'p.dropoff',
        'p.parcel',
        'p.delivery_code_hash',
        'p.created_at',
        'p.updated_at',
        ...DRIVER_SUMMARY_COLUMNS,
        'p.status_history',
      ]);
  }

  private async load(id: string, db: DB | Transaction<Database> = this.deps.db): Promise<PackageRow | undefined> {
    if (db === this.deps.db) return this.loader.load(id);
    const result = await db.executeQuery<PackageRow>({ ...this.byId, parameters: [id] });
    return result.rows[0];
  }

  private loadMany(ids: readonly string[]): Promise<(PackageRow | undefined)[]> {
    return this.byIdsQuery<PackageRow>('packages_by_ids_v1', this.byIds.sql, ids);
  }

  private loadJson(ids: readonly string[]): Promise<(PackageJsonRow | undefined)[]> {
    return this.byIdsQuery<PackageJsonRow>('package_json_by_ids_v1', PACKAGE_JSON_BY_IDS, ids);
  }

  /** Runs a query whose one parameter is the uuid[] of `ids`; answers in the order of `ids` (undefined: not found). */
  private async byIdsQuery<R extends { id: string }>(name: string, text: string, ids: readonly string[]): Promise<(R | undefined)[]> {
    const rows = this.deps.pgPool
      ? // Prepared once per connection: PostgreSQL then skips parsing and planning on every batch.
        (await this.deps.pgPool.query<R>({ name, text, values: [ids] })).rows
      : (await this.deps.db.executeQuery<R>(CompiledQuery.raw(text, [ids]))).rows;
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id));
  }

  static canSee(row: Pick<PackageRow, 'created_by' | 'customer_id' | 'driver_id' | 'driver_company_id'>, auth: AuthContext): boolean {
    if (auth.role === 'ADMIN') return true;
    if (auth.userId === row.created_by || auth.userId === row.customer_id || auth.userId === row.driver_id) return true;
    return auth.role === 'COMPANY' && row.driver_id !== null && row.driver_company_id === auth.userId;
  }

  static actorFor(row: Pick<PackageRow, 'created_by' | 'customer_id' | 'driver_id'>, auth: AuthContext): PackageActor {
    if (auth.role === 'ADMIN') return 'ADMIN';
    if (auth.userId === row.driver_id) return 'ASSIGNED_DRIVER';
    if (auth.userId === row.created_by) return 'CREATOR';
    if (auth.userId === row.customer_id) return 'CUSTOMER';
    if (auth.role === 'COMPANY') return 'COMPANY';
    return 'DRIVER';
  }

  static toResponse(row: PackageRow): PackageResponse {
    return {
      id: row.id,
      status: row.status,
      orderType: 'PACKAGE_DELIVERY',
      vehicleType: row.vehicle_type,
      countryId: row.country_id,
      businessId: row.business_id,
      customerId: row.customer_id,
      reference: row.reference,
      pickup: json<StopJson>(row.pickup),
      dropoff: json<StopJson>(row.dropoff),
      parcel: json<ParcelJson>(row.parcel),
      driver: toDriverSummary(row),
      statusHistory: json<StatusHistoryItemJson[]>(row.status_history),
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    };
  }

  /** GET /packages/:id: the package as JSON text (see PACKAGE_JSON_BY_IDS), from the read cache when it can. */
  async getJson(id: string, auth: AuthContext): Promise<string> {
    const cached = this.readCache.get(id);
    if (cached) {
      if (!PackageService.canSee(cached, auth)) throw packageNotFound();
      return cached.body;
    }
    const epoch = this.cacheEpoch;
    const row = await this.jsonLoader.load(id);
    if (!row) throw packageNotFound();
    // (The cache's lifetimes run on a monotonic clock; business time is deps.clock.)
    if (epoch === this.cacheEpoch) this.readCache.set(id, row, { ttl: row.driver_id ? READ_CACHE_TTL_MS : READ_CACHE_TTL_NO_DRIVER_MS });
    if (!PackageService.canSee(row, auth)) throw packageNotFound();
    return row.body;
  }

  async list(auth: AuthContext, query: PackageListQuery) {
    const limit = query.limit ?? 20;
    const cursor = decodeCursor(query.cursor);
    let q = this.selectPackages();
    const me = auth.userId;
    switch (auth.role) {
      case 'ADMIN':
        break;
      case 'BUSINESS':
        q = q.where('p.created_by', '=', me);
        break;
      case 'CUSTOMER':
        q = q.where((eb) => eb.or([eb('p.created_by', '=', me), eb('p.customer_id', '=', me)]));
        break;
      case 'DRIVER':
        q = q.where('p.driver_id', '=', me);
        break;
      case 'COMPANY':
        q = q.where('p.driver_id', 'in', (eb) => eb.selectFrom('driver_profiles').select('user_id').where('company_id', '=', me));
        break;
    }
    if (query.status) q = q.where('p.status', '=', query.status);
    if (cursor) q = q.where(beforeCursor(cursor, 'p.created_at', 'p.id'));
    const rows = await q.orderBy('p.created_at', 'desc').orderBy('p.id', 'desc').limit(limit + 1).execute();
    return toPage(
      rows.map((r) => ({ ...r, createdAt: r.created_at })),
      limit,
      (r) => PackageService.toResponse(r),
    );
  }

  /** Validates and inserts a package in `trx`; returns the creator's 201 body. */
  async create(trx: Transaction<Database>, auth: AuthContext, body: CreatePackageBody) {
    for (const [field, stop] of [['pickup', body.pickup], ['dropoff', body.dropoff]] as const) {
      if (!isValidPhoneNumber(stop.contactPhone)) throw badRequest(`body.${field}.contactPhone must be a valid phone number`);
    }
    let customerId: string | null = body.customerId ?? null;
    if (auth.role === 'CUSTOMER') {
      if (customerId !== null && customerId !== auth.userId) {
        throw forbidden('A customer may only name itself as customerId', 'CUSTOMER_MISMATCH');
      }
      customerId = auth.userId;
    }
    const country = await trx.selectFrom('countries').select('id').where('id', '=', body.countryId).executeTakeFirst();
    if (!country) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    if (customerId !== null && auth.role !== 'CUSTOMER') {
      const customer = await trx.selectFrom('users').select('id').where('id', '=', customerId).where('role', '=', 'CUSTOMER').executeTakeFirst();
      if (!customer) throw notFound('Customer not found', 'CUSTOMER_NOT_FOUND');
    }

    const id = randomUUID();
    const now = this.deps.clock.now();
    const deliveryCode = body.requireDeliveryCode ? String(randomInt(0, 10_000)).padStart(4, '0') : undefined;
    await trx
      .insertInto('packages')
      .values({
        id,
        status: 'PENDING',
        vehicle_type: body.vehicleType,
        country_id: body.countryId,
        created_by: auth.userId,
        business_id: auth.role === 'BUSINESS' ? auth.userId : null,
        customer_id: customerId,
        driver_id: null,
        reference: body.reference ?? null,
        pickup: JSON.stringify(body.pickup),
        dropoff: JSON.stringify(body.dropoff),
        parcel: JSON.stringify(body.parcel),
        pickup_lat: body.pickup.location.lat,
        pickup_lng: body.pickup.location.lng,
        delivery_code_hash: deliveryCode ? this.hashCode(id, deliveryCode) : null,
        recipient_name: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await trx.insertInto('package_status_history').values({ package_id: id, status: 'PENDING', reason: null, actor_id: auth.userId, at: now }).execute();
    const row = await this.load(id, trx);
    return { ...PackageService.toResponse(row!), ...(deliveryCode ? { deliveryCode } : {}) };
  }

  /** After the creation committed: offer the job to eligible drivers nearby (best effort). */
  announce(pkg: PackageResponse): number {
    return pushNearbyJob(
      { index: this.deps.driverIndex, bus: this.deps.bus, now: this.deps.clock.now(), locationTtlMs: this.deps.driverLocationTtlMs },
      {
        jobType: 'PACKAGE',
        jobId: pkg.id,
        vehicleType: pkg.vehicleType,
        orderType: 'PACKAGE_DELIVERY',
        lat: pkg.pickup.location.lat,
        lng: pkg.pickup.location.lng,
        parcelSize: pkg.parcel.size ?? null,
      },
    );
  }

  /** A driver takes a PENDING package (first wins). */
  async accept(id: string, auth: AuthContext): Promise<PackageResponse> {
    const row = await this.load(id);
    // A PENDING package is offered to every eligible driver, so losing the race is a 409, not a 404.
    if (!row) throw packageNotFound();
    return this.assignTo(row, auth.userId, 'DRIVER', auth.userId);
  }

  /** An admin, or a company for one of its drivers, assigns a PENDING package. */
  async assign(id: string, auth: AuthContext, driverId: string): Promise<PackageResponse> {
    const row = await this.load(id);
    if (!row) throw packageNotFound();
    if (auth.role === 'COMPANY' && row.status !== 'PENDING' && !PackageService.canSee(row, auth)) throw packageNotFound();
    const driver = await this.deps.db
      .selectFrom('driver_profiles as d')
      .innerJoin('users as u', 'u.id', 'd.user_id')
      .select(['d.user_id', 'd.company_id'])
      .where('d.user_id', '=', driverId)
      .where('u.role', '=', 'DRIVER')
      .executeTakeFirst();
    if (!driver || (auth.role === 'COMPANY' && driver.company_id !== auth.userId)) throw notFound('Driver not found', 'DRIVER_NOT_FOUND');
    return this.assignTo(row, driverId, auth.role === 'ADMIN' ? 'ADMIN' : 'COMPANY', auth.userId);
  }

  private async assignTo(row: PackageRow, driverId: string, actor: PackageActor, actorId: string): Promise<PackageResponse> {
    const check = checkPackageTransition(row.status, 'ASSIGNED', actor);
    if (!check.ok) throw invalidTransition(row.status);
    const now = this.deps.clock.now();
    const claim = { driverId, jobType: 'PACKAGE' as const, jobId: row.id, vehicleType: row.vehicle_type, orderType: 'PACKAGE_DELIVERY' as const };
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      // Package first, then driver: every transaction locks in this order, so none deadlock.
      const moved = await trx
        .updateTable('packages')
        .set({ status: 'ASSIGNED', driver_id: driverId, updated_at: now })
        .where('id', '=', row.id)
        .where('status', '=', 'PENDING')
        .returning('business_id')
        .executeTakeFirst();
      if (!moved) throw invalidTransition(await this.currentStatus(trx, row.id));
      if (!(await claimDriver(trx, claim, now))) throw await explainClaimFailure(trx, claim);
      await this.recordChange(trx, row.id, moved.business_id, 'ASSIGNED', check.event, null, actorId, now);
      return (await this.load(row.id, trx))!;
    });
    this.changed(row.id);
    this.deps.bus.publish('webhooks.wake', {});
    publishDriverJob(this.deps.bus, driverId, 'PACKAGE', row.id, true);
    this.deps.bus.publish('driver.push', {
      driverId,
      message: { type: 'job.assigned', jobType: 'PACKAGE', jobId: row.id, status: 'ASSIGNED' },
    });
    return PackageService.toResponse(updated);
  }

  pickup(id: string, auth: AuthContext) {
    return this.move(id, auth, 'PICKED_UP');
  }

  start(id: string, auth: AuthContext) {
    return this.move(id, auth, 'IN_TRANSIT');
  }

  fail(id: string, auth: AuthContext, reason: string) {
    return this.move(id, auth, 'FAILED', { reason });
  }

  cancel(id: string, auth: AuthContext, reason: string | undefined) {
    return this.move(id, auth, 'CANCELLED', { reason });
  }

  deliver(id: string, auth: AuthContext, body: { deliveryCode?: string; recipientName?: string }) {
    return this.move(id, auth, 'DELIVERED', {
      recipientName: body.recipientName,
      before: async (row) => {
        if (row.delivery_code_hash === null) return;
        if (body.deliveryCode === undefined) throw badRequest('This package needs its deliveryCode to be delivered', 'DELIVERY_CODE_REQUIRED');
        // Reserve the attempt before comparing, in one conditional statement, so that parallel guesses
        // cannot test more codes than the limit allows.
        const reserved = await this.deps.db
          .updateTable('packages')
          .set((eb) => ({ delivery_code_attempts: eb('delivery_code_attempts', '+', 1) }))
          .where('id', '=', row.id)
          .where('delivery_code_attempts', '<', MAX_DELIVERY_CODE_ATTEMPTS)
          .returning('id')
          .executeTakeFirst();
        if (!reserved) throw forbidden('Too many wrong delivery codes; contact support', 'DELIVERY_CODE_LOCKED');
        const expected = Buffer.from(row.delivery_code_hash, 'hex');
        const given = Buffer.from(this.hashCode(row.id, body.deliveryCode), 'hex');
        if (!timingSafeEqual(expected, given)) {
          throw forbidden('Delivery code is incorrect', 'DELIVERY_CODE_INVALID');
        }
      },
    });
  }

  /** Any move but assignment: visibility (404), the transition table (409 / 403), then a conditional update. */
  private async move(
    id: string,
    auth: AuthContext,
    to: PackageStatus,
    options: { reason?: string; recipientName?: string; before?: (row: PackageRow) => Promise<void> } = {},
  ): Promise<PackageResponse> {
    const row = await this.load(id);
    if (!row || !PackageService.canSee(row, auth)) throw packageNotFound();
    const check = checkPackageTransition(row.status, to, PackageService.actorFor(row, auth));
    if (!check.ok) {
      if (check.reason === 'STATUS') throw invalidTransition(row.status);
      throw forbidden(`You may not move this package to ${to}`, 'ACTION_NOT_ALLOWED');
    }
    await options.before?.(row);
    const now = this.deps.clock.now();
    const final = FINAL_PACKAGE_STATUSES.includes(to);
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('packages')
        .set({ status: to, updated_at: now, ...(options.recipientName ? { recipient_name: options.recipientName } : {}) })
        .where('id', '=', id)
        .where('status', '=', row.status)
        .returning(['business_id', 'driver_id'])
        .executeTakeFirst();
      if (!moved) throw invalidTransition(await this.currentStatus(trx, id));
      if (final && moved.driver_id) await releaseDriver(trx, moved.driver_id, id, now);
      await this.recordChange(trx, id, moved.business_id, to, check.event, options.reason ?? null, auth.userId, now);
      return (await this.load(id, trx))!;
    });
    this.changed(id);
    this.deps.bus.publish('webhooks.wake', {});
    if (updated.driver_id) {
      if (final) publishDriverJob(this.deps.bus, updated.driver_id, 'PACKAGE', id, false);
      if (updated.driver_id !== auth.userId) {
        this.deps.bus.publish('driver.push', { driverId: updated.driver_id, message: { type: 'job.updated', jobType: 'PACKAGE', jobId: id, status: to } });
      }
    }
    return PackageService.toResponse(updated);
  }

  private async recordChange(
    trx: Transaction<Database>,
    packageId: string,
    businessId: string | null,
    status: PackageStatus,
    event: Parameters<typeof recordDeliveryEvent>[1]['event'],
    reason: string | null,
    actorId: string,
    now: Date,
  ): Promise<void> {
    await trx.insertInto('package_status_history').values({ package_id: packageId, status, reason, actor_id: actorId, at: now }).execute();
    await recordDeliveryEvent(trx, { packageId, businessId, event, status, occurredAt: now });
  }

  private async currentStatus(trx: Transaction<Database>, id: string): Promise<PackageStatus> {
    const row = await trx.selectFrom('packages').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    return row.status;
  }

  private hashCode(packageId: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${packageId}:${code}`).digest('hex');
  }
}

export function invalidTransition(status: string): AppError {
  return conflict(`Package is ${status}`, 'INVALID_STATUS_TRANSITION');
}
