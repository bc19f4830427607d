// The lifecycle packages and rides share: a conditional status change, the driver's claim or release,
// the history row and the kind's in-transaction work in one transaction; `job.changed` after commit.
import type { Transaction } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { Database, OrderType, VehicleType } from '../../db/schema.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, conflict, forbidden } from '../../shared/errors.js';
import type { DriverIndex } from '../matching/driver-index.js';
import type { StatusHistoryItemJson } from '../../db/tables/jobs.js';
import { json } from '../../db/json.js';
import {
  claimDriver,
  explainClaimFailure,
  pushNearbyJob,
  releaseDriver,
  toDriverSummary,
  type DriverSummaryRow,
  type JobType,
} from './driver-claims.js';
import { mayBook, type JobMoneyFacts, type JobMoneyHook } from './job-money.js';
import { recordRelease, releaseCount, releasedBy } from './job-releases.repository.js';
import { checkTransition, type TransitionRule } from './transitions.js';

type Trx = Transaction<Database>;

export interface JobRow<S extends string> {
  id: string;
  status: S;
  driver_id: string | null;
  vehicle_type: VehicleType;
  /** The customer who booked it (none for a business's package). */
  customer_id: string | null;
}

/** What a status change writes: the status, and what comes with it (the driver; a fee or a fare, section 18). */
export interface StatusSet<S extends string> {
  status: S;
  updated_at: Date;
  driver_id?: string | null;
  recipient_name?: string;
  cancellation_fee?: number | null;
  fare_amount?: number | null;
  fare_detail?: string | null;
  /** Cash the driver confirmed collecting (cash on delivery; a CASH ride's fare). */
  cash_collected?: number | null;
}

/** A status history row. */
export interface StatusHistoryEntry<S extends string> {
  status: S;
  reason: string | null;
  actorId: string | null;
  at: Date;
}

export interface JobStore<S extends string, Row> {
  load(id: string, trx?: Trx): Promise<Row | undefined>;
  /**
   * The status change from `from` with its history row and, with `releaseDriver`, its driver freed
   * (as releaseDriver does), in one statement; undefined when the job was not in `from`.
   */
  updateStatus(
    trx: Trx,
    id: string,
    from: S,
    set: StatusSet<S>,
    effects: { history: StatusHistoryEntry<S>; releaseDriver?: boolean },
    createdAfter?: Date,
  ): Promise<{ driver_id: string | null; business_id?: string | null } | undefined>;
  currentStatus(trx: Trx, id: string): Promise<S>;
  /**
   * A driver's step in one statement (guard, change, history, the kind's outbox rows, the driver freed
   * when `releaseDriver`, the row as `load` reads it after); undefined when the guard did not hold.
   */
  step?(
    db: Executor,
    change: {
      id: string;
      from: readonly S[];
      driverId: string;
      set: StatusSet<S>;
      history: StatusHistoryEntry<S>;
      releaseDriver: boolean;
      deliverable: boolean;
      event: string;
    },
  ): Promise<Row | undefined>;
}

export interface StatusChange<S extends string, E extends string> {
  jobId: string;
  status: S;
  event: E;
  businessId: string | null;
  at: Date;
}

export interface JobKind<S extends string, A extends string, E extends string, Row> {
  jobType: JobType;
  orderType: OrderType;
  noun: string;
  transitions: readonly TransitionRule<S, A, E>[];
  finals: readonly S[];
  store: JobStore<S, Row>;
  /** Runs in the status change's transaction (packages: the webhook outbox). */
  inTransaction?(trx: Trx, change: StatusChange<S, E>): Promise<void>;
  afterCommit?(change: StatusChange<S, E>): void;
  /** What the ledger books from, read from the row as the status change left it (section 21). */
  moneyFacts?(row: Row): JobMoneyFacts;
}

/**
 * What dispatch (modules/dispatch) does inside the lifecycle's transactions; jobs/ defines it so that
 * it imports nothing from dispatch.
 */
export interface DispatchHooks {
  mode: 'offer' | 'broadcast' | 'off';
  /** A new job enters dispatch (in its creation's transaction). */
  enroll(
    trx: Trx,
    job: { jobType: JobType; jobId: string; vehicleType: VehicleType; lat: number; lng: number; at: Date },
  ): Promise<void>;
  /** Look for a driver for this job now (after commit). */
  kick(jobType: JobType, jobId: string): void;
  /** A status change, in its transaction: closes the job's open offer; returns what to do after commit. */
  changed(
    trx: Trx,
    change: {
      jobType: JobType;
      jobId: string;
      from: string;
      status: string;
      driverId: string | null;
      assigned: boolean;
      at: Date;
    },
  ): Promise<(() => void) | undefined>;
  /** The driver handed the job back (in the release's transaction, `releases` times so far): back in dispatch. */
  released(
    trx: Trx,
    release: {
      jobType: JobType;
      jobId: string;
      driverId: string;
      reason: string | null;
      actorId: string;
      at: Date;
      releases: number;
    },
  ): Promise<() => void>;
}

/**
 * Told of each status change after commit, on the instance that made it, so that it happens once
 * across instances (a customer's push notification, modules/push).
 */
export interface JobChangeWatcher {
  jobChanged(change: {
    jobType: JobType;
    jobId: string;
    status: string;
    driverId: string | null;
    customerId: string | null;
  }): void;
}

/** A keyed request's answer, made from the job as the change left it and stored in the change's transaction (http/idempotency.ts). */
export type AnswerHook<Row> = (trx: Trx, row: Row) => Promise<void>;

export type DispatchState = 'SCHEDULED' | 'SEARCHING' | 'OFFERED' | 'NO_DRIVERS' | 'DONE' | 'OFF';

/** The job's `dispatch` field: its dispatch row's state while it waits, DONE once it left dispatch, OFF without one. */
export function dispatchField(
  waiting: boolean,
  state: string | null,
  attempts: number | null,
): { state: DispatchState; attempts: number } {
  const known = state !== null;
  const shown: DispatchState = waiting
    ? known && state !== 'DONE'
      ? (state as DispatchState)
      : 'OFF'
    : known
      ? 'DONE'
      : 'OFF';
  return { state: shown, attempts: attempts ?? 0 };
}

export function jobFields<S extends string>(
  row: JobRow<S> &
    DriverSummaryRow & {
      country_id: string;
      status_history: StatusHistoryItemJson[] | string;
      created_at: Date;
      updated_at: Date;
      dispatch_state: string | null;
      dispatch_attempts: number | null;
    },
  waitingStatus: S,
) {
  return {
    id: row.id,
    status: row.status,
    vehicleType: row.vehicle_type,
    countryId: row.country_id,
    driver: toDriverSummary(row),
    statusHistory: json<StatusHistoryItemJson[]>(row.status_history),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    dispatch: dispatchField(row.status === waitingStatus, row.dispatch_state, row.dispatch_attempts),
  };
}

/** The assigned driver, or the company it drives for: the driver's side of a job. */
export function isDriverSide(
  row: { driver_id: string | null; driver_company_id: string | null },
  auth: AuthContext,
): boolean {
  if (auth.userId === row.driver_id) return true;
  return auth.role === 'COMPANY' && row.driver_id !== null && row.driver_company_id === auth.userId;
}

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
      recipientName?: string;
      set?: Omit<StatusSet<S>, 'status' | 'updated_at'>;
      answer?: AnswerHook<Row>;
    } = {},
  ): Promise<Row> {
    const { store } = this.kind;
    const now = this.deps.clock.now();
    const final = this.kind.finals.includes(to);
    let businessId: string | null = null;
    let after: (() => void) | undefined;
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      const set = {
        ...options.set,
        status: to,
        updated_at: now,
        ...(options.recipientName ? { recipient_name: options.recipientName } : {}),
      };
      const history = { status: to, reason: options.reason ?? null, actorId, at: now };
      // A final status frees the job's driver in the same statement.
      const moved = await store.updateStatus(trx, row.id, row.status, set, { history, releaseDriver: final });
      if (!moved) throw this.invalidTransition(await store.currentStatus(trx, row.id));
      businessId = moved.business_id ?? null;
      after = await this.record(trx, { jobId: row.id, status: to, event, businessId, at: now }, row.status, {
        driverId: moved.driver_id,
        assigned: false,
      });
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
   * keyed request's answer. Only for steps that never leave the waiting status (dispatch has nothing
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
      recipientName?: string;
      deliverable?: boolean;
      answer?: AnswerHook<Row>;
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
      },
      history: { status: to, reason: options.reason ?? null, actorId: driverId, at: now },
      releaseDriver: final,
      deliverable: options.deliverable ?? false,
      event,
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
  ): Promise<(() => void) | undefined> {
    await this.kind.inTransaction?.(trx, change);
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
