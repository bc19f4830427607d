// Refunds of M-Pesa payments (contract section 26): a paid job cancelled or failed sends its payer
// the money back by B2C (what was paid less any cancellation fee, in whole shillings). One refund per
// job (a unique row), with a stable OriginatorConversationID, so that no retry or restart pays it
// twice; booked MPESA → payer by the refund's receipt when its result comes.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { MpesaConfig } from '../../config/mpesa.js';
import type { Database } from '../../db/schema.js';
import type { MpesaCallbackKind } from '../../db/tables/mpesa.js';
import type { Clock } from '../../shared/clock.js';
import type { PayableJobs } from './payment-port.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import { mpesaRefundEntries } from '../ledger/postings.js';
import { matchB2cResult } from '../mpesa/daraja-callbacks.js';
import { DarajaError, type DarajaClient } from '../mpesa/daraja-client.js';
import { MpesaB2cPayouts } from '../mpesa/b2c-payouts.service.js';
import type { MpesaRepository } from '../mpesa/mpesa.repository.js';
import type { PaymentsRepository, RefundRow } from './payments.repository.js';

export const REFUND_KINDS: readonly MpesaCallbackKind[] = ['REFUND_RESULT', 'REFUND_TIMEOUT'];
const MINOR = 100;
const BATCH = 100;

export class MpesaRefunds {
  private jobs: PayableJobs | undefined;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      config: MpesaConfig;
      client: DarajaClient;
      ledger: LedgerService;
      repo: PaymentsRepository;
      callbacks: MpesaRepository;
      logger: Logger;
      /** The callback token of a refund (an HMAC of its id). */
      token: (id: string) => string;
    },
  ) {}

  bind(jobs: PayableJobs): void {
    this.jobs = jobs;
  }

  private url(token: string, leaf: 'result' | 'timeout'): string {
    return `${this.deps.config.callbackBaseUrl}/api/hooks/daraja/refund/${token}/${leaf}`;
  }

  /** Queues a refund for each paid job that ended without one, then sends what is queued. */
  async sweep(): Promise<void> {
    const { db, repo, clock, config } = this.deps;
    for (const job of await this.jobs!.toRefund(BATCH)) {
      await db.transaction().execute(async (trx) => {
        const paid = (await repo.stksOfJob(trx, job.jobId)).find((s) => s.state === 'PAID');
        if (!paid) return;
        const id = randomUUID();
        const shillings = Math.floor(Math.min(job.refundable, paid.amount * MINOR) / MINOR);
        const small = shillings < config.b2cMin;
        await repo.insertRefund(trx, {
          id,
          job_type: job.jobType,
          job_id: job.jobId,
          stk_payment_id: paid.id,
          // Under the B2C minimum (or nothing left after the fee): the row records it, nothing is sent.
          amount: Math.max(shillings, 1),
          phone: paid.phone,
          originator_conversation_id: `RF${job.jobId.replace(/-/g, '')}`,
          token_hash: MpesaB2cPayouts.hashToken(this.deps.token(id)),
          created_at: clock.now(),
        });
        if (small)
          await repo.setRefund(trx, id, {
            state: 'FAILED',
            result_desc:
              shillings === 0
                ? 'Nothing to refund after the cancellation fee'
                : `Under the M-Pesa B2C minimum of KES ${config.b2cMin}: left on the customer's balance`,
          });
      });
    }
    for (const r of await repo.queuedRefunds(db, BATCH)) await this.send(r, 'QUEUED');
    for (const r of await repo.unansweredRefunds(db, new Date(clock.nowMs() - config.requestTimeoutMs - 5000), BATCH))
      await this.send(r, 'SENT');
  }

  private async send(r: RefundRow, from: 'QUEUED' | 'SENT'): Promise<void> {
    const { repo, db, clock, client, logger } = this.deps;
    const claimed = await repo.claimRefund(db, r.id, clock.now(), from);
    if (!claimed) return;
    const token = this.deps.token(r.id);
    try {
      const answer = await client.b2c({
        originatorConversationId: r.originator_conversation_id,
        amount: r.amount,
        phone: r.phone,
        resultUrl: this.url(token, 'result'),
        timeoutUrl: this.url(token, 'timeout'),
        remarks: 'Refund',
      });
      await repo.setRefund(db, r.id, { conversation_id: answer.conversationId }, ['SENT']);
    } catch (err) {
      if (!(err instanceof DarajaError)) throw err;
      if (err.kind === 'duplicate') await repo.setRefund(db, r.id, { conversation_id: '' }, ['SENT']);
      else if (err.kind === 'timeout')
        await repo.setRefund(db, r.id, { state: 'UNKNOWN', conversation_id: '', result_desc: err.message }, ['SENT']);
      else if (err.kind === 'rejected' || err.kind === 'auth')
        await repo.setRefund(
          db,
          r.id,
          { state: 'FAILED', result_code: err.errorCode ?? null, result_desc: err.message, result_at: clock.now() },
          ['SENT'],
        );
      else {
        logger.warn({ err: err.message, refund: r.id }, 'M-Pesa refund not sent, queued again');
        await repo.setRefund(db, r.id, { state: 'QUEUED' }, ['SENT']);
      }
    }
  }

  /** Stores a refund's result or timeout callback (committed); undefined for an unknown token. */
  async receive(kind: MpesaCallbackKind, token: string, body: unknown): Promise<string | undefined> {
    const { db, repo, callbacks, clock, logger } = this.deps;
    const tokenHash = MpesaB2cPayouts.hashToken(token);
    if (!(await repo.refundByToken(db, tokenHash))) {
      logger.warn({ kind }, 'M-Pesa callback for an unknown token refused');
      return undefined;
    }
    const stored = await callbacks.storeCallback(db, { kind, tokenHash, ids: [], body, at: clock.now() });
    return stored.id;
  }

  /** A refund's result or timeout callback, in its stored callback's transaction. */
  async workResult(
    trx: Transaction<Database>,
    kind: MpesaCallbackKind,
    tokenHash: string,
    body: unknown,
  ): Promise<string> {
    const { repo, clock } = this.deps;
    const found = await repo.refundByToken(trx, tokenHash);
    if (!found) return 'UNMATCHED';
    const r = (await repo.refund(trx, found.id, { lock: true }))!;
    const result = matchB2cResult(r, body);
    if (typeof result === 'string') return result;
    if (kind === 'REFUND_TIMEOUT') {
      await repo.setRefund(trx, r.id, { state: 'UNKNOWN', result_desc: 'Queue timeout' });
      return 'UNKNOWN';
    }
    if (result.resultCode !== '0') {
      await repo.setRefund(trx, r.id, {
        state: 'FAILED',
        result_code: result.resultCode,
        result_desc: result.resultDesc,
        result_at: clock.now(),
      });
      return 'FAILED';
    }
    if (result.amount !== r.amount || !result.receipt) {
      await repo.setRefund(trx, r.id, { state: 'UNKNOWN', result_desc: 'Result did not match the refund' });
      return 'MISMATCH';
    }
    const job = await this.jobs!.load(trx, r.job_type, r.job_id);
    if (!job) return 'UNMATCHED';
    const posted = await this.deps.ledger.post(trx, {
      sourceKey: `mpesa:${result.receipt}`,
      currency: 'KES',
      entries: mpesaRefundEntries({ payer: { kind: 'CUSTOMER', partyId: job.payerId }, amount: r.amount * MINOR }),
    });
    if (posted.replayed) {
      await repo.setRefund(trx, r.id, { state: 'UNKNOWN', result_desc: `Receipt ${result.receipt} already booked` });
      return 'MISMATCH';
    }
    await repo.setRefund(trx, r.id, {
      state: 'PAID',
      receipt: result.receipt,
      result_code: '0',
      transaction_id: posted.id,
      result_at: clock.now(),
    });
    await this.jobs!.refunded(trx, r.job_type, r.job_id);
    return 'REFUNDED';
  }
}
