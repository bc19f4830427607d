// Package deliveries: creation, visibility, the lifecycle (section 9) and the read cache of the poll.
import { createHmac, randomBytes, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Transaction } from 'kysely';
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { PackageStatus, ParcelJson, ProofKind, StopJson } from '../../db/tables/jobs.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, forbidden, notFound } from '../../shared/errors.js';
import { decodeCursor, toRowPage } from '../../shared/pagination.js';
import type { DriverIndex } from '../matching/driver-index.js';
import { json } from '../../db/json.js';
import { cancellationFeeFor, money, priceColumns, priceNewJob, type JobPricing } from '../jobs/job-price.js';
import { isDriverSide, jobFields, JobLifecycle, type DispatchHooks } from '../jobs/lifecycle.js';
import { countryExists, customerExists, findDriver } from '../jobs/references.repository.js';
import { recordDeliveryEvent } from '../webhooks/outbox.js';
import { FINAL_PACKAGE_STATUSES, PACKAGE_TRANSITIONS, type PackageActor } from './package-status.js';
import type { PackageJsonRow, PackageRow, PackagesRepository } from './packages.repository.js';
import type { CreatePackageBody, FullPackage, PackageListQuery, PackageResponse } from './packages.schemas.js';
import { buildStatement } from './statement.js';
import type { StatementQuery } from './statement.schemas.js';

const MAX_DELIVERY_CODE_ATTEMPTS = 5;
/**
 * GET /packages/:id is polled hard by integrators, so each instance keeps recent answers. Every
 * change to a package drops it at once on every instance (bus 'job.changed', through Redis when
 * configured), so the lifetime only bounds what changes elsewhere: the assigned driver's position
 * (written behind about once a second), hence one second with a driver and 30 seconds without.
 */
const READ_CACHE_TTL_MS = 1000;
const READ_CACHE_TTL_NO_DRIVER_MS = 30_000;
const READ_CACHE_MAX = 20_000;

export interface PackageServiceDeps {
  db: DB;
  repo: PackagesRepository;
  bus: Bus;
  clock: Clock;
  /** Keys the delivery-code HMAC, so a stolen database does not reveal codes by brute force alone. */
  secret: string;
  driverLocationTtlMs: number;
  driverIndex: DriverIndex;
  dispatch?: DispatchHooks;
  pricing: JobPricing;
  /** Tracking links (modules/tracking): shown on every read, only their hash stored. */
  links: TrackingLinks;
  /** Sends the drop-off contact its tracking link (notifyRecipient). */
  notifier?: RecipientNotifier;
}

export interface TrackingLinks {
  url(packageId: string, nonce: string): string;
  hashFor(packageId: string, nonce: string): string;
}

export interface RecipientNotifier {
  notify(moment: 'CREATED' | 'IN_TRANSIT', to: string, trackingUrl: string): void;
}

type MoveOptions = {
  reason?: string;
  recipientName?: string;
  before?: (row: PackageRow) => Promise<void>;
  set?: (row: PackageRow) => { cancellation_fee: number | null };
};

/** text[] as the driver returns it: an array (pg, PGlite), or the literal '{PHOTO,SIGNATURE}'. */
export function proofKinds(value: ProofKind[] | string): ProofKind[] {
  if (Array.isArray(value)) return value;
  return value.replace(/^\{|\}$/g, '').split(',').filter((kind): kind is ProofKind => kind === 'PHOTO' || kind === 'SIGNATURE');
}

/** The `proof` field: API paths to the images (served with the bearer header), never public links. */
export function proofOf(row: Pick<PackageRow, 'id' | 'proof_photo_key' | 'proof_signature_key' | 'proof_recipient_name' | 'proof_at'>): ProofJson | null {
  if (!row.proof_at) return null;
  return {
    ...(row.proof_photo_key ? { photoUrl: `/api/packages/${row.id}/proof/photo` } : {}),
    ...(row.proof_signature_key ? { signatureUrl: `/api/packages/${row.id}/proof/signature` } : {}),
    ...(row.proof_recipient_name !== null ? { recipientName: row.proof_recipient_name } : {}),
    at: row.proof_at.toISOString(),
  };
}

/** The proof a package requires that its driver has not sent yet. */
export function missingProof(row: Pick<PackageRow, 'proof_required' | 'proof_photo_key' | 'proof_signature_key'>): ProofKind[] {
  return proofKinds(row.proof_required).filter((kind) => (kind === 'PHOTO' ? !row.proof_photo_key : !row.proof_signature_key));
}

type ProofJson = NonNullable<PackageResponse['proof']>;

export const packageNotFound = () => notFound('Package not found', 'PACKAGE_NOT_FOUND');

/**
 * How much of a package the caller sees (contract section 9): everything (its creator, the customer
 * it names, its driver, admins); everything but the tracking link (the company of its driver: it
 * follows the job through GET /packages/:id/track); or, for a company listing a PENDING package of its
 * country, only what deciding to take it needs.
 */
export type PackageView = 'FULL' | 'NO_LINK' | 'OPEN';

/** A package's JSON text with its tracking link added, and where the link starts (to leave it out). */
type ShownJsonRow = PackageJsonRow & { linkAt: number };

export class PackageService {
  private readonly codeKey: Buffer;
  private readonly readCache = new LRUCache<string, { row: ShownJsonRow; readAt: number }>({ max: READ_CACHE_MAX, ttl: READ_CACHE_TTL_NO_DRIVER_MS });
  /** Bumped by every invalidation: a read that overlapped a change is not cached. */
  private cacheEpoch = 0;
  private readonly unsubscribe: () => void;
  private readonly lifecycle: JobLifecycle<PackageStatus, PackageActor, (typeof PACKAGE_TRANSITIONS)[number]['event'], PackageRow>;
  private readonly repo: PackagesRepository;
  /** Packages created with notifyRecipient whose creation message waits for announce (after commit). */
  private readonly notifyOnAnnounce = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly deps: PackageServiceDeps) {
    this.codeKey = createHmac('sha256', deps.secret).update('delivery-code').digest();
    this.repo = deps.repo;
    this.lifecycle = new JobLifecycle(deps, {
      jobType: 'PACKAGE',
      orderType: 'PACKAGE_DELIVERY',
      noun: 'package',
      transitions: PACKAGE_TRANSITIONS,
      finals: FINAL_PACKAGE_STATUSES,
      store: deps.repo,
      // The outbox row commits exactly when the change does.
      inTransaction: (trx, c) => recordDeliveryEvent(trx, { packageId: c.jobId, businessId: c.businessId, event: c.event, status: c.status, occurredAt: c.at }),
      afterCommit: () => deps.bus.publish('webhooks.wake', {}),
    });
    const offChanged = deps.bus.subscribe('job.changed', ({ jobType, jobId }) => {
      if (jobType !== 'PACKAGE') return;
      this.cacheEpoch += 1;
      this.readCache.delete(jobId);
    });
    const offRotated = deps.bus.subscribe('tracking.rotated', ({ packageId }) => {
      this.cacheEpoch += 1;
      this.readCache.delete(packageId);
    });
    const offProof = deps.bus.subscribe('package.proof', ({ packageId }) => {
      this.cacheEpoch += 1;
      this.readCache.delete(packageId);
    });
    const offResync = deps.bus.subscribe('bus.resync', () => {
      this.cacheEpoch += 1;
      this.readCache.clear();
    });
    this.unsubscribe = () => {
      offChanged();
      offRotated();
      offProof();
      offResync();
    };
  }

  close(): void {
    this.unsubscribe();
    this.readCache.clear();
  }

  static canSee(row: Pick<PackageRow, 'created_by' | 'customer_id' | 'driver_id' | 'driver_company_id'>, auth: AuthContext): boolean {
    if (auth.role === 'ADMIN' || auth.userId === row.created_by || auth.userId === row.customer_id) return true;
    return isDriverSide(row, auth);
  }

  static actorFor(row: Pick<PackageRow, 'created_by' | 'customer_id' | 'driver_id'>, auth: AuthContext): PackageActor {
    if (auth.role === 'ADMIN') return 'ADMIN';
    if (auth.userId === row.driver_id) return 'ASSIGNED_DRIVER';
    if (auth.userId === row.created_by) return 'CREATOR';
    if (auth.userId === row.customer_id) return 'CUSTOMER';
    if (auth.role === 'COMPANY') return 'COMPANY';
    return 'DRIVER';
  }

  static viewFor(row: Pick<PackageRow, 'driver_id' | 'driver_company_id'>, auth: AuthContext): PackageView {
    if (auth.role !== 'COMPANY') return 'FULL';
    return isDriverSide(row, auth) ? 'NO_LINK' : 'OPEN';
  }

  /** The package as `view` shows it; the open view is built from an allow-list, so a new field stays hidden. */
  static shown(body: FullPackage, view: PackageView): PackageResponse {
    if (view === 'FULL') return body;
    const { trackingUrl: _link, ...noLink } = body;
    if (view === 'NO_LINK') return noLink;
    const point = (stop: FullPackage['pickup']) => ({ location: stop.location, address: stop.address });
    return {
      id: body.id,
      status: body.status,
      orderType: body.orderType,
      vehicleType: body.vehicleType,
      countryId: body.countryId,
      businessId: body.businessId,
      pickup: point(body.pickup),
      dropoff: point(body.dropoff),
      parcel: body.parcel,
      driver: body.driver,
      statusHistory: body.statusHistory.map((h) => ({ status: h.status, at: h.at })),
      createdAt: body.createdAt,
      updatedAt: body.updatedAt,
      dispatch: body.dispatch,
      price: body.price,
      cancellationFee: body.cancellationFee,
      // What delivering will need; the proof itself is for those who see the whole package.
      proofRequired: body.proofRequired,
      proof: null,
    };
  }

  static toResponse(row: PackageRow, trackingUrl: string): FullPackage {
    return {
      ...jobFields(row, 'PENDING'),
      orderType: 'PACKAGE_DELIVERY',
      businessId: row.business_id,
      customerId: row.customer_id,
      reference: row.reference,
      pickup: json<StopJson>(row.pickup),
      dropoff: json<StopJson>(row.dropoff),
      parcel: json<ParcelJson>(row.parcel),
      price: money(row.price_amount, row.price_currency),
      cancellationFee: money(row.cancellation_fee, row.price_currency),
      proofRequired: proofKinds(row.proof_required),
      proof: proofOf(row),
      trackingUrl,
    };
  }

  respond(row: PackageRow): FullPackage {
    return PackageService.toResponse(row, this.deps.links.url(row.id, row.tracking_nonce));
  }

  /** The package as this caller may see it. */
  respondTo(row: PackageRow, auth: AuthContext): PackageResponse {
    return PackageService.shown(this.respond(row), PackageService.viewFor(row, auth));
  }

  /** The JSON text built by PostgreSQL, with the tracking link (derived from a secret) added here. */
  private withTrackingUrl(row: PackageJsonRow): ShownJsonRow {
    const url = JSON.stringify(this.deps.links.url(row.id, row.tracking_nonce));
    const linkAt = row.body.length - 1;
    return { ...row, body: `${row.body.slice(0, linkAt)},"trackingUrl":${url}}`, linkAt };
  }

  /** The cached text as this caller may read it (a company reading by id is always its driver's company). */
  private static jsonFor(row: ShownJsonRow, auth: AuthContext): string {
    if (!PackageService.canSee(row, auth)) throw packageNotFound();
    return PackageService.viewFor(row, auth) === 'FULL' ? row.body : `${row.body.slice(0, row.linkAt)}}`;
  }

  /** GET /packages/:id: the package as JSON text (see PACKAGE_JSON_BY_IDS), from the read cache when it can. */
  async getJson(id: string, auth: AuthContext): Promise<string> {
    const cached = this.readCache.get(id);
    // While changes elsewhere may go unannounced (Redis away), only an entry read within the last second serves.
    if (cached && (this.deps.bus.reliable || performance.now() - cached.readAt <= READ_CACHE_TTL_MS)) return PackageService.jsonFor(cached.row, auth);
    const epoch = this.cacheEpoch;
    const readAt = performance.now();
    const stored = await this.repo.loadJson(id);
    if (!stored) throw packageNotFound();
    const row = this.withTrackingUrl(stored);
    // (The cache's lifetimes run on a monotonic clock; business time is deps.clock.)
    if (epoch === this.cacheEpoch) this.readCache.set(id, { row, readAt }, { ttl: row.driver_id ? READ_CACHE_TTL_MS : READ_CACHE_TTL_NO_DRIVER_MS });
    return PackageService.jsonFor(row, auth);
  }

  async list(auth: AuthContext, query: PackageListQuery) {
    const limit = query.limit ?? 20;
    const rows = await this.repo.list(auth, { status: query.status, cursor: decodeCursor(query.cursor), limit });
    // The query returns only what the caller may list (a company: its drivers' packages, and the PENDING ones of its country).
    return toRowPage(rows, limit, (r) => this.respondTo(r, auth));
  }

  /** GET /businesses/me/statement: the caller's own packages only. */
  statement(auth: AuthContext, query: StatementQuery) {
    return buildStatement(this.repo, auth.userId, query);
  }

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
    if (!(await countryExists(trx, body.countryId))) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    if (customerId !== null && auth.role !== 'CUSTOMER' && !(await customerExists(trx, customerId))) {
      throw notFound('Customer not found', 'CUSTOMER_NOT_FOUND');
    }

    const price = await priceNewJob(this.deps.pricing, trx, {
      kind: 'PACKAGE',
      accountId: auth.userId,
      quoteId: body.quoteId,
      pickup: body.pickup.location,
      dropoff: body.dropoff.location,
      vehicleType: body.vehicleType,
      countryId: body.countryId,
    });

    const id = randomUUID();
    const now = this.deps.clock.now();
    const trackingNonce = randomBytes(16).toString('base64url');
    const deliveryCode = body.requireDeliveryCode ? String(randomInt(0, 10_000)).padStart(4, '0') : undefined;
    await this.repo.insert(trx, {
        ...priceColumns(price),
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
        tracking_nonce: trackingNonce,
        tracking_token_hash: this.deps.links.hashFor(id, trackingNonce),
        notify_recipient: body.notifyRecipient ?? false,
        proof_required: `{${(body.proofRequired ?? []).join(',')}}`,
        created_at: now,
      updated_at: now,
    });
    if (body.notifyRecipient) this.notifyOnAnnounce.set(id, true);
    await this.repo.addHistory(trx, id, { status: 'PENDING', reason: null, actorId: auth.userId, at: now });
    await this.deps.dispatch?.enroll(trx, { jobType: 'PACKAGE', jobId: id, vehicleType: body.vehicleType, ...body.pickup.location, at: now });
    const row = await this.repo.load(id, trx);
    return { ...this.respond(row!), ...(deliveryCode ? { deliveryCode } : {}) };
  }

  announce(pkg: FullPackage): number {
    // Here, not in create: after commit, and not again for an idempotent replay.
    if (this.notifyOnAnnounce.delete(pkg.id)) this.deps.notifier?.notify('CREATED', pkg.dropoff.contactPhone, pkg.trackingUrl);
    const { lat, lng } = pkg.pickup.location;
    return this.lifecycle.offerNearby({ id: pkg.id, vehicleType: pkg.vehicleType, lat, lng, parcelSize: pkg.parcel.size ?? null });
  }

  async accept(id: string, auth: AuthContext): Promise<PackageResponse> {
    const row = await this.repo.load(id);
    // A PENDING package is offered to every eligible driver, so losing the race is a 409, not a 404.
    if (!row) throw packageNotFound();
    return this.assignTo(row, auth.userId, 'DRIVER', auth.userId);
  }

  async assign(id: string, auth: AuthContext, driverId: string): Promise<PackageResponse> {
    const row = await this.repo.load(id);
    if (!row) throw packageNotFound();
    if (auth.role === 'COMPANY' && row.status !== 'PENDING' && !PackageService.canSee(row, auth)) throw packageNotFound();
    const driver = await findDriver(this.deps.db, driverId);
    if (!driver || (auth.role === 'COMPANY' && driver.company_id !== auth.userId)) throw notFound('Driver not found', 'DRIVER_NOT_FOUND');
    return this.assignTo(row, driverId, auth.role === 'ADMIN' ? 'ADMIN' : 'COMPANY', auth.userId);
  }

  private async assignTo(row: PackageRow, driverId: string, actor: PackageActor, actorId: string): Promise<PackageResponse> {
    const event = this.lifecycle.check(row.status, 'ASSIGNED', actor);
    // An admin may give a package back to a driver who released it (say, after a mistaken release); nobody else.
    const assigned = await this.lifecycle.assign(row, 'ASSIGNED', event, driverId, actorId, { allowReleased: actor === 'ADMIN' });
    return actor === 'COMPANY' ? PackageService.shown(this.respond(assigned), 'NO_LINK') : this.respond(assigned);
  }

  pickup(id: string, auth: AuthContext) {
    return this.move(id, auth, 'PICKED_UP');
  }

  async start(id: string, auth: AuthContext) {
    const row = await this.moveRow(id, auth, 'IN_TRANSIT');
    const started = this.respond(row);
    if (row.notify_recipient) this.deps.notifier?.notify('IN_TRANSIT', started.dropoff.contactPhone, started.trackingUrl);
    return started;
  }

  fail(id: string, auth: AuthContext, reason: string) {
    return this.move(id, auth, 'FAILED', { reason });
  }

  cancel(id: string, auth: AuthContext, reason: string | undefined) {
    return this.move(id, auth, 'CANCELLED', {
      reason,
      set: (row) => ({
        cancellation_fee: cancellationFeeFor(this.deps.pricing, row, {
          cancelledBy: PackageService.actorFor(row, auth) === 'CREATOR' ? 'CREATOR' : 'ADMIN',
          afterAssignment: row.status !== 'PENDING',
        }),
      }),
    });
  }

  deliver(id: string, auth: AuthContext, body: { deliveryCode?: string; recipientName?: string }) {
    return this.move(id, auth, 'DELIVERED', {
      recipientName: body.recipientName,
      before: async (row) => {
        // Before the code: a missing photo does not cost one of the code's attempts.
        const missing = missingProof(row);
        if (missing.length) {
          throw conflict(`This package needs ${missing.map((k) => (k === 'PHOTO' ? 'a photo' : 'a signature')).join(' and ')} as proof of delivery first (POST /packages/:id/proof)`, 'PROOF_REQUIRED');
        }
        if (row.delivery_code_hash === null) return;
        if (body.deliveryCode === undefined) throw badRequest('This package needs its deliveryCode to be delivered', 'DELIVERY_CODE_REQUIRED');
        // Reserve the attempt before comparing, in one conditional statement, so that parallel guesses
        // cannot test more codes than the limit allows.
        if (!(await this.repo.reserveCodeAttempt(row.id, MAX_DELIVERY_CODE_ATTEMPTS))) throw forbidden('Too many wrong delivery codes; contact support', 'DELIVERY_CODE_LOCKED');
        const expected = Buffer.from(row.delivery_code_hash, 'hex');
        const given = Buffer.from(this.hashCode(row.id, body.deliveryCode), 'hex');
        if (!timingSafeEqual(expected, given)) {
          throw forbidden('Delivery code is incorrect', 'DELIVERY_CODE_INVALID');
        }
      },
    });
  }

  /** Hands an ASSIGNED package back (its driver before pickup, or an admin): PENDING again, back in dispatch. */
  async release(id: string, auth: AuthContext, reason: string | null): Promise<PackageResponse> {
    const row = await this.repo.load(id);
    if (!row || !PackageService.canSee(row, auth) || (auth.role !== 'ADMIN' && auth.userId !== row.driver_id)) throw packageNotFound();
    return this.respond(await this.lifecycle.release(row, 'ASSIGNED', 'PENDING', auth.userId, reason));
  }

  private async move(id: string, auth: AuthContext, to: PackageStatus, options: MoveOptions = {}): Promise<PackageResponse> {
    return this.respond(await this.moveRow(id, auth, to, options));
  }

  private async moveRow(id: string, auth: AuthContext, to: PackageStatus, options: MoveOptions = {}): Promise<PackageRow> {
    const row = await this.repo.load(id);
    if (!row || !PackageService.canSee(row, auth)) throw packageNotFound();
    const event = this.lifecycle.check(row.status, to, PackageService.actorFor(row, auth));
    await options.before?.(row);
    const { reason, recipientName } = options;
    return this.lifecycle.transition(row, to, event, auth.userId, { reason, recipientName, set: options.set?.(row) });
  }

  private hashCode(packageId: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${packageId}:${code}`).digest('hex');
  }
}
