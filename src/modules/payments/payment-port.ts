// The port between jobs and the payments module (contract section 26; the structure rule: money code
// reaches jobs through a port, and never imports a job module). Jobs open a payment in their creating transaction and hand it over
// after commit (JobPaymentsPort, implemented by payments/); payments tell a job it was paid, failed,
// expired or refunded (PayableJobs, implemented by packages/). Neither imports the other.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { JobPaymentState } from '../../db/tables/mpesa.js';
import type { AuthContext } from '../../shared/auth-context.js';

export type PayableJobType = 'PACKAGE' | 'RIDE';

/** What a job asks of the payments module. */
export interface JobPaymentsPort {
  /** The checks a new M-Pesa job must pass before it is written: whole shillings within the STK limits, a Kenyan phone (400s). */
  check(input: { amount: number; currency: string; phone: string }): { amount: number; phone: string };
  /** In the job's creating transaction: the first prompt, QUEUED (sent after commit, or by the loop). */
  open(
    trx: Transaction<Database>,
    job: { jobType: PayableJobType; jobId: string; amount: number; phone: string; at: Date },
  ): Promise<void>;
  /** After commit: send what open queued. */
  afterCommit(jobId: string): void;
}

/** A job as the payments module sees it. */
export interface PayableJob {
  jobType: PayableJobType;
  jobId: string;
  status: string;
  /** Minor units. */
  amount: number;
  currency: string;
  phone: string;
  paymentState: JobPaymentState;
  /** Who paid: the package's creator (a customer). */
  payerId: string;
  createdAt: Date;
}

/** What the payments module asks of jobs (packages implement it). */
export interface PayableJobs {
  /** The job this caller may pay for (its creator, or an admin); undefined otherwise (404). */
  forPayer(jobType: PayableJobType, jobId: string, auth: AuthContext): Promise<PayableJob | undefined>;
  /** The job, in the caller's transaction (locked: one payment decision at a time). */
  load(trx: Transaction<Database>, jobType: PayableJobType, jobId: string): Promise<PayableJob | undefined>;
  /** In the payment's transaction: PAID; a job still waiting enters dispatch. False when already PAID (nothing done). */
  paid(
    trx: Transaction<Database>,
    jobType: PayableJobType,
    jobId: string,
    receipt: string | null,
    at: Date,
  ): Promise<boolean>;
  /** After the commit of `paid`: offer the job to drivers. */
  afterPaid(jobType: PayableJobType, jobId: string): void;
  /** In the payment's transaction: the last prompt failed (PENDING → FAILED). */
  failed(trx: Transaction<Database>, jobType: PayableJobType, jobId: string, why: string): Promise<void>;
  /** A new prompt is on its way (FAILED → PENDING), to this phone (E.164). */
  pending(trx: Transaction<Database>, jobType: PayableJobType, jobId: string, phone: string): Promise<void>;
  /** Jobs still unpaid (PENDING or FAILED) created before `before`. */
  unpaidBefore(before: Date, limit: number): Promise<{ jobType: PayableJobType; jobId: string }[]>;
  /** An unpaid job past the timeout: CANCELLED with no fee, its payment CANCELLED. False when it was paid meanwhile. */
  expire(jobType: PayableJobType, jobId: string): Promise<boolean>;
  /** Paid jobs cancelled or failed that have no refund yet. */
  toRefund(limit: number): Promise<{ jobType: PayableJobType; jobId: string; refundable: number }[]>;
  /** In the refund's transaction: REFUNDED. */
  refunded(trx: Transaction<Database>, jobType: PayableJobType, jobId: string): Promise<void>;
}
