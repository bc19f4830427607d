// Settling B2C payouts (contract section 26): a paid part booked by its receipt, a line settled from its
// parts (what was not paid back on the balance), the batch closed once settled or stopped on insufficient float.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import { payoutLineFailedEntries, payoutPaidByMpesaEntries } from '../ledger/postings.js';
import type { PayoutsRepository } from '../payouts/payouts.repository.js';
import type { MpesaRepository, PaymentRow } from './mpesa.repository.js';

/** KES has two decimals: a shilling is 100 minor units. */
export const MINOR_PER_SHILLING = 100;

/** The ledger and status side of B2C payouts, in the caller's transaction (MpesaB2cPayouts sends and receives). */
export class B2cSettling {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      ledger: LedgerService;
      repo: MpesaRepository;
      /** The batch closing statement is the payouts module's. */
      payoutsRepo: PayoutsRepository;
    },
  ) {}

  /** A part paid: clearing to the MPESA account, keyed by the receipt (a second result books nothing). */
  async book(trx: Transaction<Database>, p: PaymentRow, receipt: string): Promise<boolean> {
    const posted = await this.deps.ledger.post(trx, {
      sourceKey: `mpesa:${receipt}`,
      currency: 'KES',
      entries: payoutPaidByMpesaEntries({ amount: p.amount * MINOR_PER_SHILLING }),
    });
    // The receipt was booked before, for another payment: this one is not paid by it.
    if (posted.replayed) {
      await this.deps.repo.setPayment(trx, p.id, {
        state: 'UNKNOWN',
        result_desc: `Receipt ${receipt} already booked`,
      });
      await this.settleLine(trx, p.line_id);
      return false;
    }
    await this.deps.repo.setPayment(trx, p.id, {
      state: 'PAID',
      receipt,
      result_code: '0',
      transaction_id: posted.id,
      result_at: this.deps.clock.now(),
    });
    await this.settleLine(trx, p.line_id);
    return true;
  }

  /**
   * The line's state from its parts: SENT while one is QUEUED or SENT, UNKNOWN while one is
   * UNKNOWN, else settled: PAID when every part was paid, FAILED otherwise; what was not paid (the
   * cents, failed parts, or all of it) goes back to the balance in one transaction.
   */
  async settleLine(trx: Transaction<Database>, lineId: string, reason?: string): Promise<void> {
    const { repo, ledger, clock } = this.deps;
    // The batch row first: two lines settling at once then see each other, and the last closes the batch.
    const batchId = await repo.batchOfLine(trx, lineId);
    if (batchId) await repo.lockBatch(trx, batchId);
    const line = await repo.line(trx, lineId);
    if (!line || line.status === 'PAID' || line.status === 'FAILED' || line.status === 'OPEN') return;
    const parts = await repo.paymentsOfLine(trx, lineId);
    if (parts.some((p) => p.state === 'QUEUED' || p.state === 'SENT')) return repo.setLineStatus(trx, lineId, 'SENT');
    if (parts.some((p) => p.state === 'UNKNOWN')) return repo.setLineStatus(trx, lineId, 'UNKNOWN');
    const paid = parts.filter((p) => p.state === 'PAID').reduce((sum, p) => sum + p.amount, 0) * MINOR_PER_SHILLING;
    const allPaid = parts.length > 0 && parts.every((p) => p.state === 'PAID');
    const back = line.amount - paid;
    let closing: string | null = null;
    if (back > 0) {
      const posted = await ledger.post(trx, {
        sourceKey: `mpesa:payout-line:${lineId}:returned`,
        currency: 'KES',
        entries: payoutLineFailedEntries({ party: { kind: line.party_kind, partyId: line.party_id }, amount: back }),
      });
      closing = posted.id;
    }
    const failed = parts.find((p) => p.state === 'FAILED');
    await repo.setLineStatus(trx, lineId, allPaid ? 'PAID' : 'FAILED', {
      reason: allPaid ? null : (reason ?? failed?.result_desc ?? 'Not paid by M-Pesa'),
      closedAt: clock.now(),
      closingTransactionId: closing ?? parts.find((p) => p.state === 'PAID')?.id ?? null,
    });
    await this.deps.payoutsRepo.closeBatchIfSettled(trx, line.batch_id, clock.now());
  }

  async refreshLineAlone(lineId: string): Promise<void> {
    await this.deps.db.transaction().execute((trx) => this.settleLine(trx, lineId));
  }

  /**
   * After an insufficient-float result, in its transaction: the batch is stopped, its QUEUED
   * payments go and their lines are OPEN again (sending the batch again restarts it).
   */
  async stopBatch(trx: Transaction<Database>, batchId: string, reason: string): Promise<void> {
    const { repo } = this.deps;
    await repo.lockBatch(trx, batchId);
    await repo.setStopped(trx, batchId, reason);
    for (const lineId of await repo.dropQueued(trx, batchId)) {
      const parts = await repo.paymentsOfLine(trx, lineId);
      if (parts.length === 0) await repo.setLineStatus(trx, lineId, 'OPEN');
      else await this.settleLine(trx, lineId);
    }
  }
}
