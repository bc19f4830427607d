// A driver's earnings and a company's drivers' earnings over a period (contract section 21), read
// from the ledger: what was booked, not recomputed. Jobs are the driver's job-completed and
// cancellation-fee transactions in [from, to); tips and cash collected come from the same entries.
import { stringify } from 'csv-stringify/sync';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import { neutralizeCsvText } from '../../shared/csv-text.js';
import { badRequest } from '../../shared/errors.js';
import { parseBound } from '../../shared/period-bound.js';
import { EarningsRepository, type DriverEntryRow } from './earnings.repository.js';
import type { CompanyEarningsResponse, DriverEarningsResponse, EarningsQuery } from './earnings.schemas.js';

export const MAX_EARNINGS_DAYS = 92;
const DAY_MS = 86_400_000;

type Job = DriverEarningsResponse['jobs'][number];
type Total = DriverEarningsResponse['totals'][number];

/** A source key this report reads: a job's completion or cancellation fee, its tip, its cash on delivery. */
const JOB_KEY = /^job:(PACKAGE|RIDE):([0-9a-f-]{36}):(completed|cancellation-fee)$/;
const TIP_KEY = /^tip:(PACKAGE|RIDE):([0-9a-f-]{36})$/;
const COD_KEY = /^cod:([0-9a-f-]{36})$/;

export class EarningsService {
  private readonly repo: EarningsRepository;

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; repo: EarningsRepository }) {
    this.repo = deps.repo;
  }

  /** [from, to): defaults today 00:00 UTC to now; to after from; at most 92 days. */
  range(query: Pick<EarningsQuery, 'from' | 'to'>): { from: Date; to: Date } {
    const now = this.deps.clock.now();
    const from =
      query.from !== undefined ? parseBound('from', query.from) : new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
    // Until now, now included (the bound is exclusive).
    const to = query.to !== undefined ? parseBound('to', query.to) : new Date(now.getTime() + 1);
    if (to.getTime() <= from.getTime())
      throw badRequest('querystring.to must be after querystring.from', 'VALIDATION_FAILED');
    if (to.getTime() - from.getTime() > MAX_EARNINGS_DAYS * DAY_MS)
      throw badRequest(`An earnings report covers at most ${MAX_EARNINGS_DAYS} days`, 'EARNINGS_PERIOD_TOO_LONG');
    return { from, to };
  }

  async driver(driverId: string, query: EarningsQuery): Promise<DriverEarningsResponse> {
    const { from, to } = this.range(query);
    const [entries, balances] = await Promise.all([
      this.repo.driverEntries(this.deps.db, driverId, from, to),
      this.repo.balances(this.deps.db, [driverId]),
    ]);
    const { jobs, totals } = summarise(entries);
    return {
      driverId,
      from: from.toISOString(),
      to: to.toISOString(),
      jobs,
      totals,
      balances: balances.map((b) => ({ currency: b.currency.trim(), balance: Number(b.balance) })),
    };
  }

  /**
   * Every driver of the company with the totals of driver() and the balances: three statements (the
   * drivers, all their entries in the period, all their balances) whatever the number of drivers,
   * grouped here by driver.
   */
  async company(companyId: string, query: EarningsQuery): Promise<CompanyEarningsResponse> {
    const { from, to } = this.range(query);
    const [drivers, entries, balances] = await Promise.all([
      this.repo.companyDrivers(this.deps.db, companyId),
      this.repo.companyDriverEntries(this.deps.db, companyId, from, to),
      this.repo.companyDriverBalances(this.deps.db, companyId),
    ]);
    const entriesOf = groupBy(entries, (e) => e.driver_id);
    const balancesOf = groupBy(balances, (b) => b.party_id);
    const result: CompanyEarningsResponse['drivers'] = drivers.map((d) => ({
      driverId: d.id,
      firstName: d.first_name,
      lastName: d.last_name,
      totals: summarise(entriesOf.get(d.id) ?? []).totals,
      balances: (balancesOf.get(d.id) ?? []).map((b) => ({ currency: b.currency.trim(), balance: Number(b.balance) })),
    }));
    return { companyId, from: from.toISOString(), to: to.toISOString(), drivers: result };
  }
}

/** Rows by key, each group in the rows' order. */
function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const group = groups.get(k);
    if (group) group.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}

/**
 * The driver's entries grouped: one job per completion or cancellation-fee transaction (its amount
 * is the transaction's credits, its earnings the driver's EARNINGS entry, its cash the driver's
 * CASH_COLLECTED), tips (TIP entries under tip keys) and cash on delivery (COD entries) added to
 * their job when it is in the report and to the totals in any case.
 */
export function summarise(entries: DriverEntryRow[]): { jobs: Job[]; totals: Total[] } {
  const jobs = new Map<string, Job>();
  const totals = new Map<string, Total>();
  const total = (currency: string) => {
    let t = totals.get(currency);
    if (!t) totals.set(currency, (t = { currency, jobs: 0, amount: 0, earnings: 0, tips: 0, cashCollected: 0 }));
    return t;
  };
  const later: { jobKey: string; currency: string; tip: number; cash: number }[] = [];
  for (const e of entries) {
    const currency = e.currency.trim();
    const amount = Number(e.amount);
    const job = JOB_KEY.exec(e.source_key);
    if (job) {
      const [, jobType, jobId, what] = job;
      let item = jobs.get(e.source_key);
      if (!item) {
        item = {
          jobType: jobType as Job['jobType'],
          jobId: jobId!,
          kind: what === 'completed' ? 'COMPLETED' : 'CANCELLATION_FEE',
          completedAt: e.created_at.toISOString(),
          currency,
          amount: Number(e.credited),
          earnings: 0,
          tip: 0,
          cashCollected: 0,
        };
        jobs.set(e.source_key, item);
        const t = total(currency);
        t.jobs += 1;
        t.amount += item.amount;
      }
      if (e.code === 'EARNINGS') {
        item.earnings += amount;
        total(currency).earnings += amount;
      }
      if (e.code === 'CASH_COLLECTED') {
        item.cashCollected -= amount;
        total(currency).cashCollected -= amount;
      }
      continue;
    }
    const tip = TIP_KEY.exec(e.source_key);
    if (tip) {
      // A cash tip is a pair on the driver's account: CASH_COLLECTED − and TIP +.
      if (e.code === 'TIP') later.push({ jobKey: `job:${tip[1]}:${tip[2]}:completed`, currency, tip: amount, cash: 0 });
      if (e.code === 'CASH_COLLECTED')
        later.push({ jobKey: `job:${tip[1]}:${tip[2]}:completed`, currency, tip: 0, cash: -amount });
      continue;
    }
    const cod = COD_KEY.exec(e.source_key);
    if (cod && e.code === 'COD')
      later.push({ jobKey: `job:PACKAGE:${cod[1]}:completed`, currency, tip: 0, cash: -amount });
  }
  for (const l of later) {
    const t = total(l.currency);
    t.tips += l.tip;
    t.cashCollected += l.cash;
    const item = jobs.get(l.jobKey);
    if (item) {
      item.tip += l.tip;
      item.cashCollected += l.cash;
    }
  }
  return {
    jobs: [...jobs.values()],
    totals: [...totals.values()].sort((a, b) => a.currency.localeCompare(b.currency)),
  };
}

const COLUMNS = [
  'type',
  'jobType',
  'jobId',
  'kind',
  'completedAt',
  'currency',
  'amount',
  'earnings',
  'tip',
  'cashCollected',
  'balance',
] as const;

/**
 * RFC 4180 CSV with CRLF and a header row: a JOB row per job, a TOTAL row per currency, a BALANCE row
 * per currency. Ids, kinds, times and numbers are the service's own; the currency, the one text
 * stored from input, goes through the formula neutraliser.
 */
export function driverEarningsCsv(report: DriverEarningsResponse): string {
  const text = (v: string) => neutralizeCsvText(v);
  const records: (string | number)[][] = [];
  for (const j of report.jobs)
    records.push([
      'JOB',
      j.jobType,
      j.jobId,
      j.kind,
      j.completedAt,
      text(j.currency),
      j.amount,
      j.earnings,
      j.tip,
      j.cashCollected,
      '',
    ]);
  for (const t of report.totals)
    records.push(['TOTAL', '', '', '', '', text(t.currency), t.amount, t.earnings, t.tips, t.cashCollected, '']);
  for (const b of report.balances)
    records.push(['BALANCE', '', '', '', '', text(b.currency), '', '', '', '', b.balance]);
  return stringify(records, { header: true, columns: [...COLUMNS], record_delimiter: 'windows' });
}
