// Every background loop, in one list. Shared work is safe for any one process (or several) to do:
// the API runs it in-process by default, `npm run worker` runs it alone. Per-process work belongs to
// each API process: the live driver index and the write-behind of the positions in its own memory.
import { isDatabaseUnavailable } from './db/availability.js';
import type { Deps } from './deps.js';
import type { Services } from './services.js';
import { clockRate } from './shared/clock.js';
import { SCHEDULER_POLL_MS } from './modules/scheduling/scheduling.service.js';

export interface Loop {
  name: string;
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

export const SWEEP_INTERVAL_MS = 10_000;
/** How often dispatch looks for lapsed offers and jobs due another try (cheap: two indexed statements). */
export const DISPATCH_SWEEP_INTERVAL_MS = 1000;
const CODE_PURGE_INTERVAL_MS = 10 * 60_000;
/** How often the pending balance deltas (the businesses' and the operator's accounts') are folded in (reads are exact either way). */
export const LEDGER_ROLL_UP_INTERVAL_MS = 60_000;
/**
 * How often last month's invoices are looked for: they are issued on the 1st (after a grace of a few
 * minutes); later turns find them done and create nothing (the run is idempotent and safe on several instances).
 */
export const INVOICE_RUN_INTERVAL_MS = 60 * 60_000;
/** How often M-Pesa payouts are sent, overdue ones asked about, and stored callbacks left unworked are worked. */
export const MPESA_SWEEP_INTERVAL_MS = 2000;
/** Unused quotes kept in PostgreSQL are deleted QUOTE_TTL after they expired, by this loop. */
const QUOTE_PURGE_INTERVAL_MS = 60_000;
/** How often recurring jobs' occurrences are created RECURRING_HORIZON ahead (safe on several instances: a unique key per occurrence). */
export const RECURRING_RUN_INTERVAL_MS = 60_000;

/** Runs `run` every `everyMs`, never overlapping itself; stop waits for a run in progress. */
export function periodic(
  deps: Pick<Deps, 'logger'>,
  name: string,
  everyMs: number,
  run: () => Promise<unknown>,
  atStart = false,
): Loop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  const tick = () => {
    running ??= run()
      // The database being away is logged once by the pool's watcher; the next turn tries again.
      .catch((err) => isDatabaseUnavailable(err) || deps.logger.warn({ err }, `${name} failed`))
      .finally(() => (running = undefined));
  };
  return {
    name,
    start() {
      if (atStart) tick();
      timer = setInterval(tick, everyMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export function sharedWork(deps: Deps, services: Services, options: { webhookWorker: boolean }): Loop[] {
  const loops = [
    periodic(deps, 'ride expiry sweep', Math.max(50, SWEEP_INTERVAL_MS / clockRate(deps.clock)), () =>
      Promise.all([services.rides.expireStale(), services.idempotency.purgeExpired()]),
    ),
    // At start too, so that processes restarted more often than the interval still purge.
    periodic(deps, 'purging expired codes', CODE_PURGE_INTERVAL_MS, () => services.auth.purgeExpired(), true),
    periodic(
      deps,
      'purging expired quotes',
      QUOTE_PURGE_INTERVAL_MS,
      () => services.pricing.deleteExpiredQuotes(),
      true,
    ),
    // Packages written without a tracking token hash (before migration 0012, or by an older version).
    periodic(deps, 'tracking token backfill', CODE_PURGE_INTERVAL_MS, () => services.tracking.backfillTokens(), true),
    periodic(deps, 'ledger roll-up', LEDGER_ROLL_UP_INTERVAL_MS, () => services.ledger.rollUp()),
    periodic(deps, 'monthly invoices', INVOICE_RUN_INTERVAL_MS, () => services.invoices.runDue(), true),
    periodic(deps, 'recurring jobs', RECURRING_RUN_INTERVAL_MS, () => services.recurring.materialise(), true),
  ];
  // Lateness alerts (section 23): every SLA_INTERVAL on every instance, one turn at a time across them.
  if (deps.config.alerts.monitor)
    loops.push(
      periodic(deps, 'lateness monitor', Math.max(50, deps.config.alerts.intervalMs / clockRate(deps.clock)), () =>
        services.alerts.monitor(),
      ),
    );
  const mpesaB2c = services.mpesaB2c;
  if (mpesaB2c) loops.push(periodic(deps, 'M-Pesa B2C', MPESA_SWEEP_INTERVAL_MS, () => mpesaB2c.sweep(), true));
  const stk = services.stk;
  if (stk) loops.push(periodic(deps, 'M-Pesa STK', MPESA_SWEEP_INTERVAL_MS, () => stk.sweep(), true));
  if (deps.config.dispatch.mode === 'offer') {
    // CLOCK_RATE (section 22): the loops that keep section 13's and 22's timing run that many times more often.
    const rate = clockRate(deps.clock);
    const sweep = periodic(
      deps,
      'dispatch sweep',
      Math.max(50, DISPATCH_SWEEP_INTERVAL_MS / rate),
      () => services.dispatch.sweep(),
      true,
    );
    // Scheduled jobs (section 22): due wake-ups and notices, every few seconds on every instance (each
    // job claimed once), and this instance's timer for the nearest wake-up in between.
    const scheduler = periodic(
      deps,
      'scheduled wake-ups',
      Math.max(50, SCHEDULER_POLL_MS / rate),
      () => services.scheduling.tick(),
      true,
    );
    const wakeUps: Loop = {
      name: 'scheduled wake-ups',
      start: () => {
        services.scheduling.start();
        scheduler.start();
      },
      stop: async () => {
        await scheduler.stop();
        await services.scheduling.stop();
      },
    };
    loops.push({
      name: 'dispatch sweep',
      // Dispatch picks drivers from the live index: a worker process loads one for it too.
      start: async () => {
        await services.live.start();
        sweep.start();
      },
      stop: async () => {
        await sweep.stop();
        await services.dispatch.idle();
        await services.live.stop();
      },
    });
    // After the sweep's start: a woken job is offered from the live index it loads.
    loops.push(wakeUps);
  }
  if (options.webhookWorker) {
    const worker = services.webhookWorker;
    loops.push({ name: `webhook worker ${worker.id}`, start: () => worker.start(), stop: () => worker.stop() });
  }
  return loops;
}

export function perProcessWork(services: Services): Loop[] {
  return [
    {
      name: 'driver index and position write-behind',
      start: () => services.live.start(),
      stop: () => services.live.stop(),
    },
    // The set of live device keys the OsmAnd route tells real keys from guesses by (kept current through the bus).
    { name: 'device keys', start: () => services.deviceKeys.start(), stop: async () => undefined },
    // Surge is stepped from this process's index (one process at a time when Redis is shared).
    { name: 'surge', start: () => services.pricing.start(), stop: () => services.pricing.stop() },
  ];
}

export function runLoops(loops: Loop[]): { loops: Loop[]; start(): Promise<void>; stop(): Promise<void> } {
  return {
    loops,
    async start() {
      for (const loop of loops) await loop.start();
    },
    async stop() {
      for (const loop of [...loops].reverse()) await loop.stop();
    },
  };
}
