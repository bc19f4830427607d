// The lifecycle packages and rides share: a conditional status change, the driver's claim or release,
// the history row and the kind's in-transaction work in one transaction; `job.changed` after commit.
import type { Transaction } from 'kysely';
import type { DB } from '../../db/database.js';
import type { FailReasonCode } from '../../db/tables/jobs.js';
import type { Database, VehicleType } from '../../db/schema.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, conflict, forbidden } from '../../shared/errors.js';
import type { DriverIndex } from '../matching/driver-index.js';
import { claimDriver, explainClaimFailure, pushNearbyJob, releaseDriver } from './driver-claims.js';
import { mayBook, type JobMoneyHook } from './job-money.js';
import { recordRelease, releaseCount, releasedBy } from './job-releases.repository.js';
import { checkTransition } from './transitions.js';
import type { InlineClaim } from '../../shared/record-answer.js';
import type {
  AnswerHook,
  DispatchHooks,
  JobChangeWatcher,
  JobKind,
  JobRow,
  StatusChange,
  StatusSet,
} from './lifecycle-types.js';

export * from './lifecycle-types.js';
export { dispatchField, isDriverSide, jobFields } from './job-fields.js';

type Trx = Transaction<Database>;

export class JobLifecycle<S extends string, A extends string, E extends string, Row extends JobRow<S>> {
  constructor(
    private readonly deps: {
      db: DB;
      bus: Bus;
      clock: Clock;
      driverIndex: DriverIndex;
      driverLocationTtlMs: number;
      dispatch?: DispatchHooks;
      watcher?: JobChangeWatcher;
      money?: JobMoneyHook;
    },
    private readonly kind: JobKind<S, A, E, Row>,
  ) {}

  invalidTransition(status: string): AppError {
    const noun = this.kind.noun;
    return conflict(`${noun[0]!.toUpperCase()}${noun.slice(1)} is ${status}`, 'INVALID_STATUS_TRANSITION');
  }

  private releasedBefore(byCaller: boolean): AppError {
    const noun = this.kind.noun;
    return byCaller
      ? conflict(`You released this ${noun}: it cannot be yours again`, 'JOB_RELEASED_BY_YOU')
      : conflict(`This driver released this ${noun}: it cannot be theirs again`, 'JOB_RELEASED_BY_DRIVER');
  }

  check(from: S, to: S, actor: A): E {
    const check = checkTransition(this.kind.transitions, from, to, actor);
    if (check.ok) return check.event;
    if (check.reason === 'STATUS') throw this.invalidTransition(from);
    throw forbidden(`You may not move this ${this.kind.noun} to ${to}`, 'ACTION_NOT_ALLOWED');
  }

  /** A new job: offered to one driver (DISPATCH_MODE=offer), pushed to the nearby drivers (broadcast), or neither (off). */
  offerNearby(job: {
    id: string;
    vehicleType: VehicleType;
    lat: number;
    lng: number;
    parcelSize: string | null;
  }): number {
    const { driverIndex, bus, clock, driverLocationTtlMs, dispatch } = this.deps;
    if (dispatch?.mode === 'offer') {
      dispatch.kick(this.kind.jobType, job.id);
      return 0;
    }
    if (dispatch?.mode === 'off') return 0;
    return pushNearbyJob(
      { index: driverIndex, bus, now: clock.now(), locationTtlMs: driverLocationTtlMs },
      {
        jobType: this.kind.jobType,
        jobId: job.id,
        orderType: this.kind.orderType,
        vehicleType: job.vehicleType,
        lat: job.lat,
        lng: job.lng,
        parcelSize: job.parcelSize,
      },
    );
  }

  /**
   * Gives the job to a driver, who must be free and fit it (claimed in the same transaction) and must
   * not have released it before, unless an admin decides so (`allowReleased`).
   */
  async assign(
    row: Row,
    to: S,
    event: E,
    driverId: string,
    actorId: string,
    options: {
      createdAfter?: Date;
      missed?: (current: S) => string;
      allowReleased?: boolean;
      answer?: AnswerHook<Row>;
    } = {},
  ): Promise<Row> {
    const { store } = this.kind;
    const now = this.deps.clock.now();
    const claim = {
      driverId,
      jobType: this.kind.jobType,
      jobId: row.id,
      vehicleType: row.vehicle_type,
      orderType: this.kind.orderType,
    };
    let businessId: string | null = null;
    let after: (() => void) | undefined;
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      // The job first, then the driver: every transaction locks in this order, so none deadlock.
      const history = { status: to, reason: null, actorId, at: now };
      const moved = await store.updateStatus(
        trx,
        row.id,
        row.status,
        { status: to, driver_id: driverId, updated_at: now },
        { history },
        options.createdAfter,
      );
      if (!moved) {
        const current = await store.currentStatus(trx, row.id);
        throw this.invalidTransition(options.missed?.(current) ?? current);
      }
      // Read after the job's row is locked: a release that committed first is seen (section 13, Releases).
      if (!options.allowReleased && (await releasedBy(trx, row.id, driverId)))
        throw this.releasedBefore(driverId === actorId);
      if (!(await claimDriver(trx, claim, now))) throw await explainClaimFailure(trx, claim);
      businessId = moved.business_id ?? null;
      after = await this.record(trx, { jobId: row.id, status: to, event, businessId, at: now }, row.status, {
        driverId,
        assigned: true,
      });
      const loaded = (await store.load(row.id, trx))!;
      await options.answer?.(trx, loaded);
      return loaded;
    });
    this.announce(
      { jobId: row.id, status: to, event, businessId, at: now },
      { driverId, actorId, assigned: true, final: false },
      updated.customer_id,
    );
    after?.();
    return updated;
  }

  async transition(
    row: Row,
    to: S,
    event: E,
    actorId: string,
    options: {
      reason?: string;
      /** A failed package's reason code (its column and its history item). */
      reasonCode?: FailReasonCode;
      recipientName?: string;
      set?: Omit<StatusSet<S>, 'status' | 'updated_at'>;
      answer?: AnswerHook<Row>;
      /**
       * Asked in the change's transaction before anything is written: when it answers true the kind's
       * in-transaction work (the webhook outbox row) is left out (a recurring occurrence never
       * dispatched, section 22).
       */
      quiet?: (trx: Trx) => Promise<boolean>;
    } = {},
  ): Promise<Row> {
    const { store } = this.kind;
    const now = this.deps.clock.now();
    const final = this.kind.finals.includes(to);
    let businessId: string | null = null;
    let after: (() => void) | undefined;
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      const quiet = (await options.quiet?.(trx)) ?? false;
      const set = {
        ...options.set,
        status: to,
        updated_at: now,
        ...(options.recipientName ? { recipient_name: options.recipientName } : {}),
        ...(options.reasonCode ? { fail_reason_code: options.reasonCode } : {}),
      };
      const history = {
        status: to,
        reason: options.reason ?? null,
        ...(options.reasonCode ? { reasonCode: options.reasonCode } : {}),
        actorId,
        at: now,
      };
      // A final status frees the job's driver in the same statement.
      const moved = await store.updateStatus(trx, row.id, row.status, set, { history, releaseDriver: final });
      if (!moved) throw this.invalidTransition(await store.currentStatus(trx, row.id));
      businessId = moved.business_id ?? null;
      after = await this.record(
        trx,
        { jobId: row.id, status: to, event, businessId, at: now },
        row.status,
        { driverId: moved.driver_id, assigned: false },
        quiet,
      );
      const loaded = (await store.load(row.id, trx))!;
      // The money the change moves (earnings, a cancellation fee, cash on delivery) is booked in the same
      // transaction, once per source key: it commits exactly when the status does.
      if (final && this.deps.money && this.kind.moneyFacts)
        await this.deps.money.settle(trx, this.kind.moneyFacts(loaded));
      await options.answer?.(trx, loaded);
      return loaded;
    });
    this.announce(
      { jobId: row.id, status: to, event, businessId, at: now },
      { driverId: updated.driver_id, actorId, assigned: false, final },
      updated.customer_id,
    );
    after?.();
    return updated;
  }

  /**
   * The assigned driver's step without reading the job first (issue 41): one statement guards (the
   * driver, a status the step applies from, `deliverable`), changes, writes history and the outbox
   * and returns the job; autocommitted alone, or in a transaction with the ledger's posting and a
   * keyed request's answer (or with the key claimed in the statement itself: `claim`, no transaction
   * of its own). Only for steps that never leave the waiting status (dispatch has nothing
   * to close). Undefined when the guard did not hold (nothing written): the caller's full path
   * (`transition`, after its read) then answers, with its 404, 403 or 409.
   */
  async step(
    id: string,
    to: S,
    event: E,
    driverId: string,
    options: {
      from: readonly S[];
      reason?: string;
      reasonCode?: FailReasonCode;
      recipientName?: string;
      deliverable?: boolean;
      answer?: AnswerHook<Row>;
      /** A request's Idempotency-Key, claimed in the step's statement (instead of `answer`). */
      claim?: InlineClaim;
    },
  ): Promise<Row | undefined> {
    const { store, finals, moneyFacts } = this.kind;
    if (!store.step) return undefined;
    const step = store.step.bind(store);
    const now = this.deps.clock.now();
    const final = finals.includes(to);
    const { money } = this.deps;
    const books = final && money !== undefined && moneyFacts !== undefined && mayBook(to);
    const change = {
      id,
      from: options.from,
      driverId,
      set: {
        status: to,
        updated_at: now,
        ...(options.recipientName ? { recipient_name: options.recipientName } : {}),
        ...(options.reasonCode ? { fail_reason_code: options.reasonCode } : {}),
      },
      history: {
        status: to,
        reason: options.reason ?? null,
        ...(options.reasonCode ? { reasonCode: options.reasonCode } : {}),
        actorId: driverId,
        at: now,
      },
      releaseDriver: final,
      deliverable: options.deliverable ?? false,
      event,
      ...(options.claim ? { claim: options.claim } : {}),
    };
    const { answer } = options;
    const updated =
      books || answer
        ? await this.deps.db.transaction().execute(async (trx) => {
            const row = await step(trx, change);
            if (!row) return undefined;
            // The money the change moves, in its transaction (as `transition` books it).
            if (books) await money!.settle(trx, moneyFacts!(row));
            await answer?.(trx, row);
            return row;
          })
        : await step(this.deps.db, change);
    if (!updated) return undefined;
    this.announce(
      {
        jobId: id,
        status: to,
        event,
        businessId: (updated as { business_id?: string | null }).business_id ?? null,
        at: now,
      },
      { driverId: updated.driver_id, actorId: driverId, assigned: false, final },
      updated.customer_id,
    );
    return updated;
  }

  /**
   * The assigned driver (or an admin) hands the job back before pickup: it waits again, the driver is
   * free, and it is never that driver's again (neither offered nor taken). No webhook event (none is defined for it).
   */
  async release(
    row: Row,
    from: S,
    to: S,
    actorId: string,
    reason: string | null,
    answer?: AnswerHook<Row>,
  ): Promise<Row> {
    const { store } = this.kind;
    if (row.status !== from || !row.driver_id) throw this.invalidTransition(row.status);
    const driverId = row.driver_id;
    const now = this.deps.clock.now();
    let after: (() => void) | undefined;
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      const moved = await store.updateStatus(
        trx,
        row.id,
        from,
        { status: to, driver_id: null, updated_at: now },
        { history: { status: to, reason, actorId, at: now } },
      );
      if (!moved) throw this.invalidTransition(await store.currentStatus(trx, row.id));
      await releaseDriver(trx, driverId, row.id, now);
      await recordRelease(trx, { jobId: row.id, driverId, reason, actorId, at: now });
      const releases = await releaseCount(trx, this.kind.jobType, row.id);
      after = await this.deps.dispatch?.released(trx, {
        jobType: this.kind.jobType,
        jobId: row.id,
        driverId,
        reason,
        actorId,
        at: now,
        releases,
      });
      const loaded = (await store.load(row.id, trx))!;
      await answer?.(trx, loaded);
      return loaded;
    });
    this.deps.bus.publish('job.changed', {
      jobType: this.kind.jobType,
      jobId: row.id,
      status: to,
      driverId,
      actorId,
      assigned: false,
      final: false,
      released: true,
    });
    after?.();
    return updated;
  }

  /** The kind's in-transaction work and dispatch's, after the status change and its history row. */
  private async record(
    trx: Trx,
    change: StatusChange<S, E>,
    from: S,
    who: { driverId: string | null; assigned: boolean },
    quiet = false,
  ): Promise<(() => void) | undefined> {
    if (!quiet) await this.kind.inTransaction?.(trx, change);
    return this.deps.dispatch?.changed(trx, {
      jobType: this.kind.jobType,
      jobId: change.jobId,
      from,
      status: change.status,
      ...who,
      at: change.at,
    });
  }

  private announce(
    change: StatusChange<S, E>,
    who: { driverId: string | null; actorId: string; assigned: boolean; final: boolean },
    customerId: string | null,
  ): void {
    this.deps.bus.publish('job.changed', {
      jobType: this.kind.jobType,
      jobId: change.jobId,
      status: change.status,
      ...who,
    });
    this.kind.afterCommit?.(change);
    this.deps.watcher?.jobChanged({
      jobType: this.kind.jobType,
      jobId: change.jobId,
      status: change.status,
      driverId: who.driverId,
      customerId,
    });
  }
}
