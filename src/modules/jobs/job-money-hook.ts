// The money a job's end books (contract section 21), in the lifecycle's transaction: a job DELIVERED
// or COMPLETED books its amount's split (jobCompletedEntries) and, for a package with cash on
// delivery, the cash the driver now holds for the business (cashOnDeliveryEntries); a cancellation
// with a fee books the fee's split (cancellationFeeEntries). Each under its source key, so a retry or
// a replay books nothing twice. The hook lives with the job core that calls it (jobs → ledger): money
// never imports jobs.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { JobMoneyFacts, JobMoneyHook } from './job-money.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import {
  cancellationFeeEntries,
  cashOnDeliveryEntries,
  jobCompletedEntries,
  sourceKeys,
  type TransactionInput,
} from '../ledger/postings.js';

/** The transactions a job's status change books (none for most changes). Pure. */
export function jobTransactions(facts: JobMoneyFacts): TransactionInput[] {
  const { jobType, jobId, driverId, currency } = facts;
  if (!driverId || !currency) return [];
  const inputs: TransactionInput[] = [];
  if (facts.outcome === 'DONE' && facts.amount !== null) {
    const entries = jobCompletedEntries({
      driverId,
      payer: facts.payer,
      paymentMethod: facts.paymentMethod,
      amount: facts.amount,
      bookingFee: Math.min(facts.bookingFee, facts.amount),
      commissionRate: facts.commissionRate,
    });
    if (entries.length) inputs.push({ sourceKey: sourceKeys.jobCompleted(jobType, jobId), currency, entries });
    if (facts.cashOnDelivery) {
      inputs.push({
        sourceKey: sourceKeys.cashOnDelivery(jobId),
        currency,
        entries: cashOnDeliveryEntries({ driverId, ...facts.cashOnDelivery }),
      });
    }
  }
  if (facts.outcome === 'CANCELLED' && facts.cancellationFee) {
    const entries = cancellationFeeEntries({
      driverId,
      payer: facts.payer,
      fee: facts.cancellationFee,
      commissionRate: facts.commissionRate,
    });
    inputs.push({ sourceKey: sourceKeys.cancellationFee(jobType, jobId), currency, entries });
  }
  return inputs;
}

export class JobMoney implements JobMoneyHook {
  constructor(private readonly deps: { ledger: LedgerService }) {}

  async settle(trx: Transaction<Database>, facts: JobMoneyFacts): Promise<void> {
    const inputs = jobTransactions(facts);
    // One postMany per database transaction: the accounts are locked in one order (docs/money.md).
    if (inputs.length) await this.deps.ledger.postMany(trx, inputs);
  }
}
