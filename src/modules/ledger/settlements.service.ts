// Money an operator receives (contract section 21): cash a driver hands in (settlement) and a
// business's payment of its invoice, each one ledger transaction; and the balances an operator reads.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, badRequest, conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toPage, toRowPage } from '../../shared/pagination.js';
import type { LedgerService } from './ledger.service.js';
import type { ReceiptRow, ReceiptTable, ReceiptsRepository } from './receipts.repository.js';
import { businessPaymentEntries, settlementEntries, sourceKeys } from './postings.js';

export interface ReceiptInput {
  amount: number;
  currency: string;
  reference: string;
}

export interface Receipt {
  id: string;
  partyId: string;
  amount: number;
  currency: string;
  reference: string;
  /** The party's balance after it (what the operator owes the party; negative: the party owes). */
  balance: number;
  recordedBy: string;
  transactionId: string;
  createdAt: string;
}

/** A recorded settlement or business payment as the lists show it (names as they are now). */
export interface RecordedReceipt {
  id: string;
  partyId: string;
  partyName: string;
  amount: number;
  currency: string;
  reference: string;
  recordedBy: string;
  recordedByName: string;
  transactionId: string;
  createdAt: string;
}

export interface ReceiptListQuery {
  partyId?: string;
  currency?: string;
  cursor?: string;
  limit?: number;
}

export class SettlementService {
  constructor(
    private readonly deps: { db: Kysely<Database>; clock: Clock; ledger: LedgerService; repo: ReceiptsRepository },
  ) {}

  /**
   * Cash a driver hands in. At most what the driver owes (the negative balance): more would turn
   * cash at the counter into a payout to the driver, which is nearly always a typing mistake (one
   * zero too many) and otherwise change to hand back at once (docs/money.md). The driver's account
   * row is locked while checking, so a completion posted at the same moment is counted first or after.
   */
  async recordSettlement(
    trx: Transaction<Database>,
    adminId: string,
    input: ReceiptInput & { driverId: string },
  ): Promise<Receipt> {
    await this.checkParty(trx, input.driverId, 'DRIVER', input.currency);
    const owed = -((await this.deps.repo.lockPartyBalance(trx, input.driverId, input.currency)) ?? 0);
    if (input.amount > owed) {
      throw conflict(
        owed > 0
          ? `The driver owes ${owed} ${input.currency} (minor units): a settlement of ${input.amount} is more than that`
          : `The driver owes nothing in ${input.currency}: there is no cash to settle`,
        'SETTLEMENT_EXCEEDS_DEBT',
      );
    }
    return this.record(trx, 'settlements', adminId, input.driverId, input, (id) => ({
      sourceKey: sourceKeys.settlement(id),
      entries: settlementEntries({ driverId: input.driverId, amount: input.amount }),
    }));
  }

  /** A business paying its invoice into the operator's bank account; more than it owes is a credit (docs/money.md). */
  async recordBusinessPayment(
    trx: Transaction<Database>,
    adminId: string,
    input: ReceiptInput & { businessId: string },
  ): Promise<Receipt> {
    await this.checkParty(trx, input.businessId, 'BUSINESS', input.currency);
    return this.record(trx, 'business_payments', adminId, input.businessId, input, (id) => ({
      sourceKey: sourceKeys.businessPayment(id),
      entries: businessPaymentEntries({ businessId: input.businessId, amount: input.amount }),
    }));
  }

  /** Every account with a non-zero balance, newest account first. */
  async balances(query: { currency?: string; cursor?: string; limit?: number }) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.ledger.nonZeroBalances({
      currency: query.currency,
      before: decodeCursor(query.cursor),
      limit: limit + 1,
    });
    return toPage(rows, limit, (r) => ({
      accountId: r.id,
      partyKind: r.kind,
      partyId: r.partyId,
      name: r.name,
      currency: r.currency,
      balance: r.balance,
    }));
  }

  /** GET /admin/settlements and /admin/business-payments: newest first, one party's or all, by currency. */
  async listReceipts(table: ReceiptTable, query: ReceiptListQuery) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.receipts(this.deps.db, table, {
      partyId: query.partyId,
      currency: query.currency,
      before: decodeCursor(query.cursor),
      limit: limit + 1,
    });
    return toRowPage(rows, limit, (r: ReceiptRow): RecordedReceipt => ({
      id: r.id,
      partyId: r.party_id,
      partyName: r.party_name,
      amount: r.amount,
      currency: r.currency,
      reference: r.reference,
      recordedBy: r.recorded_by,
      recordedByName: r.recorded_by_name,
      transactionId: r.transaction_id,
      createdAt: r.created_at.toISOString(),
    }));
  }

  /** 404 for no such party (or another role), 400 for a currency no country uses or not the party's country's. */
  private async checkParty(
    trx: Transaction<Database>,
    partyId: string,
    role: 'DRIVER' | 'BUSINESS',
    currency: string,
  ): Promise<void> {
    const party = await this.deps.repo.party(trx, partyId);
    const label = role === 'DRIVER' ? 'Driver' : 'Business';
    if (!party || party.role !== role) throw notFound(`${label} not found`, `${role}_NOT_FOUND`);
    if (!(await this.deps.repo.isCountryCurrency(trx, currency))) {
      throw badRequest(`body.currency ${currency} is not the currency of any country`, 'UNKNOWN_CURRENCY');
    }
    if (party.currency !== null && party.currency !== currency) {
      throw badRequest(
        `body.currency must be ${party.currency}, the currency of the ${label.toLowerCase()}'s country (got ${currency})`,
        'CURRENCY_MISMATCH',
      );
    }
  }

  private async record(
    trx: Transaction<Database>,
    table: ReceiptTable,
    adminId: string,
    partyId: string,
    input: ReceiptInput,
    posting: (id: string) => Pick<Parameters<LedgerService['post']>[1], 'sourceKey' | 'entries'>,
  ): Promise<Receipt> {
    if (!Number.isSafeInteger(input.amount) || input.amount < 1)
      throw new AppError(400, 'LEDGER_INVALID_AMOUNT', 'body.amount must be a positive whole number of minor units');
    const id = randomUUID();
    const now = this.deps.clock.now();
    const posted = await this.deps.ledger.post(trx, {
      ...posting(id),
      currency: input.currency,
      memo: input.reference,
    });
    await this.deps.repo.insertReceipt(trx, table, {
      id,
      partyId,
      amount: input.amount,
      currency: input.currency,
      reference: input.reference,
      recordedBy: adminId,
      transactionId: posted.id,
      now,
    });
    const balance = await this.deps.ledger.balance(
      input.currency,
      { kind: table === 'settlements' ? 'DRIVER' : 'BUSINESS', partyId },
      trx,
    );
    return {
      id,
      partyId,
      amount: input.amount,
      currency: input.currency,
      reference: input.reference,
      balance,
      recordedBy: adminId,
      transactionId: posted.id,
      createdAt: now.toISOString(),
    };
  }
}
