// Payout batches (contract section 21): every driver and business the operator owes at least a
// minimum is paid in one batch; the balance moves to clearing when the batch is created, so an
// account in an open batch cannot be paid again until its line is paid or has failed.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PayoutLineStatus } from '../../db/tables/ledger.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toPage } from '../../shared/pagination.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import { payoutFileCsv, payoutReference, toMajorUnits } from './payout-file.js';
import type { ReceiptsRepository } from '../ledger/receipts.repository.js';
import type { BatchRow, LineRow, PayoutsRepository } from './payouts.repository.js';
import { payoutLineFailedEntries, sourceKeys } from '../ledger/postings.js';

type StatusTotals = Record<PayoutLineStatus, { lines: number; amount: number }>;

export interface PayoutBatch {
  id: string;
  number: number;
  currency: string;
  minimum: number;
  status: 'OPEN' | 'CLOSED';
  lineCount: number;
  total: number;
  /** The total in major units with the currency's decimals ("1234.50"). */
  totalMajor: string;
  lines: StatusTotals;
  createdBy: string;
  createdAt: string;
  closedAt: string | null;
}

export interface PayoutLine {
  id: string;
  seq: number;
  reference: string;
  partyKind: 'DRIVER' | 'BUSINESS';
  partyId: string;
  name: string;
  phone: string;
  amount: number;
  amountMajor: string;
  currency: string;
  status: PayoutLineStatus;
  failureReason: string | null;
  closedAt: string | null;
}

const emptyTotals = (): StatusTotals => ({
  OPEN: { lines: 0, amount: 0 },
  SENT: { lines: 0, amount: 0 },
  UNKNOWN: { lines: 0, amount: 0 },
  PAID: { lines: 0, amount: 0 },
  FAILED: { lines: 0, amount: 0 },
});

/** A cursor over a batch's lines: the last line's number, opaque to the client. */
const encodeSeq = (seq: number) => Buffer.from(`seq:${seq}`).toString('base64url');
function decodeSeq(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^seq:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw badRequest('Invalid cursor', 'INVALID_CURSOR');
  return Number(match[1]);
}

export class PayoutService {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      ledger: LedgerService;
      repo: PayoutsRepository;
      /** The currency check, shared with settlements. */
      receipts: Pick<ReceiptsRepository, 'isCountryCurrency'>;
    },
  ) {}

  /**
   * A batch of every DRIVER and BUSINESS account of the currency whose balance is at least
   * `minimum` (default 1) and that has no OPEN line, in `trx` (the Idempotency-Key's transaction).
   * Batches of one currency are created one at a time (an advisory lock until commit), so a
   * second admin's batch, waiting, then sees the first's lines and leaves those accounts out.
   * 409 PAYOUT_NOTHING_TO_PAY when no account qualifies: no empty batch is created.
   */
  async createBatch(
    trx: Transaction<Database>,
    adminId: string,
    input: { currency: string; minimum?: number },
  ): Promise<PayoutBatch> {
    const { repo, ledger } = this.deps;
    const minimum = input.minimum ?? 1;
    if (!(await this.deps.receipts.isCountryCurrency(trx, input.currency)))
      throw badRequest(`body.currency ${input.currency} is not the currency of any country`, 'UNKNOWN_CURRENCY');
    await repo.lockPayoutCurrency(trx, input.currency);
    const id = randomUUID();
    const now = this.deps.clock.now();
    await repo.insertBatch(trx, { id, currency: input.currency, minimum, createdBy: adminId, now });
    await repo.insertLines(trx, { batchId: id, currency: input.currency, minimum, now });
    const totals = await ledger.bookPayoutBatch(trx, id, input.currency);
    if (totals.lines === 0) {
      throw conflict(
        `No driver or business is owed at least ${minimum} ${input.currency} (minor units) outside an open batch`,
        'PAYOUT_NOTHING_TO_PAY',
      );
    }
    await repo.setBatchTotals(trx, id, totals);
    return (await this.load(trx, id))!;
  }

  async listBatches(query: { currency?: string; cursor?: string; limit?: number }) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.batches(this.deps.db, {
      currency: query.currency,
      before: decodeCursor(query.cursor),
      limit: limit + 1,
    });
    const page = toPage(
      rows.map((r) => ({ ...r, createdAt: r.created_at })),
      limit,
      (r) => r,
    );
    const totals = await this.deps.repo.statusTotals(
      this.deps.db,
      page.items.map((b) => b.id),
    );
    return { items: page.items.map((b) => this.toBatch(b, totals)), nextCursor: page.nextCursor };
  }

  async getBatch(batchId: string): Promise<PayoutBatch> {
    const batch = await this.load(this.deps.db, batchId);
    if (!batch) throw notFound('Payout batch not found', 'PAYOUT_BATCH_NOT_FOUND');
    return batch;
  }

  /** A page of a batch's lines, in line order. */
  async lines(batchId: string, query: { cursor?: string; limit?: number; status?: PayoutLineStatus }) {
    const batch = await this.getBatch(batchId);
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.lines(this.deps.db, batchId, {
      afterSeq: decodeSeq(query.cursor),
      status: query.status,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      items: page.map((l) => this.toLine(batch, l)),
      nextCursor: rows.length > limit ? encodeSeq(page[page.length - 1]!.seq) : null,
    };
  }

  /**
   * The bulk-upload file: the OPEN lines only, so that a file downloaded again after some lines
   * were paid or failed never pays them twice.
   */
  async csv(batchId: string): Promise<{ filename: string; csv: string }> {
    const batch = await this.getBatch(batchId);
    const lines = await this.deps.repo.lines(this.deps.db, batchId, { status: 'OPEN' });
    const csv = payoutFileCsv(
      lines.map((l) => ({
        name: l.name,
        phone: l.phone,
        amount: l.amount,
        currency: batch.currency,
        reference: payoutReference(batch.number, l.seq),
      })),
    );
    return { filename: `payout-${batch.number}-${batch.currency}.csv`, csv };
  }

  /** Every OPEN line of the batch is paid (the money left the bank); the batch closes. Again: nothing more happens. */
  async markPaid(batchId: string): Promise<PayoutBatch> {
    return this.deps.db.transaction().execute(async (trx) => {
      const batch = await this.deps.repo.batch(trx, batchId, { lock: true });
      if (!batch) throw notFound('Payout batch not found', 'PAYOUT_BATCH_NOT_FOUND');
      // Section 26: a line on its way by M-Pesa is settled by its result, never by hand.
      const totals = await this.deps.repo.statusTotals(trx, [batchId]);
      if (totals.some((t) => (t.status === 'SENT' || t.status === 'UNKNOWN') && t.lines > 0))
        throw conflict(
          'A line of this batch is SENT or UNKNOWN by M-Pesa: it cannot be marked paid',
          'PAYOUT_LINES_IN_FLIGHT',
        );
      await this.deps.ledger.bookPayoutBatchPaid(trx, batchId, batch.currency);
      await this.deps.repo.closeBatchIfSettled(trx, batchId, this.deps.clock.now());
      return (await this.load(trx, batchId))!;
    });
  }

  /**
   * One line failed (a wrong number, a closed account): its amount returns to the party's balance,
   * for the next batch. Failing a FAILED line again changes nothing; a PAID line cannot fail (409).
   */
  async markLineFailed(batchId: string, lineId: string, reason: string | undefined): Promise<PayoutLine> {
    return this.deps.db.transaction().execute(async (trx) => {
      const { repo, ledger, clock } = this.deps;
      // The batch row first, as markPaid takes it: the two queue per batch.
      const batch = await repo.batch(trx, batchId, { lock: true });
      if (!batch) throw notFound('Payout batch not found', 'PAYOUT_BATCH_NOT_FOUND');
      const failed = await repo.failLine(trx, batchId, lineId, reason ?? null, clock.now());
      if (!failed) {
        const line = await repo.line(trx, batchId, lineId);
        if (!line) throw notFound('Payout line not found', 'PAYOUT_LINE_NOT_FOUND');
        if (line.status === 'PAID') throw conflict('This payout line was paid: it cannot fail', 'PAYOUT_LINE_PAID');
        if (line.status === 'SENT' || line.status === 'UNKNOWN')
          throw conflict('This payout line is on its way by M-Pesa: its result settles it', 'PAYOUT_LINES_IN_FLIGHT');
        return this.toLine(batch, line);
      }
      const posted = await ledger.post(trx, {
        sourceKey: sourceKeys.payoutLineFailed(failed.id),
        currency: batch.currency,
        entries: payoutLineFailedEntries({
          party: { kind: failed.party_kind, partyId: failed.party_id },
          amount: failed.amount,
        }),
      });
      await repo.setClosingTransaction(trx, failed.id, posted.id);
      await repo.closeBatchIfSettled(trx, batchId, clock.now());
      return this.toLine(batch, failed);
    });
  }

  private async load(trx: Kysely<Database> | Transaction<Database>, batchId: string): Promise<PayoutBatch | undefined> {
    const batch = await this.deps.repo.batch(trx, batchId);
    if (!batch) return undefined;
    return this.toBatch(batch, await this.deps.repo.statusTotals(trx, [batchId]));
  }

  private toBatch(
    b: BatchRow,
    totals: { batch_id: string; status: PayoutLineStatus; lines: number; amount: number }[],
  ): PayoutBatch {
    const lines = emptyTotals();
    for (const t of totals) if (t.batch_id === b.id) lines[t.status] = { lines: t.lines, amount: t.amount };
    return {
      id: b.id,
      number: b.number,
      currency: b.currency,
      minimum: b.minimum,
      status: b.status,
      lineCount: b.line_count,
      total: b.total,
      totalMajor: toMajorUnits(b.total, b.currency),
      lines,
      createdBy: b.created_by,
      createdAt: b.created_at.toISOString(),
      closedAt: b.closed_at?.toISOString() ?? null,
    };
  }

  private toLine(batch: Pick<BatchRow, 'number' | 'currency'>, l: LineRow): PayoutLine {
    return {
      id: l.id,
      seq: l.seq,
      reference: payoutReference(batch.number, l.seq),
      partyKind: l.party_kind,
      partyId: l.party_id,
      name: l.name,
      phone: l.phone,
      amount: l.amount,
      amountMajor: toMajorUnits(l.amount, batch.currency),
      currency: batch.currency,
      status: l.status,
      failureReason: l.failure_reason,
      closedAt: l.closed_at?.toISOString() ?? null,
    };
  }
}
