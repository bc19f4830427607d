// Packages paid by M-Pesa as the payments module sees them (contract section 26; the PayableJobs
// port of jobs/payment-port.ts): a package enters dispatch only once PAID, an unpaid one is cancelled
// with no fee after MPESA_PAYMENT_TIMEOUT, a paid one that ends cancelled or failed is refunded.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { AppError } from '../../shared/errors.js';
import type { Clock } from '../../shared/clock.js';
import type { DB } from '../../db/database.js';
import type { DispatchHooks } from '../jobs/lifecycle.js';
import type { PayableJob, PayableJobs, PayableJobType } from '../payments/payment-port.js';
import type { PackagePaymentsRepository } from './package-payments.repository.js';

type Row = NonNullable<Awaited<ReturnType<PackagePaymentsRepository['load']>>>;

const toPayable = (row: Row): PayableJob => ({
  jobType: 'PACKAGE',
  jobId: row.id,
  status: row.status,
  amount: row.price_amount ?? 0,
  currency: row.price_currency ?? 'KES',
  phone: row.payment_phone ?? '',
  paymentState: row.payment_state ?? 'PENDING',
  payerId: row.created_by,
  createdAt: row.created_at,
});

/** Thrown inside an expiry's transaction when the package was paid meanwhile: the cancellation rolls back. */
class PaidMeanwhile extends Error {}

export class PackagePayments implements PayableJobs {
  constructor(
    private readonly deps: {
      db: DB;
      clock: Clock;
      repo: PackagePaymentsRepository;
      dispatch?: DispatchHooks;
      /** Offers a PENDING package to drivers (the lifecycle's offerNearby). */
      offer(row: Row): void;
      /** Cancels a PENDING package with no fee, running `inTransaction` in the change's transaction. */
      cancel(
        id: string,
        reason: string,
        inTransaction: (trx: Transaction<Database>) => Promise<void>,
      ): Promise<boolean>;
    },
  ) {}

  async forPayer(jobType: PayableJobType, jobId: string, auth: AuthContext): Promise<PayableJob | undefined> {
    if (jobType !== 'PACKAGE') return undefined;
    const row = await this.deps.repo.load(this.deps.db, jobId);
    if (!row || (auth.role !== 'ADMIN' && auth.userId !== row.created_by)) return undefined;
    return toPayable(row);
  }

  async load(trx: Transaction<Database>, _jobType: PayableJobType, jobId: string): Promise<PayableJob | undefined> {
    const row = await this.deps.repo.load(trx, jobId, { lock: true });
    return row ? toPayable(row) : undefined;
  }

  async paid(
    trx: Transaction<Database>,
    _jobType: PayableJobType,
    jobId: string,
    receipt: string | null,
    at: Date,
  ): Promise<boolean> {
    const { repo, dispatch } = this.deps;
    const row = await repo.load(trx, jobId, { lock: true });
    if (!row) return false;
    if (row.payment_state === 'PAID' || row.payment_state === 'REFUNDED') {
      // Paid before by the query's answer: the callback's receipt arrives now.
      if (receipt) await repo.setReceipt(trx, jobId, receipt);
      return false;
    }
    // CANCELLED (expired) and paid after all: PAID, and the refund sweep sends it back.
    const moved = await repo.setState(trx, jobId, 'PAID', ['PENDING', 'FAILED', 'CANCELLED'], {
      payment_receipt: receipt,
      payment_failure: null,
    });
    if (moved && row.status === 'PENDING')
      // The one gate: an M-Pesa package enters dispatch here, when paid, not at its creation.
      await dispatch?.enroll(trx, {
        jobType: 'PACKAGE',
        jobId,
        vehicleType: row.vehicle_type,
        lat: row.pickup_lat,
        lng: row.pickup_lng,
        at,
      });
    return moved;
  }

  afterPaid(_jobType: PayableJobType, jobId: string): void {
    void this.deps.repo.load(this.deps.db, jobId).then((row) => {
      if (row?.status === 'PENDING' && row.payment_state === 'PAID') this.deps.offer(row);
    });
  }

  async failed(trx: Transaction<Database>, _jobType: PayableJobType, jobId: string, why: string): Promise<void> {
    await this.deps.repo.setState(trx, jobId, 'FAILED', ['PENDING'], { payment_failure: why.slice(0, 200) });
  }

  async pending(trx: Transaction<Database>, _jobType: PayableJobType, jobId: string, phone: string): Promise<void> {
    await this.deps.repo.setState(trx, jobId, 'PENDING', ['PENDING', 'FAILED'], {
      payment_phone: phone,
      payment_failure: null,
    });
  }

  async unpaidBefore(before: Date, limit: number) {
    const ids = await this.deps.repo.unpaidBefore(this.deps.db, before, limit);
    return ids.map((jobId) => ({ jobType: 'PACKAGE' as const, jobId }));
  }

  async expire(_jobType: PayableJobType, jobId: string): Promise<boolean> {
    try {
      return await this.deps.cancel(jobId, 'Not paid by M-Pesa in time', async (trx) => {
        if (!(await this.deps.repo.setState(trx, jobId, 'CANCELLED', ['PENDING', 'FAILED']))) throw new PaidMeanwhile();
      });
    } catch (err) {
      // Paid meanwhile, or cancelled by another instance's sweep (or its creator) first.
      if (err instanceof PaidMeanwhile || (err instanceof AppError && err.statusCode === 409)) return false;
      throw err;
    }
  }

  async toRefund(limit: number) {
    const rows = await this.deps.repo.toRefund(this.deps.db, limit);
    return rows.map((r) => ({ jobType: 'PACKAGE' as const, jobId: r.id, refundable: r.refundable }));
  }

  async refunded(trx: Transaction<Database>, _jobType: PayableJobType, jobId: string): Promise<void> {
    await this.deps.repo.setState(trx, jobId, 'REFUNDED', ['PAID']);
  }
}
