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
import type { RecordAnswer } from '../../shared/record-answer.js';
import { badRequest, conflict, forbidden, notFound } from '../../shared/errors.js';
import { decodeCursor, toRowPage } from '../../shared/pagination.js';
import type { DriverIndex } from '../matching/driver-index.js';
import { json } from '../../db/json.js';
import {
  cancellationFeeFor,
  cancellationFeeNow,
  money,
  priceColumns,
  priceNewJob,
  viewerMoney,
  type JobPricing,
} from '../jobs/job-price.js';
import { isDriverSide, jobFields, JobLifecycle, type DispatchHooks, type JobChangeWatcher } from '../jobs/lifecycle.js';
import { countryMoney, customerExists, findDriver } from '../jobs/references.repository.js';
import { jobEarnings, moneyFacts, seesEarnings, type JobMoneyHook } from '../jobs/job-money.js';
import { recordDeliveryEvent } from '../webhooks/outbox.js';
import {
  checkPackageTransition,
  FINAL_PACKAGE_STATUSES,
  PACKAGE_TRANSITIONS,
  type PackageActor,
} from './package-status.js';
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
  /** Told of each status change after commit (push notifications). */
  watcher?: JobChangeWatcher;
  /** Tracking links (modules/tracking): shown on every read, only their hash stored. */
  links: TrackingLinks;
  /** Sends the drop-off contact its tracking link (notifyRecipient). */
  notifier?: RecipientNotifier;
  /** Books the money of a package's end in its transaction and reads its tips (jobs/job-money-hook.ts). */
  money?: JobMoneyHook;
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
  set?: (row: PackageRow) => { cancellation_fee?: number | null; cash_collected?: number | null };
  /** A keyed request's answer, stored in the change's transaction (Idempotency-Key). */
  record?: RecordAnswer;
};

/** The columns the viewer-dependent fields (cash on delivery, earnings) are computed from: both reads have them. */
type MoneyRow = Pick<
  PackageRow,
  | 'id'
  | 'status'
  | 'created_by'
  | 'driver_id'
  | 'driver_company_id'
  | 'payment_method'
  | 'commission_rate'
  | 'price_amount'
  | 'price_currency'
  | 'price_breakdown'
  | 'price_inputs'
  | 'cancellation_fee'
  | 'cod_amount'
  | 'cash_collected'
> & { tip_amount: number | null; tip_currency: string | null };
/** text[] as the driver returns it: an array (pg, PGlite), or the literal '{PHOTO,SIGNATURE}'. */
export function proofKinds(value: ProofKind[] | string): ProofKind[] {
  if (Array.isArray(value)) return value;
  return value
    .replace(/^\{|\}$/g, '')
    .split(',')
    .filter((kind): kind is ProofKind => kind === 'PHOTO' || kind === 'SIGNATURE');
}

/** The `proof` field: API paths to the images (served with the bearer header), never public links. */
export function proofOf(
  row: Pick<PackageRow, 'id' | 'proof_photo_key' | 'proof_signature_key' | 'proof_recipient_name' | 'proof_at'>,
): ProofJson | null {
  if (!row.proof_at) return null;
  return {
    ...(row.proof_photo_key ? { photoUrl: `/api/packages/${row.id}/proof/photo` } : {}),
    ...(row.proof_signature_key ? { signatureUrl: `/api/packages/${row.id}/proof/signature` } : {}),
    ...(row.proof_recipient_name !== null ? { recipientName: row.proof_recipient_name } : {}),
    at: row.proof_at.toISOString(),
  };
}

/** The proof a package requires that its driver has not sent yet. */
export function missingProof(
  row: Pick<PackageRow, 'proof_required' | 'proof_photo_key' | 'proof_signature_key'>,
): ProofKind[] {
  return proofKinds(row.proof_required).filter((kind) =>
    kind === 'PHOTO' ? !row.proof_photo_key : !row.proof_signature_key,
  );
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
  private readonly readCache = new LRUCache<string, { row: ShownJsonRow; readAt: number }>({
    max: READ_CACHE_MAX,
    ttl: READ_CACHE_TTL_NO_DRIVER_MS,
  });
  /** Bumped by every invalidation: a read that overlapped a change is not cached. */
  private cacheEpoch = 0;
  private readonly unsubscribe: () => void;
  private readonly lifecycle: JobLifecycle<
    PackageStatus,
    PackageActor,
    (typeof PACKAGE_TRANSITIONS)[number]['event'],
    PackageRow
  >;
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
      inTransaction: (trx, c) =>
        recordDeliveryEvent(trx, {
          packageId: c.jobId,
          businessId: c.businessId,
          event: c.event,
          status: c.status,
          occurredAt: c.at,
        }),
      afterCommit: () => deps.bus.publish('webhooks.wake', {}),
      moneyFacts: (row) =>
        moneyFacts('PACKAGE', row, {
          payer: row.business_id
            ? { kind: 'BUSINESS', partyId: row.business_id }
            : { kind: 'CUSTOMER', partyId: row.created_by },
          amount: row.price_amount,
          cashOnDelivery:
            row.cod_amount !== null && row.business_id ? { amount: row.cod_amount, businessId: row.business_id } : null,
        }),
    });
    const offChanged = deps.bus.subscribe('job.changed', ({ jobType, jobId }) => {
      if (jobType !== 'PACKAGE') return;
      this.cacheEpoch += 1;
      this.readCache.delete(jobId);
    });
    // A tip or a rating changes what a package shows (the tip, the driver's rating).
    const offAnnotated = deps.bus.subscribe('job.annotated', ({ jobType, jobId }) => {
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
      offAnnotated();
      offRotated();
      offProof();
      offResync();
    };
  }

  close(): void {
    this.unsubscribe();
    this.readCache.clear();
  }

  static canSee(
    row: Pick<PackageRow, 'created_by' | 'customer_id' | 'driver_id' | 'driver_company_id'>,
    auth: AuthContext,
  ): boolean {
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
      paymentMethod: row.payment_method,
      proofRequired: proofKinds(row.proof_required),
      proof: proofOf(row),
      trackingUrl,
    };
  }

  /**
   * The fields that depend on who reads (section 21): cash on delivery and what was collected (not to a
   * customer: the business, its driver's side and admins), earnings (the driver's side and admins only).
   * `tips` holds the package's tip when the caller sees earnings.
   */
  static moneyFields(row: MoneyRow, auth: AuthContext, tips: Map<string, number>) {
    const cod =
      auth.role === 'CUSTOMER'
        ? {}
        : {
            cashOnDelivery: money(row.cod_amount, row.price_currency),
            cashCollected: money(row.cash_collected, row.price_currency),
          };
    const earnings = seesEarnings(row, auth) ? jobEarnings(row, row.price_amount, tips.get(row.id) ?? 0) : null;
    return { ...cod, ...(earnings ? { earnings } : {}) };
  }

  /** The tips of the packages whose earnings this caller sees: the `tips` row each read joins (booked in its transaction with the ledger's entries). */
  private tipsFor(rows: MoneyRow[], auth: AuthContext): Map<string, number> {
    return new Map(
      rows.filter((r) => r.driver_id !== null && seesEarnings(r, auth)).map((r) => [r.id, r.tip_amount ?? 0]),
    );
  }

  /** The package as this caller sees it after an action of its own, with the viewer-dependent fields. */
  private async present(row: PackageRow, auth: AuthContext, view: PackageView = 'FULL'): Promise<PackageResponse> {
    const body = { ...PackageService.shown(this.respond(row), view), ...this.moneyFor(row, auth) };
    if (view === 'OPEN') return body;
    return { ...body, ...PackageService.moneyFields(row, auth, this.tipsFor([row], auth)) };
  }

  /** The tip and cancellationFeeNow as this viewer may see them (contract section 20). */
  private moneyFor(row: MoneyRow, auth: AuthContext) {
    return viewerMoney(
      { creatorId: row.created_by, driverId: row.driver_id, driverCompanyId: row.driver_company_id },
      auth,
      {
        tip: money(row.tip_amount, row.tip_currency),
        cancellationFeeNow: cancellationFeeNow(this.deps.pricing, row, {
          creatorMayCancel: checkPackageTransition(row.status, 'CANCELLED', 'CREATOR').ok,
          afterAssignment: row.status !== 'PENDING',
        }),
      },
    );
  }

  respond(row: PackageRow): FullPackage {
    return PackageService.toResponse(row, this.deps.links.url(row.id, row.tracking_nonce));
  }

  /** The package as this caller may see it. */
  respondTo(row: PackageRow, auth: AuthContext): PackageResponse {
    return {
      ...PackageService.shown(this.respond(row), PackageService.viewFor(row, auth)),
      ...this.moneyFor(row, auth),
    };
  }

  /** The JSON text built by PostgreSQL, with the tracking link (derived from a secret) added here. */
  private withTrackingUrl(row: PackageJsonRow): ShownJsonRow {
    const url = JSON.stringify(this.deps.links.url(row.id, row.tracking_nonce));
    const linkAt = row.body.length - 1;
    return { ...row, body: `${row.body.slice(0, linkAt)},"trackingUrl":${url}}`, linkAt };
  }

  /** The cached text as this caller may read it (a company reading by id is always its driver's company). */
  private async jsonFor(row: ShownJsonRow, auth: AuthContext): Promise<string> {
    if (!PackageService.canSee(row, auth)) throw packageNotFound();
    const tips = this.tipsFor([row], auth);
    const extra = Object.entries({ ...this.moneyFor(row, auth), ...PackageService.moneyFields(row, auth, tips) })
      .map(([key, value]) => `,"${key}":${JSON.stringify(value)}`)
      .join('');
    const head = row.body.slice(0, row.linkAt);
    return PackageService.viewFor(row, auth) === 'FULL'
      ? `${head}${extra}${row.body.slice(row.linkAt)}`
      : `${head}${extra}}`;
  }

  /** GET /packages/:id: the package as JSON text (see PACKAGE_JSON_BY_IDS), from the read cache when it can. */
  async getJson(id: string, auth: AuthContext): Promise<string> {
    const cached = this.readCache.get(id);
    // While changes elsewhere may go unannounced (Redis away), only an entry read within the last second serves.
    if (cached && (this.deps.bus.reliable || performance.now() - cached.readAt <= READ_CACHE_TTL_MS))
      return this.jsonFor(cached.row, auth);
    const epoch = this.cacheEpoch;
    const readAt = performance.now();
    const stored = await this.repo.loadJson(id);
    if (!stored) throw packageNotFound();
    const row = this.withTrackingUrl(stored);
    // (The cache's lifetimes run on a monotonic clock; business time is deps.clock.)
    if (epoch === this.cacheEpoch)
      this.readCache.set(id, { row, readAt }, { ttl: row.driver_id ? READ_CACHE_TTL_MS : READ_CACHE_TTL_NO_DRIVER_MS });
    return this.jsonFor(row, auth);
  }

  async list(auth: AuthContext, query: PackageListQuery) {
    const limit = query.limit ?? 20;
    const rows = await this.repo.list(auth, { status: query.status, cursor: decodeCursor(query.cursor), limit });
    const tips = this.tipsFor(rows.slice(0, limit), auth);
    // The query returns only what the caller may list (a company: its drivers' packages, and the PENDING ones of its country).
    return toRowPage(rows, limit, (r) => {
      const view = PackageService.viewFor(r, auth);
      const body = { ...PackageService.shown(this.respond(r), view), ...this.moneyFor(r, auth) };
      return view === 'OPEN' ? body : { ...body, ...PackageService.moneyFields(r, auth, tips) };
    });
  }

  /** GET /businesses/me/statement: the caller's own packages only. */
  statement(auth: AuthContext, query: StatementQuery) {
    return buildStatement(this.repo, auth.userId, query);
  }

  async create(trx: Transaction<Database>, auth: AuthContext, body: CreatePackageBody) {
    for (const [field, stop] of [
      ['pickup', body.pickup],
      ['dropoff', body.dropoff],
    ] as const) {
      if (!isValidPhoneNumber(stop.contactPhone))
        throw badRequest(`body.${field}.contactPhone must be a valid phone number`);
    }
    let customerId: string | null = body.customerId ?? null;
    if (auth.role === 'CUSTOMER') {
      if (customerId !== null && customerId !== auth.userId) {
        throw forbidden('A customer may only name itself as customerId', 'CUSTOMER_MISMATCH');
      }
      customerId = auth.userId;
    }
    const country = await countryMoney(trx, body.countryId);
    if (!country) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    const { paymentMethod, codAmount } = PackageService.payment(auth, body, country.cod_max);
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

    const commissionRate = await this.deps.pricing.commissionRate(body.countryId, body.vehicleType, trx);
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
      payment_method: paymentMethod,
      commission_rate: commissionRate,
      cod_amount: codAmount,
      proof_required: `{${(body.proofRequired ?? []).join(',')}}`,
      created_at: now,
      updated_at: now,
    });
    if (body.notifyRecipient) this.notifyOnAnnounce.set(id, true);
    await this.repo.addHistory(trx, id, { status: 'PENDING', reason: null, actorId: auth.userId, at: now });
    await this.deps.dispatch?.enroll(trx, {
      jobType: 'PACKAGE',
      jobId: id,
      vehicleType: body.vehicleType,
      ...body.pickup.location,
      at: now,
    });
    const row = (await this.repo.load(id, trx))!;
    return {
      ...this.respond(row),
      ...this.moneyFor(row, auth),
      ...PackageService.moneyFields(row, auth, new Map()),
      ...(deliveryCode ? { deliveryCode } : {}),
    };
  }

  /**
   * How a new package is paid (section 21): a customer's is CASH only (no payment provider yet), a
   * business's ACCOUNT unless it asks for CASH; cash on delivery for a business only, 1 to the
   * country's codMax in its currency's minor unit.
   */
  static payment(auth: AuthContext, body: Pick<CreatePackageBody, 'paymentMethod' | 'cashOnDelivery'>, codMax: number) {
    if (auth.role === 'CUSTOMER') {
      if (body.paymentMethod !== undefined && body.paymentMethod !== 'CASH') {
        throw badRequest("A customer's job is paid in cash: paymentMethod must be CASH", 'PAYMENT_METHOD_NOT_ALLOWED');
      }
      if (body.cashOnDelivery !== undefined)
        throw badRequest('Cash on delivery is for business packages only', 'CASH_ON_DELIVERY_NOT_ALLOWED');
      return { paymentMethod: 'CASH' as const, codAmount: null };
    }
    const amount = body.cashOnDelivery?.amount;
    if (amount !== undefined && amount > codMax) {
      throw badRequest(
        `body.cashOnDelivery.amount must be at most ${codMax} (the country's codMax, in minor units)`,
        'CASH_ON_DELIVERY_TOO_LARGE',
      );
    }
    return { paymentMethod: body.paymentMethod ?? 'ACCOUNT', codAmount: amount ?? null };
  }

  announce(pkg: FullPackage): number {
    // Here, not in create: after commit, and not again for an idempotent replay.
    if (this.notifyOnAnnounce.delete(pkg.id))
      this.deps.notifier?.notify('CREATED', pkg.dropoff.contactPhone, pkg.trackingUrl);
    const { lat, lng } = pkg.pickup.location;
    return this.lifecycle.offerNearby({
      id: pkg.id,
      vehicleType: pkg.vehicleType,
      lat,
      lng,
      parcelSize: pkg.parcel.size ?? null,
    });
  }

  async accept(id: string, auth: AuthContext, record?: RecordAnswer): Promise<PackageResponse> {
    const row = await this.repo.load(id);
    // A PENDING package is offered to every eligible driver, so losing the race is a 409, not a 404.
    if (!row) throw packageNotFound();
    return this.assignTo(row, auth.userId, 'DRIVER', auth, record);
  }

  async assign(id: string, auth: AuthContext, driverId: string): Promise<PackageResponse> {
    const row = await this.repo.load(id);
    if (!row) throw packageNotFound();
    if (auth.role === 'COMPANY' && row.status !== 'PENDING' && !PackageService.canSee(row, auth))
      throw packageNotFound();
    const driver = await findDriver(this.deps.db, driverId);
    if (!driver || (auth.role === 'COMPANY' && driver.company_id !== auth.userId))
      throw notFound('Driver not found', 'DRIVER_NOT_FOUND');
    return this.assignTo(row, driverId, auth.role === 'ADMIN' ? 'ADMIN' : 'COMPANY', auth);
  }

  private async assignTo(
    row: PackageRow,
    driverId: string,
    actor: PackageActor,
    auth: AuthContext,
    record?: RecordAnswer,
  ): Promise<PackageResponse> {
    const actorId = auth.userId;
    const event = this.lifecycle.check(row.status, 'ASSIGNED', actor);
    const view = actor === 'COMPANY' ? 'NO_LINK' : 'FULL';
    // An admin may give a package back to a driver who released it (say, after a mistaken release); nobody else.
    const assigned = await this.lifecycle.assign(row, 'ASSIGNED', event, driverId, actorId, {
      allowReleased: actor === 'ADMIN',
      answer: this.answer(auth, record, view),
    });
    return this.present(assigned, auth, view);
  }

  pickup(id: string, auth: AuthContext, record?: RecordAnswer) {
    return this.move(id, auth, 'PICKED_UP', { record });
  }

  async start(id: string, auth: AuthContext, record?: RecordAnswer) {
    const row = await this.moveRow(id, auth, 'IN_TRANSIT', { record });
    const started = this.respond(row);
    if (row.notify_recipient)
      this.deps.notifier?.notify('IN_TRANSIT', started.dropoff.contactPhone, started.trackingUrl);
    return this.present(row, auth);
  }

  fail(id: string, auth: AuthContext, reason: string, record?: RecordAnswer) {
    return this.move(id, auth, 'FAILED', { reason, record });
  }

  cancel(id: string, auth: AuthContext, reason: string | undefined, record?: RecordAnswer) {
    return this.move(id, auth, 'CANCELLED', {
      reason,
      record,
      set: (row) => ({
        cancellation_fee: cancellationFeeFor(this.deps.pricing, row, {
          cancelledBy: PackageService.actorFor(row, auth) === 'CREATOR' ? 'CREATOR' : 'ADMIN',
          afterAssignment: row.status !== 'PENDING',
        }),
      }),
    });
  }

  deliver(
    id: string,
    auth: AuthContext,
    body: { deliveryCode?: string; recipientName?: string; cashCollected?: number },
    record?: RecordAnswer,
  ) {
    return this.move(id, auth, 'DELIVERED', {
      recipientName: body.recipientName,
      record,
      // What the driver confirmed is kept; the ledger books the cash on delivery itself (section 21).
      set: (row) => (row.cod_amount !== null ? { cash_collected: body.cashCollected ?? null } : {}),
      before: async (row) => {
        // Before the code: a missing photo does not cost one of the code's attempts.
        const missing = missingProof(row);
        if (missing.length) {
          throw conflict(
            `This package needs ${missing.map((k) => (k === 'PHOTO' ? 'a photo' : 'a signature')).join(' and ')} as proof of delivery first (POST /packages/:id/proof)`,
            'PROOF_REQUIRED',
          );
        }
        if (row.cod_amount !== null) {
          if (body.cashCollected === undefined) {
            throw badRequest(
              `This package has cash on delivery: send cashCollected (${row.cod_amount} ${row.price_currency ?? ''} in minor units)`.replace(
                ' )',
                ')',
              ),
              'CASH_COLLECTED_REQUIRED',
            );
          }
          if (body.cashCollected !== row.cod_amount) {
            throw conflict(
              `cashCollected (${body.cashCollected}) is not the cash on delivery (${row.cod_amount}): collect the whole amount`,
              'COD_MISMATCH',
            );
          }
        }
        if (row.delivery_code_hash === null) return;
        if (body.deliveryCode === undefined)
          throw badRequest('This package needs its deliveryCode to be delivered', 'DELIVERY_CODE_REQUIRED');
        // Reserve the attempt before comparing, in one conditional statement, so that parallel guesses
        // cannot test more codes than the limit allows.
        if (!(await this.repo.reserveCodeAttempt(row.id, MAX_DELIVERY_CODE_ATTEMPTS)))
          throw forbidden('Too many wrong delivery codes; contact support', 'DELIVERY_CODE_LOCKED');
        const expected = Buffer.from(row.delivery_code_hash, 'hex');
        const given = Buffer.from(this.hashCode(row.id, body.deliveryCode), 'hex');
        if (!timingSafeEqual(expected, given)) {
          throw forbidden('Delivery code is incorrect', 'DELIVERY_CODE_INVALID');
        }
      },
    });
  }

  /** Hands an ASSIGNED package back (its driver before pickup, or an admin): PENDING again, back in dispatch. */
  async release(id: string, auth: AuthContext, reason: string | null, record?: RecordAnswer): Promise<PackageResponse> {
    const row = await this.repo.load(id);
    if (!row || !PackageService.canSee(row, auth) || (auth.role !== 'ADMIN' && auth.userId !== row.driver_id))
      throw packageNotFound();
    return this.present(
      await this.lifecycle.release(row, 'ASSIGNED', 'PENDING', auth.userId, reason, this.answer(auth, record)),
      auth,
    );
  }

  /** Stores a keyed request's answer (the package as `present` shows it) in the change's transaction. */
  private answer(auth: AuthContext, record: RecordAnswer | undefined, view: PackageView = 'FULL') {
    return (
      record &&
      (async (trx: Transaction<Database>, row: PackageRow) => record(trx, await this.present(row, auth, view)))
    );
  }

  private async move(
    id: string,
    auth: AuthContext,
    to: PackageStatus,
    options: MoveOptions = {},
  ): Promise<PackageResponse> {
    return this.present(await this.moveRow(id, auth, to, options), auth);
  }

  private async moveRow(
    id: string,
    auth: AuthContext,
    to: PackageStatus,
    options: MoveOptions = {},
  ): Promise<PackageRow> {
    const row = await this.repo.load(id);
    if (!row || !PackageService.canSee(row, auth)) throw packageNotFound();
    const event = this.lifecycle.check(row.status, to, PackageService.actorFor(row, auth));
    await options.before?.(row);
    const { reason, recipientName } = options;
    return this.lifecycle.transition(row, to, event, auth.userId, {
      reason,
      recipientName,
      set: options.set?.(row),
      answer: this.answer(auth, options.record),
    });
  }

  private hashCode(packageId: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${packageId}:${code}`).digest('hex');
  }
}
