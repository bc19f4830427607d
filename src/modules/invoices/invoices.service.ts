// Business invoices (contract section 21): a month's (UTC) ledger entries of each business account,
// issued once, numbered without gaps, readable as JSON or PDF (docs/money.md).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { decodeCursor, toPage } from '../../shared/pagination.js';
import {
  invoiceLines,
  invoiceNumber,
  invoiceTotals,
  jobOfSourceKey,
  type InvoiceLine,
  type InvoiceTotals,
} from './invoice-lines.js';
import { monthOf, parseMonth, previousMonth } from './invoice-month.js';
import type { LocalesService } from '../locales/locales.service.js';
import { renderInvoicePdf, type InvoiceDocument } from './invoice-pdf.js';
import type { InvoiceRow, InvoicesRepository, NewInvoice } from './invoices.repository.js';

/**
 * The automatic run waits this long after midnight UTC on the 1st: an entry is dated when it is
 * posted, and a transaction posted at 23:59:59.9 may commit a moment after midnight.
 */
export const INVOICE_RUN_GRACE_MS = 5 * 60_000;

export interface InvoiceSummary {
  id: string;
  number: string;
  month: string;
  currency: string;
  business: { id: string; name: string; address: string | null };
  openingBalance: number;
  closingBalance: number;
  /** What the business owes at the end of the month: −closingBalance when negative, else 0. */
  amountDue: number;
  totals: InvoiceTotals;
  lineCount: number;
  issuedAt: string;
}

export interface Invoice extends InvoiceSummary {
  lines: InvoiceLine[];
}

const toSummary = (r: InvoiceRow): InvoiceSummary => ({
  id: r.id,
  number: r.number,
  month: r.month,
  currency: r.currency,
  business: { id: r.business_id, name: r.business_name, address: r.business_address },
  openingBalance: r.opening_balance,
  closingBalance: r.closing_balance,
  amountDue: r.closing_balance < 0 ? -r.closing_balance : 0,
  totals: r.totals as InvoiceTotals,
  lineCount: r.line_count,
  issuedAt: r.created_at.toISOString(),
});

const invoiceNotFound = () => notFound('Invoice not found', 'INVOICE_NOT_FOUND');

export class InvoiceService {
  constructor(
    private readonly deps: { db: Kysely<Database>; clock: Clock; repo: InvoicesRepository; locales?: LocalesService },
  ) {}

  /**
   * Issues the month's invoices: one per business account (business and currency) with entries in
   * the month and none yet. Idempotent: a second run, or one on another instance at the same time,
   * creates nothing new (an advisory lock orders runs; the unique (business, month, currency) holds
   * it too). Only a month that has ended (400 MONTH_NOT_CLOSED otherwise).
   */
  async runMonth(month: string): Promise<{ month: string; created: number; invoices: InvoiceSummary[] }> {
    const period = parseMonth(month);
    const now = this.deps.clock.now();
    if (period.end.getTime() > now.getTime()) {
      throw badRequest(
        `body.month ${month} has not ended yet (months are UTC): only a past month can be invoiced`,
        'MONTH_NOT_CLOSED',
      );
    }
    const { repo } = this.deps;
    const rows = await this.deps.db.transaction().execute(async (trx) => {
      await repo.lockRuns(trx);
      const due = await repo.dueAccounts(trx, period.start, period.end, period.monthStart);
      let seq = await repo.lastSeq(trx);
      const created: NewInvoice[] = [];
      for (const account of due) {
        const opening = await repo.balanceBefore(trx, account.account_id, period.start);
        const entries = await repo.entriesBetween(trx, account.account_id, period.start, period.end);
        const packageIds = [
          ...new Set(
            entries
              .map((e) => jobOfSourceKey(e.source_key))
              .filter((j) => j?.jobType === 'PACKAGE')
              .map((j) => j!.jobId),
          ),
        ];
        const references = await repo.packageReferences(trx, packageIds);
        const lines = invoiceLines(
          entries.map((e) => ({
            amount: e.amount,
            code: e.code,
            createdAt: e.created_at,
            sourceKey: e.source_key,
            memo: e.memo,
          })),
          references,
        );
        const totals = invoiceTotals(lines);
        seq += 1;
        created.push({
          id: randomUUID(),
          seq,
          number: invoiceNumber(seq),
          business_id: account.business_id,
          monthStart: period.monthStart,
          currency: account.currency,
          business_name: account.business_name,
          business_address: account.business_address,
          opening_balance: opening,
          closing_balance: opening + totals.net,
          totals,
          lines,
          line_count: lines.length,
          created_at: now,
        });
      }
      await repo.insert(trx, created);
      return created;
    });
    return {
      month,
      created: rows.length,
      invoices: rows.map((r) => toSummary({ ...r, month, totals: r.totals, lines: r.lines })),
    };
  }

  /** The background task: last month's invoices, once the grace after midnight on the 1st has passed. */
  async runDue(): Promise<number> {
    const month = previousMonth(monthOf(new Date(this.deps.clock.nowMs() - INVOICE_RUN_GRACE_MS)));
    return (await this.runMonth(month)).created;
  }

  /** A business's own invoice, or any for an admin (businessId undefined); someone else's is 404. */
  async get(id: string, businessId?: string): Promise<Invoice> {
    const row = await this.deps.repo.getById(this.deps.db, id);
    if (!row || (businessId !== undefined && row.business_id !== businessId)) throw invoiceNotFound();
    return { ...toSummary(row), lines: row.lines as InvoiceLine[] };
  }

  async pdf(id: string, businessId?: string): Promise<{ filename: string; pdf: Buffer }> {
    const invoice = await this.get(id, businessId);
    const doc: InvoiceDocument = invoice;
    // In the business's language (section 27), whoever downloads it.
    const locale = (await this.deps.locales?.forUser(invoice.business.id))?.locale ?? 'en';
    return { filename: `invoice-${invoice.number}.pdf`, pdf: await renderInvoicePdf(doc, locale) };
  }

  async list(query: { businessId?: string; month?: string; cursor?: string; limit?: number }) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.list(this.deps.db, {
      businessId: query.businessId,
      monthStart: query.month ? parseMonth(query.month).monthStart : undefined,
      before: decodeCursor(query.cursor),
      limit: limit + 1,
    });
    return toPage(
      rows.map((r) => ({ ...r, createdAt: r.created_at })),
      limit,
      toSummary,
    );
  }
}
