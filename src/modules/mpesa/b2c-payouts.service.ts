// B2C payouts (contract section 26): each OPEN line of a payout batch paid by M-Pesa. A line is
// whole shillings (the cents stay on the balance), under the minimum stays on the balance, above the
// maximum is split; each part has a stable OriginatorConversationID (B2C v3 refuses a second one),
// so no retry, restart or callback pays a line twice. Results are stored before their 200 and
// worked after; a part without a result becomes UNKNOWN and is asked about by Transaction Status,
// never sent again automatically. Money moves in the ledger, keyed by the M-Pesa receipt.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { MpesaConfig } from '../../config/mpesa.js';
import type { Database } from '../../db/schema.js';
import type { MpesaCallbackKind } from '../../db/tables/mpesa.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, badRequest, conflict, notFound } from '../../shared/errors.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import type { PayoutsRepository } from '../payouts/payouts.repository.js';
import { darajaPhone, matchB2cResult, parseStatusResult } from './daraja-callbacks.js';
import { DarajaError, type DarajaClient } from './daraja-client.js';
import type { MpesaRepository, PaymentRow } from './mpesa.repository.js';
import { B2cSettling, MINOR_PER_SHILLING } from './b2c-settling.js';

const MAX_STATUS_ASKS = 5;
const BATCH = 200;
/** The callbacks this service works (STK collections work theirs: payments/). */
const B2C_KINDS: readonly MpesaCallbackKind[] = ['B2C_RESULT', 'B2C_TIMEOUT', 'STATUS_RESULT', 'STATUS_TIMEOUT'];

export interface SendSummary {
  /** Lines handed to M-Pesa (as one or more payments). */
  lines: number;
  payments: number;
  /** Lines under the B2C minimum: FAILED, their amount back on the balance. */
  belowMinimum: number;
}

/** What the service counts, for /metrics and tests: refused or held callbacks among them. */
export interface B2cCounters {
  callbacksStored: number;
  callbacksRepeated: number;
  callbacksUnknownToken: number;
  outcomes: Record<string, number>;
}

export class MpesaB2cPayouts {
  readonly counters: B2cCounters = { callbacksStored: 0, callbacksRepeated: 0, callbacksUnknownToken: 0, outcomes: {} };
  private readonly tokenKey: Buffer;
  private sending: Promise<void> | undefined;
  private readonly settling: B2cSettling;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      config: MpesaConfig;
      client: DarajaClient;
      ledger: LedgerService;
      repo: MpesaRepository;
      payoutsRepo: PayoutsRepository;
      logger: Logger;
      /** Derives the callback tokens (an HMAC of the payment's id: stable across restarts, stored only hashed). */
      secret: string;
    },
  ) {
    this.tokenKey = createHmac('sha256', deps.secret).update('mpesa-callback-token').digest();
    this.settling = new B2cSettling(deps);
  }

  private token(kind: 'b2c' | 'status', id: string): string {
    return createHmac('sha256', this.tokenKey).update(`${kind}:${id}`).digest('base64url').slice(0, 32);
  }

  static hashToken(token: string): string {
    return createHash('sha256').update(token).digest('hex');
  }

  private url(kind: 'b2c' | 'status', token: string, leaf: 'result' | 'timeout'): string {
    return `${this.deps.config.callbackBaseUrl}/api/hooks/daraja/${kind}/${token}/${leaf}`;
  }

  /**
   * POST /admin/payouts/:id/send: every OPEN line becomes one or more QUEUED payments (committed),
   * then they are sent. A stopped batch (insufficient float) is started again by sending it again.
   */
  async send(batchId: string): Promise<SendSummary> {
    const { db, repo, clock, config } = this.deps;
    const summary = await db.transaction().execute(async (trx) => {
      const batch = await repo.lockBatch(trx, batchId);
      if (!batch) throw notFound('Payout batch not found', 'PAYOUT_BATCH_NOT_FOUND');
      if (batch.currency !== 'KES')
        throw badRequest(`M-Pesa pays Kenyan shillings: this batch is in ${batch.currency}`, 'MPESA_CURRENCY');
      if (batch.status !== 'OPEN') throw conflict('This payout batch is closed', 'PAYOUT_BATCH_CLOSED');
      await repo.setStopped(trx, batchId, null);
      const now = clock.now();
      const out: SendSummary = { lines: 0, payments: 0, belowMinimum: 0 };
      const rows: Parameters<MpesaRepository['insertPayments']>[1] = [];
      for (const line of await repo.openLines(trx, batchId)) {
        const shillings = Math.floor(line.amount / MINOR_PER_SHILLING);
        const phone = darajaPhone(line.phone);
        if (shillings < config.b2cMin || !phone) {
          out.belowMinimum++;
          await repo.setLineStatus(trx, line.id, 'SENT');
          await this.settling.settleLine(
            trx,
            line.id,
            phone ? `Under the M-Pesa B2C minimum of KES ${config.b2cMin}` : 'Not a Kenyan M-Pesa number',
          );
          continue;
        }
        const parts = Math.ceil(shillings / config.b2cMax);
        const base = Math.floor(shillings / parts);
        for (let part = 0; part < parts; part++) {
          const id = randomUUID();
          rows.push({
            id,
            batch_id: batchId,
            line_id: line.id,
            part,
            amount: base + (part < shillings % parts ? 1 : 0),
            phone,
            originator_conversation_id: `PL${line.id.replace(/-/g, '')}${part}`,
            token_hash: MpesaB2cPayouts.hashToken(this.token('b2c', id)),
            created_at: now,
          });
        }
        await repo.setLineStatus(trx, line.id, 'SENT');
        out.lines++;
        out.payments += parts;
      }
      await repo.insertPayments(trx, rows);
      return out;
    });
    // After commit: a failure here leaves QUEUED rows that the loop sends.
    void this.sendQueued().catch((err) => this.deps.logger.warn({ err }, 'M-Pesa B2C sending failed'));
    return summary;
  }

  /** Sends the QUEUED payments (one sender per process at a time; claims keep processes apart). */
  async sendQueued(): Promise<void> {
    if (this.sending) return this.sending;
    this.sending = (async () => {
      for (;;) {
        const queued = await this.deps.repo.queued(this.deps.db, BATCH);
        if (!queued.length) return;
        let sent = 0;
        // A few at a time: Daraja answers each in tens of milliseconds, and spike arrest punishes bursts.
        for (let i = 0; i < queued.length; i += 8) {
          const results = await Promise.all(queued.slice(i, i + 8).map((p) => this.sendOne(p, 'QUEUED')));
          sent += results.filter(Boolean).length;
          if (results.includes('STOPPED')) break;
        }
        if (sent === 0) return;
      }
    })().finally(() => (this.sending = undefined));
    return this.sending;
  }

  /** Resolves when this process's sender has nothing in hand. */
  async whenSent(): Promise<void> {
    await this.sending;
  }

  /** Claims a payment and sends it; what happened, or undefined when another sender had it. */
  private async sendOne(p: PaymentRow, from: 'QUEUED' | 'SENT'): Promise<string | undefined> {
    const { repo, db, clock, client, logger } = this.deps;
    if (from === 'QUEUED' && (await repo.stopped(db, p.batch_id))) return 'STOPPED';
    const claimed = await repo.claimForSending(db, p.id, clock.now(), from);
    if (!claimed) return undefined;
    const token = this.token('b2c', p.id);
    try {
      const answer = await client.b2c({
        originatorConversationId: p.originator_conversation_id,
        amount: p.amount,
        phone: p.phone,
        resultUrl: this.url('b2c', token, 'result'),
        timeoutUrl: this.url('b2c', token, 'timeout'),
        remarks: 'Payout',
      });
      await repo.setPayment(db, p.id, { conversation_id: answer.conversationId }, ['SENT', 'UNKNOWN']);
      return 'SENT';
    } catch (err) {
      if (!(err instanceof DarajaError)) throw err;
      switch (err.kind) {
        case 'duplicate':
          // An earlier send arrived: its result comes, or Transaction Status finds it.
          await repo.setPayment(db, p.id, { conversation_id: '' }, ['SENT']);
          return 'SENT';
        case 'timeout':
          // It may have arrived: never sent again automatically; Transaction Status is asked.
          await repo.setPayment(db, p.id, { state: 'UNKNOWN', conversation_id: '', result_desc: err.message }, [
            'SENT',
          ]);
          await this.settling.refreshLineAlone(p.line_id);
          return 'UNKNOWN';
        case 'rejected':
        case 'auth':
          await db.transaction().execute(async (trx) => {
            const locked = await repo.payment(trx, p.id, { lock: true });
            if (locked?.state !== 'SENT') return;
            await repo.setPayment(trx, p.id, {
              state: 'FAILED',
              result_code: err.errorCode ?? null,
              result_desc: err.message,
              result_at: clock.now(),
            });
            await this.settling.settleLine(trx, p.line_id);
          });
          return 'FAILED';
        default:
          // Did not arrive (or Daraja could not take it): queued again, the same id makes it safe.
          logger.warn({ err: err.message, payment: p.id }, 'M-Pesa B2C not sent, queued again');
          await repo.setPayment(db, p.id, { state: 'QUEUED' }, ['SENT']);
          return undefined;
      }
    }
  }

  /**
   * A callback at /api/hooks/daraja/(b2c|status)/:token/(result|timeout): stored (committed) under
   * a key of its own content, so that a repeat stores nothing. Undefined for a token no request
   * of ours has: the route answers 404 and nothing is stored.
   */
  async receive(kind: MpesaCallbackKind, token: string, body: unknown): Promise<string | undefined> {
    const { db, repo, clock, logger } = this.deps;
    const tokenHash = MpesaB2cPayouts.hashToken(token);
    const known =
      kind === 'B2C_RESULT' || kind === 'B2C_TIMEOUT'
        ? await repo.paymentByToken(db, tokenHash)
        : await repo.queryByToken(db, tokenHash);
    if (!known) {
      this.counters.callbacksUnknownToken++;
      logger.warn({ kind }, 'M-Pesa callback for an unknown token refused');
      return undefined;
    }
    const r = (body ?? {}) as {
      Result?: { OriginatorConversationID?: unknown; ConversationID?: unknown; ResultCode?: unknown };
    };
    const ids = [r.Result?.OriginatorConversationID, r.Result?.ConversationID, r.Result?.ResultCode].map((v) =>
      String(v ?? ''),
    );
    const stored = await repo.storeCallback(db, { kind, tokenHash, ids, body, at: clock.now() });
    if (stored.fresh) this.counters.callbacksStored++;
    else this.counters.callbacksRepeated++;
    return stored.id;
  }

  /** Works one stored callback (after its 200), once. */
  async work(callbackId: string): Promise<string | undefined> {
    const { db, repo, clock } = this.deps;
    let outcome: string | undefined;
    try {
      outcome = await db.transaction().execute(async (trx) => {
        const cb = await repo.claimCallback(trx, callbackId, B2C_KINDS);
        if (!cb) return undefined;
        const result =
          cb.kind === 'B2C_RESULT' || cb.kind === 'B2C_TIMEOUT'
            ? await this.workB2c(trx, cb.kind, cb.token_hash, cb.body)
            : await this.workStatus(trx, cb.kind, cb.token_hash, cb.body);
        await repo.finishCallback(trx, cb.id, result, clock.now());
        return result;
      });
    } catch (err) {
      // A receipt the ledger already holds with other entries (409): refused, nothing booked.
      if (!(err instanceof AppError) || err.statusCode !== 409) throw err;
      outcome = 'MISMATCH';
      await repo.finishCallback(db, callbackId, outcome, clock.now());
    }
    if (outcome) {
      this.counters.outcomes[outcome] = (this.counters.outcomes[outcome] ?? 0) + 1;
      if (outcome === 'MISMATCH' || outcome === 'UNMATCHED')
        this.deps.logger.warn({ callback: callbackId, outcome }, 'M-Pesa callback refused: nothing booked');
    }
    return outcome;
  }

  private async workB2c(
    trx: Transaction<Database>,
    kind: MpesaCallbackKind,
    tokenHash: string,
    body: unknown,
  ): Promise<string> {
    const { repo, clock } = this.deps;
    const found = await repo.paymentByToken(trx, tokenHash);
    if (!found) return 'UNMATCHED';
    const p = (await repo.payment(trx, found.id, { lock: true }))!;
    const result = matchB2cResult(p, body);
    if (typeof result === 'string') return result;
    if (kind === 'B2C_TIMEOUT') {
      await repo.setPayment(trx, p.id, { state: 'UNKNOWN', result_desc: 'Queue timeout' });
      await this.settling.settleLine(trx, p.line_id);
      return 'UNKNOWN';
    }
    if (result.resultCode === '0') {
      if (result.amount !== p.amount || !result.receipt) {
        // Trusted for nothing alone: Transaction Status decides.
        await repo.setPayment(trx, p.id, { state: 'UNKNOWN', result_desc: 'Result did not match the request' });
        await this.settling.settleLine(trx, p.line_id);
        return 'MISMATCH';
      }
      return (await this.settling.book(trx, p, result.receipt)) ? 'PAID' : 'MISMATCH';
    }
    await repo.setPayment(trx, p.id, {
      state: 'FAILED',
      result_code: result.resultCode,
      result_desc: result.resultDesc,
      result_at: clock.now(),
    });
    // Result 1 on B2C: the float is short. This part failed; the batch stops (the rest stay OPEN).
    if (result.resultCode === '1') {
      await this.settling.stopBatch(trx, p.batch_id, `Insufficient M-Pesa float: ${result.resultDesc}`);
      await this.settling.settleLine(trx, p.line_id);
      return 'STOPPED';
    }
    await this.settling.settleLine(trx, p.line_id);
    return 'FAILED';
  }

  private async workStatus(
    trx: Transaction<Database>,
    kind: MpesaCallbackKind,
    tokenHash: string,
    body: unknown,
  ): Promise<string> {
    const { repo, clock } = this.deps;
    const query = await repo.queryByToken(trx, tokenHash);
    if (!query) return 'UNMATCHED';
    if (kind === 'STATUS_TIMEOUT') return 'STATUS_TIMEOUT';
    const result = parseStatusResult(body);
    if (!result) return 'MISMATCH';
    if (query.originator_conversation_id && result.originatorConversationId !== query.originator_conversation_id)
      return 'MISMATCH';
    await repo.setQuery(trx, query.id, { answered_at: clock.now(), result_code: result.resultCode });
    const p = (await repo.payment(trx, query.payment_id, { lock: true }))!;
    if (p.state === 'PAID' || p.state === 'FAILED') return 'DUPLICATE';
    if (result.resultCode !== '0') return 'NOT_FOUND';
    if (
      result.transactionStatus !== 'Completed' ||
      result.amount !== p.amount ||
      !result.receipt ||
      (result.transactionOriginatorConversationId &&
        result.transactionOriginatorConversationId !== p.originator_conversation_id)
    ) {
      // A status other than Completed (failed, reversed...) is left to an admin with the statement.
      await repo.setPayment(trx, p.id, {
        result_desc: `Transaction Status: ${result.transactionStatus ?? 'no status'}`,
      });
      return 'HELD';
    }
    return (await this.settling.book(trx, p, result.receipt)) ? 'PAID' : 'MISMATCH';
  }

  /**
   * The loop's turn: send what is queued, send again what Daraja never answered (same id), make
   * overdue parts UNKNOWN, ask Transaction Status about UNKNOWN ones, work stored callbacks left
   * unworked (a restart between the 200 and the work).
   */
  async sweep(): Promise<void> {
    const { db, repo, clock, config } = this.deps;
    const now = clock.nowMs();
    for (const id of await repo.unprocessedCallbacks(db, new Date(now - 1000), BATCH, B2C_KINDS)) await this.work(id);
    await this.sendQueued();
    for (const p of await repo.unanswered(db, new Date(now - config.requestTimeoutMs - 5000), BATCH))
      await this.sendOne(p, 'SENT');
    if ((await repo.markOverdueUnknown(db, new Date(now - config.resultTimeoutMs))) > 0) {
      // Their lines become UNKNOWN (settleLine is per line: read them back).
      for (const lineId of await repo.unknownLinesStillSent(db)) await this.settling.refreshLineAlone(lineId);
    }
    for (const p of await repo.claimToAsk(
      db,
      new Date(now - config.statusTimeoutMs),
      clock.now(),
      MAX_STATUS_ASKS,
      BATCH,
    ))
      await this.askStatus(p);
  }

  /** Transaction Status about one UNKNOWN part, by its OriginatorConversationID; the answer comes by callback. */
  private async askStatus(p: PaymentRow): Promise<void> {
    const { db, repo, clock, client, logger } = this.deps;
    const id = randomUUID();
    const token = this.token('status', id);
    await repo.insertQuery(db, {
      id,
      payment_id: p.id,
      token_hash: MpesaB2cPayouts.hashToken(token),
      asked_at: clock.now(),
    });
    try {
      const answer = await client.transactionStatus({
        originalConversationId: p.originator_conversation_id,
        resultUrl: this.url('status', token, 'result'),
        timeoutUrl: this.url('status', token, 'timeout'),
        remarks: 'Payout check',
      });
      await repo.setQuery(db, id, {
        originator_conversation_id: answer.originatorConversationId,
        conversation_id: answer.conversationId,
      });
    } catch (err) {
      if (!(err instanceof DarajaError)) throw err;
      logger.warn({ err: err.message, payment: p.id }, 'M-Pesa Transaction Status not asked; asked again later');
    }
  }
}
