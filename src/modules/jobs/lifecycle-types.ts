// The contracts of the shared job lifecycle (lifecycle.ts): a kind's rows, store and statuses, and the
// hooks dispatch, push and idempotent answers plug in; no code, so jobs/ imports nothing of theirs.
import type { Transaction } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { Database, OrderType, VehicleType } from '../../db/schema.js';
import type { FailReasonCode } from '../../db/tables/jobs.js';
import type { JobType } from './driver-claims.js';
import type { JobMoneyFacts } from './job-money.js';
import type { TransitionRule } from './transitions.js';
import type { InlineClaim } from '../../shared/record-answer.js';

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
  /** A failed package's reason code (contract section 23; packages only). */
  fail_reason_code?: FailReasonCode | null;
}

/** A status history row. */
export interface StatusHistoryEntry<S extends string> {
  status: S;
  reason: string | null;
  /** A failed package's reason code (contract section 23): stored by the packages' store only. */
  reasonCode?: FailReasonCode | null;
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
      /** An Idempotency-Key claimed in the same statement, the row stored as its answer (ClaimFirst when held). */
      claim?: InlineClaim;
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
