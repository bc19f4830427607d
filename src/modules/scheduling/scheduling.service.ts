// Scheduled dispatch (contract section 22): a scheduled job waits, SCHEDULED, until start − lead, then
// enters dispatch (priced then unless a quote locked it). The wake-up is a row (dispatch_jobs), claimed
// by whichever instance comes first (FOR UPDATE SKIP LOCKED): never twice, never forgotten when an
// instance dies. Each instance polls every few seconds and keeps a timer for the nearest wake-up.
import type { Transaction } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { SchedulingConfig } from '../../config/scheduling.js';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { Database } from '../../db/schema.js';
import type { JobTypeName } from '../../db/tables/dispatch.js';
import type { Bus } from '../../shared/bus.js';
import { clockRate, type Clock } from '../../shared/clock.js';
import { LEAD_PERIOD_MS, leadOf, type Lead } from './lead.js';
import type { Area, DueJob, SchedulingRepository } from './scheduling.repository.js';

const WAITING: Record<JobTypeName, string> = { PACKAGE: 'PENDING', RIDE: 'REQUESTED' };
/** A job woken here and not offered yet is tried by dispatch's sweep after this (if this instance dies meanwhile). */
const ENTER_LEASE_MS = 15_000;
/** The customer of a scheduled ride nobody has accepted is told this long before scheduledAt. */
export const RIDE_UNACCEPTED_NOTICE_MS = 10 * 60_000;
/** A scheduled ride keeps searching until scheduledAt + this (rides' sweep). */
export const SCHEDULED_RIDE_SEARCH_MS = 10 * 60_000;
/** How many due jobs one wake-up takes in one transaction. */
const WAKE_BATCH = 50;
/** An area's lead is read from the database at most this often (simulated time). */
const LEAD_CACHE_MS = 10 * 60_000;
/** How often each instance looks for due wake-ups (real time; the timer wakes the nearest one sooner). */
export const SCHEDULER_POLL_MS = 5_000;

export interface ScheduledRide {
  jobId: string;
  customerId: string;
  phone: string;
  scheduledAt: Date;
}

export interface SchedulingDeps {
  db: DB;
  repo: SchedulingRepository;
  clock: Clock;
  bus: Bus;
  logger: Logger;
  config: SchedulingConfig;
  /** Whether scheduled jobs are dispatched (DISPATCH_MODE=offer): otherwise windows are only shown. */
  dispatching: boolean;
  /** The pickup's area (its surge cell and the 8 around it, section 18). */
  areaOf(lat: number, lng: number): Area;
  /** Prices a waking job in its transaction unless a quote locked its price (the packages' and rides' services). */
  reprice(trx: Transaction<Database>, jobType: JobTypeName, jobId: string): Promise<unknown>;
  /** Offers the job now (dispatch's kick). */
  kick(jobType: JobTypeName, jobId: string): void;
  /** Tells a ride's customer nobody has accepted yet (push and SMS); resolves once handed on. */
  tellUnaccepted(ride: ScheduledRide): Promise<void>;
}

export class SchedulingService {
  private readonly leads = new LRUCache<string, Lead>({ max: 5000 });
  private readonly leadAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = true;
  private waking: Promise<number> | undefined;

  constructor(private readonly deps: SchedulingDeps) {}

  /** The lead of a job picking up at (lat, lng): p90 of its area's accept-to-arrival times, or the default, plus the buffer. */
  async leadFor(jobType: JobTypeName, lat: number, lng: number, db: Executor = this.deps.db): Promise<Lead> {
    const area = this.deps.areaOf(lat, lng);
    const key = `${jobType}:${area.key}`;
    const now = this.deps.clock.nowMs();
    const cached = this.leads.get(key);
    if (cached && now - (this.leadAt.get(key) ?? 0) < LEAD_CACHE_MS) return cached;
    const { p90, samples } = await this.deps.repo.leadSamples(db, jobType, area, new Date(now - LEAD_PERIOD_MS));
    const lead = leadOf(p90, samples, this.deps.config);
    this.leads.set(key, lead);
    if (this.leadAt.size > 5000) this.leadAt.clear();
    this.leadAt.set(key, now);
    return lead;
  }

  /**
   * A new scheduled job (in its creation's transaction, after dispatch enrolled it): SCHEDULED until
   * start − lead (at once when that is already past). Returns the due time, or null when not dispatching.
   */
  async plan(
    trx: Transaction<Database>,
    job: { jobType: JobTypeName; jobId: string; start: Date; lat: number; lng: number; at: Date },
  ): Promise<{ dueAt: Date; lead: Lead } | null> {
    if (!this.deps.dispatching) return null;
    const lead = await this.leadFor(job.jobType, job.lat, job.lng, trx);
    const dueAt = new Date(Math.max(job.at.getTime(), job.start.getTime() - lead.ms));
    await this.deps.repo.schedule(trx, {
      jobId: job.jobId,
      start: job.start,
      dueAt,
      leadSeconds: Math.round(lead.ms / 1000),
      leadSamples: lead.samples,
      notifyAt: job.jobType === 'RIDE' ? new Date(job.start.getTime() - RIDE_UNACCEPTED_NOTICE_MS) : null,
      at: job.at,
    });
    return { dueAt, lead };
  }

  /** Whether the job waits SCHEDULED and has never entered dispatch (read in the caller's transaction). */
  neverDispatched(db: Executor, jobId: string): Promise<boolean> {
    return this.deps.repo.neverDispatched(db, jobId);
  }

  /** After the creation committed: this instance's timer wakes it on time (any instance's poll would too). */
  planned(dueAt: Date): void {
    this.arm(dueAt.getTime());
  }

  /** Wakes the due scheduled jobs (any instance, any number at once): each enters dispatch once. */
  wake(): Promise<number> {
    this.waking ??= this.wakeAll().finally(() => (this.waking = undefined));
    return this.waking;
  }

  private async wakeAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const woken = await this.wakeBatch();
      total += woken.length;
      for (const job of woken) this.entered(job);
      if (woken.length < WAKE_BATCH) break;
    }
    return total;
  }

  private async wakeBatch(): Promise<DueJob[]> {
    const { db, repo, clock } = this.deps;
    const now = clock.now();
    return db.transaction().execute(async (trx) => {
      const due = await repo.lockDue(trx, now, WAKE_BATCH);
      for (const job of due) await this.deps.reprice(trx, job.job_type, job.job_id);
      await repo.enter(
        trx,
        due.map((d) => d.job_id),
        now,
        new Date(now.getTime() + ENTER_LEASE_MS),
      );
      return due;
    });
  }

  private entered(job: DueJob): void {
    const now = this.deps.clock.nowMs();
    this.deps.logger.info(
      {
        jobType: job.job_type,
        jobId: job.job_id,
        start: job.scheduled_start,
        leadSeconds: job.lead_seconds,
        lateSeconds: Math.round((now - new Date(job.next_attempt_at).getTime()) / 1000),
      },
      'scheduled job entered dispatch',
    );
    this.deps.bus.publish('job.changed', {
      jobType: job.job_type,
      jobId: job.job_id,
      status: WAITING[job.job_type],
      driverId: null,
      actorId: null,
      assigned: false,
      final: false,
    });
    this.deps.kick(job.job_type, job.job_id);
  }

  /**
   * Tells the customers of scheduled rides nobody has accepted by scheduledAt − 10m: at most once each,
   * across instances and crashes. Each ride is claimed (notified_at, committed) before its customer is
   * told; an instance that dies between the claim and the sending, or a send that fails, leaves that
   * notice unsent (logged), never sent twice.
   */
  async notifyUnaccepted(): Promise<number> {
    const { repo, clock } = this.deps;
    const rides = await repo.claimNotifications(clock.now());
    let told = 0;
    for (const r of rides) {
      try {
        await this.deps.tellUnaccepted({
          jobId: r.job_id,
          customerId: r.customer_id,
          phone: r.phone,
          scheduledAt: new Date(r.scheduled_at),
        });
        told++;
      } catch (err) {
        // Claimed already: not tried again (at most once).
        this.deps.logger.warn({ err, jobId: r.job_id }, 'telling the customer of an unaccepted scheduled ride failed');
      }
    }
    return told;
  }

  /** One turn of the poll: due wake-ups, due notices, and the timer set for the nearest wake-up. */
  async tick(): Promise<void> {
    await this.wake();
    await this.notifyUnaccepted();
    const next = await this.deps.repo.nextDue();
    if (next) this.arm(next.getTime());
  }

  start(): void {
    this.stopped = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    await this.waking;
  }

  /** Sets this instance's timer for a wake-up at `atMs` (simulated time) when it is sooner than the one set. */
  private arm(atMs: number): void {
    if (this.stopped || atMs >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = atMs;
    const delay = Math.max(0, (atMs - this.deps.clock.nowMs()) / clockRate(this.deps.clock));
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        this.tick().catch((err) => this.deps.logger.warn({ err }, 'scheduled wake-up failed'));
      },
      Math.min(delay, 2 ** 31 - 1),
    );
    this.timer.unref();
  }
}
