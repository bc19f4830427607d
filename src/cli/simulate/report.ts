// The simulator's report: the counts, waits and prices of a run, printed as text or one JSON line.
import type { Stats } from './client.js';
import type { JobRecord } from './model.js';
import type { Lateness, Punctuality } from './punctuality.js';

/** Per currency, in its minor unit (cents for KES). */
export interface CurrencyTotals {
  currency: string;
  orders: number;
  priceSum: number;
  priceAverage: number;
  rideFares: number;
  rideFareSum: number;
}

export interface Summary {
  durationSeconds: number;
  drivers: { wanted: number; online: number };
  jobs: {
    created: number;
    packages: number;
    rides: number;
    assigned: number;
    completed: number;
    failed: number;
    cancelled: number;
    open: number;
  };
  offers: { received: number; accepted: number; declined: number; lapsed: number; withdrawn: number };
  nearbyAccepts: { tried: number; won: number };
  assignSeconds: { p50: number | null; p95: number | null; p99: number | null };
  prices: { quoted: number; byCurrency: CurrencyTotals[] };
  /** Packages with cash on delivery (--cod-share), those delivered, and the cash confirmed for them (minor units). */
  cashOnDelivery: { packages: number; delivered: number; collected: number };
  requests: {
    total: number;
    rateLimited: number;
    serverErrors: number;
    networkErrors: number;
    byStatus: Record<string, number>;
  };
  /** Section 22: the jobs booked ahead and their pickups against their windows (null: none booked). */
  scheduled: Punctuality | null;
  /** Jobs late at their pickup or drop-off window (null: none booked ahead). */
  late: Lateness | null;
  /** Alerts raised for the run's jobs, by kind (section 23); null when the instance has no GET /alerts. */
  alerts: Record<string, number> | null;
  /** The instance's CLOCK_RATE as given, and as its answers' timestamps show it (null: too short to tell). */
  clock: { rate: number; observedRate: number | null };
  errors: string[];
}

/** What the end-of-run reading adds (section 22 and 23). */
export interface TimeReport {
  scheduled: Punctuality | null;
  late: Lateness | null;
  alerts: Record<string, number> | null;
  clock: Summary['clock'];
}

function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function countJobs(jobs: JobRecord[]): Summary['jobs'] {
  return {
    created: jobs.length,
    packages: jobs.filter((j) => j.type === 'PACKAGE').length,
    rides: jobs.filter((j) => j.type === 'RIDE').length,
    assigned: jobs.filter((j) => j.assignedAt).length,
    completed: jobs.filter((j) => j.outcome === 'COMPLETED').length,
    failed: jobs.filter((j) => j.outcome === 'FAILED').length,
    cancelled: jobs.filter((j) => j.outcome === 'CANCELLED').length,
    open: jobs.filter((j) => !j.outcome).length,
  };
}

function prices(jobs: JobRecord[], quoted: number): Summary['prices'] {
  const byCurrency = new Map<string, CurrencyTotals>();
  for (const job of jobs) {
    if (!job.price) continue;
    const c = job.price.currency;
    const t = byCurrency.get(c) ?? {
      currency: c,
      orders: 0,
      priceSum: 0,
      priceAverage: 0,
      rideFares: 0,
      rideFareSum: 0,
    };
    t.orders++;
    t.priceSum += job.price.amount;
    if (job.fare) {
      t.rideFares++;
      t.rideFareSum += job.fare.amount;
    }
    byCurrency.set(c, t);
  }
  for (const t of byCurrency.values()) t.priceAverage = Math.round(t.priceSum / t.orders);
  return { quoted, byCurrency: [...byCurrency.values()] };
}

function cashOnDelivery(jobs: JobRecord[]): Summary['cashOnDelivery'] {
  const cod = jobs.filter((j) => j.cashOnDelivery !== undefined);
  const delivered = cod.filter((j) => j.outcome === 'COMPLETED');
  return {
    packages: cod.length,
    delivered: delivered.length,
    collected: delivered.reduce((s, j) => s + j.cashOnDelivery!, 0),
  };
}

export interface RunTally {
  startedMs: number;
  jobs: JobRecord[];
  quoted: number;
  drivers: Summary['drivers'];
  offers: Summary['offers'];
  nearby: Summary['nearbyAccepts'];
  stats: Stats;
  errors: string[];
  time: TimeReport;
}

export function summarize(run: RunTally): Summary {
  const waits = run.jobs
    .filter((j) => j.assignedAt)
    .map((j) => (j.assignedAt! - j.createdAt) / 1000)
    .sort((a, b) => a - b);
  const s = run.stats;
  return {
    durationSeconds: Math.round((Date.now() - run.startedMs) / 100) / 10,
    drivers: run.drivers,
    jobs: countJobs(run.jobs),
    offers: { ...run.offers },
    nearbyAccepts: { ...run.nearby },
    assignSeconds: { p50: percentile(waits, 50), p95: percentile(waits, 95), p99: percentile(waits, 99) },
    prices: prices(run.jobs, run.quoted),
    cashOnDelivery: cashOnDelivery(run.jobs),
    requests: {
      total: s.requests,
      rateLimited: s.rateLimited,
      serverErrors: s.serverErrors,
      networkErrors: s.networkErrors,
      byStatus: Object.fromEntries(s.byStatus),
    },
    ...run.time,
    errors: run.errors,
  };
}

export function printSummary(summary: Summary, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(summary));
    return;
  }
  const s = summary;
  const fmt = (n: number | null) => (n === null ? '-' : `${n.toFixed(1)} s`);
  console.log(
    [
      `simulated ${s.durationSeconds} s: ${s.drivers.online}/${s.drivers.wanted} drivers online`,
      `jobs: ${s.jobs.created} created (${s.jobs.packages} packages, ${s.jobs.rides} rides), ${s.jobs.assigned} assigned, ${s.jobs.completed} completed, ${s.jobs.failed} failed, ${s.jobs.cancelled} cancelled, ${s.jobs.open} open`,
      `offers: ${s.offers.received} received, ${s.offers.accepted} accepted, ${s.offers.declined} declined, ${s.offers.lapsed} lapsed, ${s.offers.withdrawn} withdrawn; nearby accepts ${s.nearbyAccepts.won}/${s.nearbyAccepts.tried} won`,
      `creation → assignment: p50 ${fmt(s.assignSeconds.p50)}, p95 ${fmt(s.assignSeconds.p95)}, p99 ${fmt(s.assignSeconds.p99)}`,
      `prices (minor units): ${s.prices.quoted} quoted` +
        s.prices.byCurrency
          .map(
            (c) =>
              `; ${c.currency} ${c.orders} orders, sum ${c.priceSum}, average ${c.priceAverage}, ${c.rideFares} ride fares, sum ${c.rideFareSum}`,
          )
          .join(''),
      `cash on delivery: ${s.cashOnDelivery.packages} packages, ${s.cashOnDelivery.delivered} delivered, ${s.cashOnDelivery.collected} collected (minor units)`,
      ...timeLines(s),
      `requests: ${s.requests.total}, ${s.requests.rateLimited} rate limited (waited), ${s.requests.serverErrors} server errors, ${s.requests.networkErrors} network errors; by status ${Object.entries(
        s.requests.byStatus,
      )
        .map(([status, n]) => `${status} ${n}`)
        .join(', ')}`,
      ...(s.errors.length ? ['errors:', ...s.errors.slice(0, 10).map((e) => `  ${e}`)] : []),
    ].join('\n'),
  );
}

function timeLines(s: Summary): string[] {
  const lines: string[] = [];
  const sc = s.scheduled;
  if (sc) {
    const share = sc.inWindowShare === null ? '-' : `${(sc.inWindowShare * 100).toFixed(1)} %`;
    lines.push(
      `scheduled: ${sc.booked} booked ahead (${sc.recurring} from recurring jobs), ${sc.due} due: ${sc.inWindow} picked up inside their window (${share}), ${sc.early} early, ${sc.latePickups} late (never assigned ${sc.lateBecause.neverAssigned}, assigned after the window's start ${sc.lateBecause.assignedAfterStart}, before it ${sc.lateBecause.assignedBeforeStart}); ${sc.notDue} not due yet`,
      `dispatch lead (s): min ${sc.leadSeconds.min ?? '-'}, p50 ${sc.leadSeconds.p50 ?? '-'}, max ${sc.leadSeconds.max ?? '-'}; ${sc.offeredEarly} offered before start − lead − 60 s`,
    );
  }
  if (s.late)
    lines.push(
      `late jobs: ${s.late.jobs} (pickup ${s.late.pickup}, drop-off ${s.late.dropoff}; ${s.late.onPurpose} made late on purpose)`,
    );
  lines.push(
    s.alerts === null
      ? 'alerts: n/a'
      : `alerts: ${
          Object.entries(s.alerts)
            .map(([kind, n]) => `${kind} ${n}`)
            .join(', ') || 'none'
        }`,
  );
  if (s.clock.rate !== 1 || s.clock.observedRate !== null)
    lines.push(`clock rate: ${s.clock.rate} (observed ${s.clock.observedRate ?? '-'})`);
  return lines;
}
