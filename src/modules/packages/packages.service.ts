// Package deliveries: the lifecycle (section 9), and the service's face for creation and reads
// (package-creation.ts, package-reads.ts); what a caller sees of a package is package-views.ts.
import { timingSafeEqual } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { FailReasonCode, PackageStatus, StopJson } from '../../db/tables/jobs.js';
import { json } from '../../db/json.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { ClaimFirst, type RecordAnswer } from '../../shared/record-answer.js';
import { badRequest, conflict, forbidden, notFound } from '../../shared/errors.js';
import type { DriverIndex } from '../matching/driver-index.js';
import { cancellationFeeFor, priceColumns, type JobPricing } from '../jobs/job-price.js';
import { JobLifecycle, type DispatchHooks, type JobChangeWatcher } from '../jobs/lifecycle.js';
import { findDriver } from '../jobs/references.repository.js';
import { moneyFacts, type JobMoneyHook } from '../jobs/job-money.js';
import { recordDeliveryEvent } from '../webhooks/outbox.js';
import type { OutboxRepository } from '../webhooks/outbox.repository.js';
import type { SchedulingService } from '../scheduling/scheduling.service.js';
import type { WindowRules } from '../scheduling/windows.js';
import { FINAL_PACKAGE_STATUSES, PACKAGE_TRANSITIONS, type PackageActor } from './package-status.js';
import { DeliveryCodes, PackageCreation, type RecipientNotifier } from './package-creation.js';
import { PackageReads } from './package-reads.js';
import type { SlaOf } from './package-views.js';
import { PackagePayments } from './package-payments.js';
import { PackagePaymentsRepository } from './package-payments.repository.js';
import type { JobPaymentsPort } from '../payments/payment-port.js';
import {
  actorFor,
  canSee,
  missingProof,
  packageNotFound,
  PackagePresenter,
  type PackageView,
  type TrackingLinks,
} from './package-views.js';
import type { PackageRow, PackagesRepository } from './packages.repository.js';
import type {
  CreatePackageBody,
  FullPackage,
  PackageListQuery,
  PackageResponse,
  ReattemptBody,
} from './packages.schemas.js';
import type { FollowUpsRepository } from './follow-ups.repository.js';
import { PackageFollowUps } from './package-follow-ups.js';
import type { StatementQuery } from './statement.schemas.js';

export type { RecipientNotifier } from './package-creation.js';

const MAX_DELIVERY_CODE_ATTEMPTS = 5;

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
  /** The webhook outbox (built once in services.ts). */
  outbox: OutboxRepository;
  /** Windows (contract section 22): their rules, and the wake-up of a scheduled package. */
  windows: WindowRules;
  scheduling?: Pick<SchedulingService, 'plan' | 'planned' | 'neverDispatched'>;
  /** Each active package's `sla` (contract section 23, alerts/). */
  sla?: SlaOf;
  /** The failed package a re-attempt or return comes from, under lock (contract section 23). */
  followUps: FollowUpsRepository;
  /** M-Pesa collections (section 26), when configured: the first prompt opened at creation. */
  payments?: JobPaymentsPort;
}

type MoveOptions = {
  /** A driver's step that may go in one statement without reading the package first (JobLifecycle.step). */
  direct?: { deliverable?: boolean };
  reason?: string;
  reasonCode?: FailReasonCode;
  recipientName?: string;
  before?: (row: PackageRow) => Promise<void>;
  set?: (row: PackageRow) => { cancellation_fee?: number | null; cash_collected?: number | null };
  /** A keyed request's answer, stored in the change's transaction (Idempotency-Key). */
  record?: RecordAnswer;
  /** In the change's transaction: true leaves the webhook event out. */
  quiet?: (trx: Transaction<Database>) => Promise<boolean>;
};

export class PackageService {
  private readonly codes: DeliveryCodes;
  private readonly lifecycle: JobLifecycle<
    PackageStatus,
    PackageActor,
    (typeof PACKAGE_TRANSITIONS)[number]['event'],
    PackageRow
  >;
  private readonly repo: PackagesRepository;
  private readonly presenter: PackagePresenter;
  private readonly creation: PackageCreation;
  private readonly reads: PackageReads;
  private readonly followUps: PackageFollowUps;
  /** What the payments module asks of packages (jobs/payment-port.ts). */
  readonly payable: PackagePayments;

  constructor(private readonly deps: PackageServiceDeps) {
    this.codes = new DeliveryCodes(deps.secret);
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
        recordDeliveryEvent(
          trx,
          { packageId: c.jobId, businessId: c.businessId, event: c.event, status: c.status, occurredAt: c.at },
          deps.outbox,
        ),
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
    this.presenter = new PackagePresenter(deps);
    this.creation = new PackageCreation({
      ...deps,
      codes: this.codes,
      presenter: this.presenter,
      offerNearby: (job) => this.lifecycle.offerNearby(job),
    });
    this.reads = new PackageReads({ ...deps, presenter: this.presenter });
    this.followUps = new PackageFollowUps({ ...deps, creation: this.creation });
    this.payable = new PackagePayments({
      ...deps,
      repo: new PackagePaymentsRepository(),
      offer: (row) =>
        this.lifecycle.offerNearby({
          id: row.id,
          vehicleType: row.vehicle_type,
          lat: row.pickup_lat,
          lng: row.pickup_lng,
          parcelSize: json<{ size?: string }>(row.parcel as never).size ?? null,
        }),
      cancel: async (id, reason, inTransaction) => {
        const row = await this.repo.load(id);
        if (!row || row.status !== 'PENDING') return false;
        await this.lifecycle.transition(row, 'CANCELLED', 'delivery.cancelled', row.created_by, {
          reason,
          set: { cancellation_fee: null },
          answer: (trx) => inTransaction(trx),
        });
        return true;
      },
    });
  }

  close(): void {
    this.reads.close();
  }

  /**
   * A scheduled package entering dispatch (in its wake-up's transaction) is priced now, with the
   * tariff and surge of the moment, unless a quote locked its price (contract section 22).
   */
  async repriceScheduled(trx: Transaction<Database>, id: string): Promise<boolean> {
    const row = await this.repo.pricingFacts(trx, id);
    if (!row || row.status !== 'PENDING' || row.quote_id !== null) return false;
    const price = await this.deps.pricing.priceWithoutQuote(
      {
        kind: 'PACKAGE',
        pickup: json<StopJson>(row.pickup).location,
        dropoff: json<StopJson>(row.dropoff).location,
        vehicleType: row.vehicle_type,
        countryId: row.country_id,
      },
      trx,
    );
    await this.repo.setPrice(trx, id, priceColumns(price));
    return true;
  }

  respond(row: PackageRow): FullPackage {
    return this.presenter.respond(row);
  }

  /** A keyed driver's step replayed: the row its statement stored with the key, as the step answered it. */
  presentStored(row: string, auth: AuthContext): PackageResponse {
    return this.present(this.repo.storedRow(row), auth);
  }

  getJson(id: string, auth: AuthContext): Promise<string> {
    return this.reads.getJson(id, auth);
  }

  list(auth: AuthContext, query: PackageListQuery) {
    return this.reads.list(auth, query);
  }

  statement(auth: AuthContext, query: StatementQuery) {
    return this.reads.statement(auth, query);
  }

  create(trx: Transaction<Database>, auth: AuthContext, body: CreatePackageBody) {
    return this.creation.create(trx, auth, body);
  }

  /** A new PENDING package re-attempting a FAILED one (its creator or an admin; contract section 23). */
  reattempt(trx: Transaction<Database>, auth: AuthContext, id: string, body: ReattemptBody) {
    return this.followUps.reattempt(trx, auth, id, body);
  }

  /** A new package taking a FAILED one back from its drop-off to its pickup, priced by the tariff's returnRate. */
  returnToSender(trx: Transaction<Database>, auth: AuthContext, id: string, body: ReattemptBody) {
    return this.followUps.return(trx, auth, id, body);
  }

  announce(pkg: FullPackage): number {
    return this.creation.announce(pkg);
  }

  /** The package as this caller sees it after an action of its own (FULL unless `view` says less). */
  present(row: PackageRow, auth: AuthContext, view: PackageView = 'FULL'): PackageResponse {
    return this.presenter.present(row, auth, view);
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
    if (auth.role === 'COMPANY' && row.status !== 'PENDING' && !canSee(row, auth)) throw packageNotFound();
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
    // Section 26: a package paid by M-Pesa goes to a driver only once paid.
    if (row.payment_method === 'MPESA' && row.payment_state !== 'PAID')
      throw conflict('This package waits for its M-Pesa payment', 'PAYMENT_PENDING');
    const view = actor === 'COMPANY' ? 'NO_LINK' : 'FULL';
    // An admin may give a package back to a driver who released it (say, after a mistaken release); nobody else.
    const assigned = await this.lifecycle.assign(row, 'ASSIGNED', event, driverId, actorId, {
      allowReleased: actor === 'ADMIN',
      answer: this.answer(auth, record, view),
    });
    return this.present(assigned, auth, view);
  }

  pickup(id: string, auth: AuthContext, record?: RecordAnswer) {
    return this.move(id, auth, 'PICKED_UP', { record, direct: {} });
  }

  async start(id: string, auth: AuthContext, record?: RecordAnswer) {
    const row = await this.moveRow(id, auth, 'IN_TRANSIT', { record, direct: {} });
    const started = this.respond(row);
    if (row.notify_recipient) {
      const { contactPhone: phone, contactLocale } = started.dropoff;
      const to = { phone, contactLocale, creatorId: row.created_by, countryId: row.country_id };
      this.deps.notifier?.notify('IN_TRANSIT', to, started.trackingUrl);
    }
    return this.present(row, auth);
  }

  /** A failed delivery with its reason code (contract section 23): free text alone means OTHER. */
  fail(id: string, auth: AuthContext, body: { reason?: string; reasonCode?: FailReasonCode }, record?: RecordAnswer) {
    if (body.reason === undefined && body.reasonCode === undefined)
      throw badRequest('body must have reason or reasonCode', 'VALIDATION_FAILED');
    const reasonCode = body.reasonCode ?? 'OTHER';
    return this.move(id, auth, 'FAILED', { reason: body.reason, reasonCode, record, direct: {} });
  }

  cancel(id: string, auth: AuthContext, reason: string | undefined, record?: RecordAnswer) {
    return this.cancelWith(id, auth, { reason, record });
  }

  private cancelWith(id: string, auth: AuthContext, options: Pick<MoveOptions, 'reason' | 'record' | 'quiet'>) {
    return this.move(id, auth, 'CANCELLED', {
      ...options,
      set: (row) => ({
        cancellation_fee: cancellationFeeFor(this.deps.pricing, row, {
          cancelledBy: actorFor(row, auth) === 'CREATOR' ? 'CREATOR' : 'ADMIN',
          afterAssignment: row.status !== 'PENDING',
        }),
      }),
    });
  }

  /**
   * A recurring occurrence cancelled by its template's pause, skip, edit or delete (contract section 22):
   * as a cancellation by its business, except that `delivery.cancelled` is not sent while the package
   * has never entered dispatch (decided in the cancellation's transaction).
   */
  cancelOccurrence(id: string, auth: AuthContext, reason: string) {
    const scheduling = this.deps.scheduling;
    return this.cancelWith(id, auth, {
      reason,
      quiet: scheduling ? (trx) => scheduling.neverDispatched(trx, id) : undefined,
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
      // Without a code, cash on delivery or missing proof (guarded in the statement): nothing below to check.
      direct: { deliverable: true },
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
        if (!(await this.repo.reserveCodeAttempt(this.deps.db, row.id, MAX_DELIVERY_CODE_ATTEMPTS)))
          throw forbidden('Too many wrong delivery codes; contact support', 'DELIVERY_CODE_LOCKED');
        const expected = Buffer.from(row.delivery_code_hash, 'hex');
        const given = Buffer.from(this.codes.hash(row.id, body.deliveryCode), 'hex');
        if (!timingSafeEqual(expected, given)) {
          throw forbidden('Delivery code is incorrect', 'DELIVERY_CODE_INVALID');
        }
      },
    });
  }

  /** Hands an ASSIGNED package back (its driver before pickup, or an admin): PENDING again, back in dispatch. */
  async release(id: string, auth: AuthContext, reason: string | null, record?: RecordAnswer): Promise<PackageResponse> {
    const row = await this.repo.load(id);
    if (!row || !canSee(row, auth) || (auth.role !== 'ADMIN' && auth.userId !== row.driver_id)) throw packageNotFound();
    return this.present(
      await this.lifecycle.release(row, 'ASSIGNED', 'PENDING', auth.userId, reason, this.answer(auth, record)),
      auth,
    );
  }

  /** Stores a keyed request's answer (the package as `present` shows it) in the change's transaction. */
  private answer(auth: AuthContext, record: RecordAnswer | undefined, view: PackageView = 'FULL') {
    return (
      record && (async (trx: Transaction<Database>, row: PackageRow) => record(trx, this.present(row, auth, view)))
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
    const { record } = options;
    if (options.direct && auth.role === 'DRIVER' && !record?.afterInline) {
      // The assigned driver's step, guarded in its one statement; when the guard does not hold, the
      // full path below reads the package and answers as it always did (404, 403, 409, the checks).
      // A keyed request offered to claim its key in that statement (record.inline) stores nothing else.
      const rule = PACKAGE_TRANSITIONS.find((r) => r.to === to && r.actors.includes('ASSIGNED_DRIVER'))!;
      const moved = await this.lifecycle.step(id, to, rule.event, auth.userId, {
        from: rule.from,
        reason: options.reason,
        reasonCode: options.reasonCode,
        recipientName: options.recipientName,
        deliverable: options.direct.deliverable,
        ...(record?.inline ? { claim: record.inline } : { answer: this.answer(auth, record) }),
      });
      if (moved) return moved;
    }
    // Nothing written: the key is claimed as usual, and the work runs again with the full path.
    if (record?.inline) throw new ClaimFirst();
    const row = await this.repo.load(id);
    if (!row || !canSee(row, auth)) throw packageNotFound();
    const event = this.lifecycle.check(row.status, to, actorFor(row, auth));
    await options.before?.(row);
    const { reason, reasonCode, recipientName } = options;
    return this.lifecycle.transition(row, to, event, auth.userId, {
      reason,
      reasonCode,
      recipientName,
      set: options.set?.(row),
      answer: this.answer(auth, options.record),
      quiet: options.quiet,
    });
  }
}
