// Customers paying by M-Pesa STK Push (contract section 26). A job paid by M-Pesa opens its first
// prompt in its creating transaction (QUEUED) and sends it after commit (or the loop does: the
// outbox). Each prompt's callback URL carries its own token (an HMAC of the prompt's id, stored only
// hashed); a callback is stored before its 200 and worked after: it must name the prompt's
// CheckoutRequestID, its amount and phone, else nothing is booked and STK Push Query decides. A
// paid prompt books payer ← MPESA in the ledger (keyed by the receipt, or by the CheckoutRequestID
// when only the query knows it) and tells the job (PayableJobs), in one transaction.
import { createHmac, randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { MpesaConfig } from '../../config/mpesa.js';
import type { Database } from '../../db/schema.js';
import type { MpesaCallbackKind } from '../../db/tables/mpesa.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, badRequest, conflict, notFound } from '../../shared/errors.js';
import type { JobPaymentsPort, PayableJob, PayableJobs, PayableJobType } from './payment-port.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import { mpesaPaymentEntries } from '../ledger/postings.js';
import { darajaPhone, parseStkCallback } from '../mpesa/daraja-callbacks.js';
import { MpesaB2cPayouts } from '../mpesa/b2c-payouts.service.js';
import { DarajaError, type DarajaClient } from '../mpesa/daraja-client.js';
import type { MpesaRepository } from '../mpesa/mpesa.repository.js';
import type { PaymentsRepository, StkRow } from './payments.repository.js';
import { MpesaRefunds, REFUND_KINDS } from './refunds.js';

const BATCH = 100;
/** KES: a shilling is 100 minor units. */
const MINOR = 100;
export const STK_KINDS: readonly MpesaCallbackKind[] = ['STK_RESULT'];

export interface StkCounters {
  callbacksStored: number;
  callbacksRepeated: number;
  callbacksUnknownToken: number;
  outcomes: Record<string, number>;
}

export interface StkDeps {
  db: Kysely<Database>;
  clock: Clock;
  config: MpesaConfig;
  client: DarajaClient;
  ledger: LedgerService;
  repo: PaymentsRepository;
  /** The stored callbacks (mpesa_callbacks, shared with B2C payouts). */
  callbacks: MpesaRepository;
  logger: Logger;
  /** Derives the callback tokens. */
  secret: string;
}

export class StkCollections implements JobPaymentsPort {
  readonly counters: StkCounters = { callbacksStored: 0, callbacksRepeated: 0, callbacksUnknownToken: 0, outcomes: {} };
  readonly refunds: MpesaRefunds;
  private readonly tokenKey: Buffer;
  private jobs: PayableJobs | undefined;
  private sending: Promise<void> | undefined;

  constructor(private readonly deps: StkDeps) {
    this.tokenKey = createHmac('sha256', deps.secret).update('mpesa-stk-token').digest();
    this.refunds = new MpesaRefunds({ ...deps, token: (id) => this.token('refund', id) });
  }

  /** The jobs this module pays for (packages), given once both are built (services.ts). */
  bind(jobs: PayableJobs): void {
    this.jobs = jobs;
    this.refunds.bind(jobs);
  }

  private get payable(): PayableJobs {
    if (!this.jobs) throw new Error('StkCollections used before bind()');
    return this.jobs;
  }

  token(kind: 'stk' | 'refund', id: string): string {
    return createHmac('sha256', this.tokenKey).update(`${kind}:${id}`).digest('base64url').slice(0, 32);
  }

  // --- the port jobs call -------------------------------------------------------------------------

  check(input: { amount: number; currency: string; phone: string }): { amount: number; phone: string } {
    const { config } = this.deps;
    if (input.currency !== 'KES')
      throw badRequest(`M-Pesa takes Kenyan shillings: this job is priced in ${input.currency}`, 'MPESA_CURRENCY');
    const shillings = Math.ceil(input.amount / MINOR);
    if (shillings < config.stkMin || shillings > config.stkMax)
      throw badRequest(
        `M-Pesa takes KES ${config.stkMin} to ${config.stkMax} per payment: this job is KES ${shillings}`,
        'MPESA_AMOUNT_OUT_OF_RANGE',
      );
    const phone = darajaPhone(input.phone);
    if (!phone)
      throw badRequest('payment.phone must be a Kenyan mobile number (+2547… or +2541…)', 'MPESA_PHONE_INVALID');
    return { amount: shillings * MINOR, phone: `+${phone}` };
  }

  async open(
    trx: Transaction<Database>,
    job: { jobType: PayableJobType; jobId: string; amount: number; phone: string; at: Date },
  ): Promise<void> {
    const id = randomUUID();
    await this.deps.repo.insertStk(trx, {
      id,
      job_type: job.jobType,
      job_id: job.jobId,
      amount: Math.ceil(job.amount / MINOR),
      phone: darajaPhone(job.phone)!,
      token_hash: MpesaB2cPayouts.hashToken(this.token('stk', id)),
      created_at: job.at,
    });
  }

  afterCommit(): void {
    void this.sendQueued().catch((err) => this.deps.logger.warn({ err }, 'M-Pesa STK Push sending failed'));
  }

  // --- retry --------------------------------------------------------------------------------------

  /** POST /packages/:id/payment/retry: a new prompt, when the last one failed (or is known to have). */
  async retry(jobType: PayableJobType, jobId: string, auth: AuthContext, phone?: string) {
    const job = await this.payable.forPayer(jobType, jobId, auth);
    if (!job) throw notFound('Package not found', 'PACKAGE_NOT_FOUND');
    // A prompt still on its way: ask M-Pesa first (it may have been paid or failed meanwhile).
    const live = (await this.deps.repo.stksOfJob(this.deps.db, jobId)).find((s) => s.state === 'SENT');
    if (live?.checkout_request_id) await this.query(live);
    const target = phone === undefined ? job.phone : this.check({ amount: job.amount, currency: 'KES', phone }).phone;
    const id = randomUUID();
    const now = this.deps.clock.now();
    const answer = await this.deps.db.transaction().execute(async (trx) => {
      const locked = await this.payable.load(trx, jobType, jobId);
      if (!locked) throw notFound('Package not found', 'PACKAGE_NOT_FOUND');
      if (locked.paymentState !== 'FAILED' && locked.paymentState !== 'PENDING')
        throw conflict(`This payment is ${locked.paymentState}: nothing to retry`, 'PAYMENT_NOT_RETRYABLE');
      if (locked.status !== 'PENDING')
        throw conflict('This package is no longer waiting for payment', 'PAYMENT_NOT_RETRYABLE');
      const prompts = await this.deps.repo.stksOfJob(trx, jobId);
      if (prompts.some((s) => s.state === 'QUEUED' || s.state === 'SENT'))
        throw conflict(
          'The last prompt is still on the phone: answer it, or try again in a minute',
          'MPESA_PROMPT_PENDING',
        );
      await this.deps.repo.insertStk(trx, {
        id,
        job_type: jobType,
        job_id: jobId,
        amount: Math.ceil(locked.amount / MINOR),
        phone: darajaPhone(target)!,
        token_hash: MpesaB2cPayouts.hashToken(this.token('stk', id)),
        created_at: now,
      });
      await this.payable.pending(trx, jobType, jobId, target);
      return { ...locked, phone: target, paymentState: 'PENDING' as const };
    });
    this.afterCommit();
    return paymentView(answer);
  }

  // --- sending ------------------------------------------------------------------------------------

  async sendQueued(): Promise<void> {
    if (this.sending) return this.sending;
    this.sending = (async () => {
      for (;;) {
        const queued = await this.deps.repo.queuedStks(this.deps.db, BATCH);
        if (!queued.length) return;
        let sent = 0;
        for (let i = 0; i < queued.length; i += 8) {
          const results = await Promise.all(queued.slice(i, i + 8).map((p) => this.sendOne(p)));
          sent += results.filter(Boolean).length;
        }
        if (sent === 0) return;
      }
    })().finally(() => (this.sending = undefined));
    return this.sending;
  }

  async whenSent(): Promise<void> {
    await this.sending;
  }

  private async sendOne(p: StkRow): Promise<boolean> {
    const { repo, db, clock, client, logger, config } = this.deps;
    const claimed = await repo.claimStk(db, p.id, clock.now());
    if (!claimed) return false;
    try {
      const answer = await client.stkPush({
        amount: p.amount,
        phone: p.phone,
        callbackUrl: `${config.callbackBaseUrl}/api/hooks/daraja/stk/${this.token('stk', p.id)}/result`,
        accountReference: `PKG${p.job_id.replace(/-/g, '').slice(0, 9).toUpperCase()}`,
        description: 'Delivery',
      });
      await repo.setStk(
        db,
        p.id,
        { merchant_request_id: answer.merchantRequestId, checkout_request_id: answer.checkoutRequestId },
        ['SENT'],
      );
      return true;
    } catch (err) {
      if (!(err instanceof DarajaError)) throw err;
      if (err.kind === 'unreachable' || err.kind === 'unavailable') {
        // It did not arrive: queued again (the loop sends it), until the payment times out.
        logger.warn({ err: err.message, payment: p.id }, 'M-Pesa STK Push not sent, queued again');
        await repo.setStk(db, p.id, { state: 'QUEUED' }, ['SENT']);
        return false;
      }
      if (err.kind === 'timeout') {
        // It may have arrived: its callback may still come; without one it fails at the query time.
        await repo.setStk(db, p.id, { result_desc: err.message }, ['SENT']);
        return true;
      }
      await this.fail(p.id, err.errorCode ?? null, err.message);
      return true;
    }
  }

  /** A prompt that did not go through: FAILED, and its job's payment FAILED (a retry sends another). */
  private async fail(id: string, code: string | null, why: string): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await this.deps.repo.stk(trx, id, { lock: true });
      if (!row || (row.state !== 'SENT' && row.state !== 'QUEUED')) return;
      await this.failIn(trx, row, code, why);
    });
  }

  private async failIn(trx: Transaction<Database>, row: StkRow, code: string | null, why: string) {
    await this.deps.repo.setStk(trx, row.id, {
      state: 'FAILED',
      result_code: code,
      result_desc: why,
      result_at: this.deps.clock.now(),
    });
    await this.payable.failed(trx, row.job_type, row.job_id, why);
  }

  // --- callbacks ----------------------------------------------------------------------------------

  /** Stores a callback at /api/hooks/daraja/stk/:token/result (committed); undefined for an unknown token. */
  async receive(token: string, body: unknown): Promise<string | undefined> {
    const { db, repo, callbacks, clock, logger } = this.deps;
    const tokenHash = MpesaB2cPayouts.hashToken(token);
    if (!(await repo.stkByToken(db, tokenHash))) {
      this.counters.callbacksUnknownToken++;
      logger.warn({ kind: 'STK_RESULT' }, 'M-Pesa callback for an unknown token refused');
      return undefined;
    }
    const parsed = parseStkCallback(body);
    const stored = await callbacks.storeCallback(db, {
      kind: 'STK_RESULT',
      tokenHash,
      ids: [parsed?.checkoutRequestId ?? '', parsed?.resultCode ?? ''],
      body,
      at: clock.now(),
    });
    if (stored.fresh) this.counters.callbacksStored++;
    else this.counters.callbacksRepeated++;
    return stored.id;
  }

  /** Works one stored callback (STK or refund), once. */
  async work(callbackId: string): Promise<string | undefined> {
    const { db, callbacks, clock } = this.deps;
    let outcome: string | undefined;
    let paid: StkRow | undefined;
    try {
      outcome = await db.transaction().execute(async (trx) => {
        const cb = await callbacks.claimCallback(trx, callbackId, [...STK_KINDS, ...REFUND_KINDS]);
        if (!cb) return undefined;
        let result: string;
        if (cb.kind === 'STK_RESULT') {
          const worked = await this.workStk(trx, cb.token_hash, cb.body);
          result = worked.outcome;
          paid = worked.paid;
        } else result = await this.refunds.workResult(trx, cb.kind, cb.token_hash, cb.body);
        await callbacks.finishCallback(trx, cb.id, result, clock.now());
        return result;
      });
    } catch (err) {
      // A receipt the ledger already holds with other entries (409): refused, nothing booked.
      if (!(err instanceof AppError) || err.statusCode !== 409) throw err;
      outcome = 'MISMATCH';
      await callbacks.finishCallback(db, callbackId, outcome, clock.now());
    }
    if (paid) this.payable.afterPaid(paid.job_type, paid.job_id);
    if (outcome) {
      this.counters.outcomes[outcome] = (this.counters.outcomes[outcome] ?? 0) + 1;
      if (outcome === 'MISMATCH' || outcome === 'UNMATCHED')
        this.deps.logger.warn({ callback: callbackId, outcome }, 'M-Pesa callback refused: nothing booked');
    }
    return outcome;
  }

  private async workStk(
    trx: Transaction<Database>,
    tokenHash: string,
    body: unknown,
  ): Promise<{ outcome: string; paid?: StkRow }> {
    const { repo } = this.deps;
    const found = await repo.stkByToken(trx, tokenHash);
    if (!found) return { outcome: 'UNMATCHED' };
    const p = (await repo.stk(trx, found.id, { lock: true }))!;
    const result = parseStkCallback(body);
    // Sent to another request's token, or not a callback at all.
    if (!result || (p.checkout_request_id && result.checkoutRequestId !== p.checkout_request_id))
      return { outcome: 'MISMATCH' };
    if (p.state === 'PAID') {
      // The query paid it first (keyed by the CheckoutRequestID): it takes the receipt now.
      if (result.resultCode === '0' && result.receipt && !p.receipt && result.amount === p.amount) {
        await repo.setStk(trx, p.id, { receipt: result.receipt });
        await this.payable.paid(trx, p.job_type, p.job_id, result.receipt, this.deps.clock.now());
      }
      return { outcome: 'DUPLICATE' };
    }
    if (p.state === 'FAILED' && p.result_code !== null) return { outcome: 'DUPLICATE' };
    if (result.resultCode !== '0') {
      if (p.state !== 'SENT') return { outcome: 'DUPLICATE' };
      await this.failIn(trx, p, result.resultCode, result.resultDesc);
      return { outcome: 'FAILED' };
    }
    if (result.amount !== p.amount || result.phone !== p.phone || !result.receipt) {
      // Trusted for nothing alone: recorded, nothing booked; STK Push Query decides (the sweep asks).
      await repo.setStk(trx, p.id, {
        result_desc: `Callback refused: amount ${String(result.amount)}, phone ${result.phone ? 'other' : 'none'}`,
        queried_at: null,
      });
      return { outcome: 'MISMATCH' };
    }
    if (!p.checkout_request_id)
      await repo.setStk(trx, p.id, {
        checkout_request_id: result.checkoutRequestId,
        merchant_request_id: result.merchantRequestId,
      });
    return (await this.book(trx, p, result.receipt)) ? { outcome: 'PAID', paid: p } : { outcome: 'MISMATCH' };
  }

  /** A prompt paid: payer ← MPESA, keyed by the receipt (or the CheckoutRequestID), and the job PAID. */
  private async book(trx: Transaction<Database>, p: StkRow, receipt: string | null): Promise<boolean> {
    const job = await this.payable.load(trx, p.job_type, p.job_id);
    if (!job) return false;
    const posted = await this.deps.ledger.post(trx, {
      sourceKey: receipt ? `mpesa:${receipt}` : `mpesa:stk:${p.checkout_request_id}`,
      currency: 'KES',
      entries: mpesaPaymentEntries({ payer: { kind: 'CUSTOMER', partyId: job.payerId }, amount: p.amount * MINOR }),
    });
    // The receipt was booked before, for another payment: this one is not paid by it.
    if (posted.replayed) return false;
    const now = this.deps.clock.now();
    await this.deps.repo.setStk(trx, p.id, {
      state: 'PAID',
      receipt,
      result_code: '0',
      transaction_id: posted.id,
      result_at: now,
    });
    await this.payable.paid(trx, p.job_type, p.job_id, receipt, now);
    return true;
  }

  // --- the loop -----------------------------------------------------------------------------------

  /** STK Push Query about one prompt with no callback: paid, failed, or still on the phone. */
  async query(p: StkRow): Promise<string> {
    const { client, db, repo, logger } = this.deps;
    if (!p.checkout_request_id) {
      // Daraja never gave it an id (no answer in time): nothing to ask; it failed.
      await this.fail(p.id, null, 'No answer from M-Pesa');
      return 'FAILED';
    }
    let answer;
    try {
      answer = await client.stkQuery(p.checkout_request_id);
    } catch (err) {
      if (!(err instanceof DarajaError)) throw err;
      logger.warn({ err: err.message, payment: p.id }, 'M-Pesa STK Push Query failed; asked again later');
      return 'ERROR';
    }
    if (answer.state === 'PROCESSING') return 'PROCESSING';
    if (answer.checkoutRequestId !== p.checkout_request_id) return 'MISMATCH';
    let paid = false;
    const outcome = await db.transaction().execute(async (trx) => {
      const row = await repo.stk(trx, p.id, { lock: true });
      if (!row || row.state !== 'SENT') return 'DUPLICATE';
      if (answer.resultCode !== '0') {
        await this.failIn(trx, row, answer.resultCode, answer.resultDesc);
        return 'FAILED';
      }
      // The query gives no receipt: booked by the CheckoutRequestID; the callback's receipt is taken later.
      paid = await this.book(trx, row, null);
      return paid ? 'PAID' : 'MISMATCH';
    });
    if (paid) this.payable.afterPaid(p.job_type, p.job_id);
    return outcome;
  }

  /**
   * The loop's turn: work stored callbacks left unworked, send queued prompts, ask about prompts
   * with no callback, cancel jobs unpaid past MPESA_PAYMENT_TIMEOUT, refund paid jobs that ended.
   */
  async sweep(): Promise<void> {
    const { db, repo, callbacks, clock, config } = this.deps;
    const now = clock.nowMs();
    for (const id of await callbacks.unprocessedCallbacks(db, new Date(now - 1000), BATCH, [
      ...STK_KINDS,
      ...REFUND_KINDS,
    ]))
      await this.work(id);
    await this.sendQueued();
    for (const p of await repo.claimToQuery(db, new Date(now - config.stkQueryAfterMs), clock.now(), BATCH))
      await this.query(p);
    for (const job of await this.payable.unpaidBefore(new Date(now - config.paymentTimeoutMs), BATCH)) {
      // A last look before cancelling: a prompt paid without a callback is found by its query.
      for (const p of await repo.stksOfJob(db, job.jobId)) if (p.state === 'SENT') await this.query(p);
      if (await this.payable.expire(job.jobType, job.jobId))
        for (const p of await repo.stksOfJob(db, job.jobId))
          if (p.state === 'QUEUED') await this.fail(p.id, null, 'Not paid in time');
    }
    await this.refunds.sweep();
  }
}

/** A job's `payment` object (contract section 26). */
export function paymentView(job: PayableJob) {
  return {
    method: 'MPESA' as const,
    phone: job.phone,
    state: job.paymentState,
    amount: job.amount,
    currency: job.currency,
  };
}
