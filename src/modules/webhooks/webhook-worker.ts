// The reading side of the outbox: claims due deliveries (FOR UPDATE SKIP LOCKED), sends them, records the outcome.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../../config.js';
import { isDatabaseUnavailable } from '../../db/availability.js';
import type { DB } from '../../db/database.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { buildHeaders } from './webhook-signature.js';
import { OutboxRepository, type ClaimedRow, type Completion } from './outbox.repository.js';
import { WebhookSender, type AttemptResult } from './webhook-sender.js';

export type WorkerConfig = {
  webhooks: Pick<Config['webhooks'], 'retryScheduleMs' | 'timeoutMs' | 'allowPrivateTargets' | 'signatureHeader'>;
};

export interface WebhookWorkerOptions {
  db: DB;
  repo: OutboxRepository;
  clock: Clock;
  logger: Logger;
  config: WorkerConfig;
  bus?: Bus;
  registry?: Registry;
  /** How often the worker looks for due rows without a wake-up (default 500 ms). */
  pollIntervalMs?: number;
  /** Rows claimed per query (default 100). */
  batchSize?: number;
  /** Attempts in flight at once to one endpoint, per worker (default 16). */
  perEndpointConcurrency?: number;
  /** Attempts in flight at once, per worker (default 200). */
  maxInFlight?: number;
}

export type Outcome = 'succeeded' | 'retrying' | 'failed' | 'gone';

/** Outcomes wait at most this long to be written together. */
const FLUSH_DELAY_MS = 5;

/** Longest wait a Retry-After header may impose. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export function deliveryCounter(registry: Registry): Counter<'outcome'> {
  const name = 'webhook_deliveries_total';
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<'outcome'>;
  return new Counter({
    name,
    help: 'Webhook delivery attempts by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
}

/** Retry-After as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: Date): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

/** The wait before the next attempt, or undefined when the schedule is exhausted. */
export function nextDelay(
  step: number,
  schedule: number[],
  result: Pick<AttemptResult, 'status' | 'retryAfter'>,
  now: Date,
): number | undefined {
  if (step > schedule.length) return undefined;
  let delay = schedule[step - 1];
  if (result.status === 429 || result.status === 503) {
    const retryAfter = parseRetryAfter(result.retryAfter, now);
    if (retryAfter !== undefined) delay = Math.max(delay, Math.min(retryAfter, MAX_RETRY_AFTER_MS));
  }
  return delay;
}

export class WebhookWorker {
  readonly id = `worker-${randomUUID()}`;
  private readonly sender: WebhookSender;
  private readonly repo: OutboxRepository;
  private readonly counter: Counter<'outcome'> | undefined;
  private readonly pollIntervalMs: number;
  private readonly batchSize: number;
  private readonly perEndpoint: number;
  private readonly maxInFlight: number;
  private readonly leaseMs: number;
  private readonly inFlightByEndpoint = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private claiming = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private completions: { change: Completion; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private kickScheduled = false;
  private sending = 0;

  constructor(private readonly options: WebhookWorkerOptions) {
    const { config } = options;
    this.repo = options.repo;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.batchSize = options.batchSize ?? 100;
    this.perEndpoint = options.perEndpointConcurrency ?? 16;
    this.maxInFlight = options.maxInFlight ?? 200;
    // A claim is held for at most one attempt (timeout) plus a margin; a worker that dies loses its
    // claims when the lease runs out and another worker takes them (at least once, same webhook-id).
    this.leaseMs = config.webhooks.timeoutMs * 2 + 1000;
    this.sender = new WebhookSender({
      timeoutMs: config.webhooks.timeoutMs,
      allowPrivateTargets: config.webhooks.allowPrivateTargets,
      connectionsPerOrigin: this.perEndpoint,
    });
    this.counter = options.registry ? deliveryCounter(options.registry) : undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.options.bus?.subscribe('webhooks.wake', () => this.kick());
    this.kick();
  }

  /** Stops claiming, waits for the attempts in flight (each bounded by the timeout), closes connections. */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    while (this.claiming || this.inFlight.size > 0) {
      await Promise.all([...this.inFlight]);
      await this.flush();
      if (this.claiming) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await this.sender.close();
  }

  /** Claims and sends until nothing is due (tests drive the worker with this instead of start()). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.claimAndDispatch();
      total += claimed;
      await Promise.all([...this.inFlight]);
      if (claimed === 0 && this.inFlight.size === 0) return total;
    }
  }

  /** One claim after the current burst of finished attempts, not one per attempt. */
  private kickSoon(): void {
    if (this.kickScheduled || !this.running) return;
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      this.kick();
    });
  }

  private kick(): void {
    if (!this.running) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    void this.loop();
  }

  private async loop(): Promise<void> {
    this.claiming = true;
    try {
      let claimed: number;
      do {
        this.again = false;
        claimed = await this.claimAndDispatch();
      } while (this.running && (this.again || claimed === this.batchSize));
    } catch (err) {
      // The database being away is logged once by the pool's watcher; the next poll tries again.
      if (!isDatabaseUnavailable(err)) this.options.logger.error({ err }, 'webhook claim failed');
    } finally {
      this.claiming = false;
      if (this.running) {
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => this.kick(), this.pollIntervalMs);
        this.timer.unref?.();
      }
    }
  }

  private async claimAndDispatch(): Promise<number> {
    const room = this.maxInFlight - this.sending;
    if (room <= 0) return 0;
    const rows = await this.claim(Math.min(room, this.batchSize));
    for (const row of rows) {
      this.sending += 1;
      this.inFlightByEndpoint.set(row.endpoint_id, (this.inFlightByEndpoint.get(row.endpoint_id) ?? 0) + 1);
      // The endpoint's slot is free as soon as its answer is in; the outcome is written in a batch after.
      const release = () => {
        this.sending -= 1;
        const left = (this.inFlightByEndpoint.get(row.endpoint_id) ?? 1) - 1;
        if (left > 0) this.inFlightByEndpoint.set(row.endpoint_id, left);
        else this.inFlightByEndpoint.delete(row.endpoint_id);
        this.kickSoon();
      };
      const attempt = this.attempt(row, release)
        // An outcome not written leaves the row leased: it is attempted again when the lease runs out.
        .catch((err) => {
          if (!isDatabaseUnavailable(err))
            this.options.logger.error({ err, deliveryId: row.id }, 'webhook attempt bookkeeping failed');
        })
        .finally(() => this.inFlight.delete(attempt));
      this.inFlight.add(attempt);
    }
    return rows.length;
  }

  /** Claims and leases due rows, within this worker's free slots overall and per endpoint (OutboxRepository.claimDue). */
  private claim(limit: number): Promise<ClaimedRow[]> {
    const now = this.options.clock.now();
    const busyIds = [...this.inFlightByEndpoint.keys()];
    return this.repo.claimDue({
      now,
      lease: new Date(now.getTime() + this.leaseMs),
      workerId: this.id,
      busyIds,
      busyCounts: busyIds.map((id) => this.inFlightByEndpoint.get(id) ?? 0),
      perEndpoint: this.perEndpoint,
      limit,
    });
  }

  private async attempt(row: ClaimedRow, release: () => void): Promise<void> {
    const { config, clock } = this.options;
    const headers = buildHeaders({
      secret: row.secret,
      signatureHeader: config.webhooks.signatureHeader,
      event: row.event,
      webhookId: row.id,
      timestampSeconds: Math.floor(clock.now().getTime() / 1000),
      body: row.payload,
    });
    let result: AttemptResult;
    try {
      result = await this.sender.send(row.url, headers, row.payload);
    } finally {
      release();
    }
    await this.record(row, result);
  }

  /** Records an attempt's outcome; plain outcomes are written in batches (one UPDATE for many rows). */
  private async record(row: ClaimedRow, result: AttemptResult): Promise<void> {
    const now = this.options.clock.now();
    if (result.status === 410) {
      await this.recordGone(row, result, now);
      this.count(row, result, 'gone');
      return;
    }
    let outcome: Outcome;
    let change: Completion;
    if (result.ok) {
      outcome = 'succeeded';
      change = {
        id: row.id,
        attempts: row.attempts,
        status: 'SUCCEEDED',
        next: null,
        code: result.status,
        error: null,
        completed: now.toISOString(),
      };
    } else {
      const delay = nextDelay(
        row.attempts - row.attempt_base,
        this.options.config.webhooks.retryScheduleMs,
        result,
        now,
      );
      outcome = delay === undefined ? 'failed' : 'retrying';
      change = {
        id: row.id,
        attempts: row.attempts,
        status: delay === undefined ? 'FAILED' : 'PENDING',
        next: delay === undefined ? null : new Date(now.getTime() + delay).toISOString(),
        code: result.status,
        error: result.error,
        completed: delay === undefined ? now.toISOString() : null,
      };
    }
    await new Promise<void>((resolve, reject) => {
      this.completions.push({ change, resolve, reject });
      if (this.completions.length >= this.batchSize) void this.flush();
      else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
    });
    this.count(row, result, outcome);
  }

  private count(row: ClaimedRow, result: AttemptResult, outcome: Outcome): void {
    this.counter?.inc({ outcome });
    if (outcome !== 'succeeded') {
      this.options.logger.info(
        { deliveryId: row.id, endpointId: row.endpoint_id, status: result.status, outcome },
        'webhook attempt failed',
      );
    }
  }

  private async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.completions.splice(0);
    if (batch.length === 0) return;
    try {
      await this.repo.complete(
        this.options.db,
        this.id,
        batch.map((b) => b.change),
      );
      for (const b of batch) b.resolve();
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }

  private async recordGone(row: ClaimedRow, result: AttemptResult, now: Date): Promise<void> {
    // 410 Gone: the receiver says the endpoint no longer exists; stop sending to it.
    await this.options.db.transaction().execute(async (trx) => {
      const claim = { id: row.id, attempts: row.attempts, workerId: this.id };
      if (
        await this.repo.failClaimed(trx, claim, {
          status: result.status,
          error: `${result.error} (endpoint disabled)`,
          at: now,
        })
      ) {
        await this.repo.disableEndpoint(trx, row.endpoint_id, 'GONE', now);
      }
    });
  }
}
