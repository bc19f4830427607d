// Dispatch (contract section 13): each waiting job is offered to the eligible driver with the
// smallest ETA, one open offer per job and per driver (PostgreSQL's partial unique indexes), on to the
// next driver when it is declined or lapses; NO_DRIVERS jobs are tried again every
// DISPATCH_RETRY_INTERVAL and as soon as a driver comes online or moves near them.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { Counter, Histogram } from 'prom-client';
import type { Database } from '../../db/schema.js';
import type { JobTypeName, OfferState } from '../../db/tables/dispatch.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { AppError, conflict, notFound } from '../../shared/errors.js';
import { SERVICE_BITS, distanceMeters } from '../matching/driver-index.js';
import type { DispatchHooks } from '../jobs/lifecycle.js';
import { json } from '../../db/json.js';
import type { RecordAnswer } from '../../shared/record-answer.js';
import type { DispatchJob, OfferRow } from './dispatch.repository.js';
import { dispatchLog } from './dispatch-log.js';
import { ORDER_TYPE, WAITING, type DispatchDeps, type Offer } from './dispatch.types.js';
import { candidateIds, pickDriver, type Choice, type SkipReason } from './policy.js';

export type { DispatchDeps, Offer } from './dispatch.types.js';

/** Offers tried per dispatch when drivers keep getting another job's offer first. */
const MAX_TRIES = 3;
/** How long a claimed due job is left to the instance that claimed it. */
const CLAIM_LEASE_MS = 15_000;
/** A driver's moves are checked against the waiting jobs at most this often. */
const DRIVER_CHECK_INTERVAL_MS = 3_000;

export const offerNotFound = () => notFound('Offer not found', 'OFFER_NOT_FOUND');

export class DispatchService implements DispatchHooks {
  readonly mode: DispatchHooks['mode'];
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly outcomes: Counter<'outcome'>;
  private readonly assignment: Histogram;
  private readonly pickSeconds: Histogram;
  private readonly releases: Counter<'jobType'>;
  private readonly flagged: Counter<'jobType'>;
  /** NO_DRIVERS jobs as of the last sweep (and those this instance marked since): checked when a driver moves. */
  private waiting = new Map<string, { jobType: JobTypeName; vehicleType: string; lat: number; lng: number }>();
  private readonly lastDriverCheck = new Map<string, number>();

  constructor(private readonly deps: DispatchDeps) {
    this.mode = deps.config.dispatch.mode;
    this.outcomes = new Counter({
      name: 'dispatch_offers_total',
      help: 'Dispatch offers by outcome (SENT when made; ACCEPTED, DECLINED, LAPSED, WITHDRAWN when closed)',
      labelNames: ['outcome'],
      registers: [deps.registry],
    });
    this.assignment = new Histogram({
      name: 'dispatch_assignment_seconds',
      help: 'Time from a job entering dispatch (its creation) to its assignment',
      buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers: [deps.registry],
    });
    this.pickSeconds = new Histogram({
      name: 'dispatch_pick_seconds',
      help: 'Time to pick the driver for an offer (the policy over the live index)',
      buckets: [0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05],
      registers: [deps.registry],
    });
    this.releases = new Counter({
      name: 'dispatch_releases_total',
      help: 'Jobs handed back by their driver or taken back by an admin',
      labelNames: ['jobType'],
      registers: [deps.registry],
    });
    this.flagged = new Counter({
      name: 'dispatch_flagged_jobs_total',
      help: 'Jobs flagged for an admin: released more than DISPATCH_MAX_RELEASES times',
      labelNames: ['jobType'],
      registers: [deps.registry],
    });
  }

  /** The job services that accept a job (set once both exist: they take dispatch as a hook). */

  /** Resolves when the dispatch work started so far has finished (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private track(work: Promise<unknown>): void {
    const p = work
      .catch((err) => this.deps.logger.warn({ err }, 'dispatch failed'))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  // --- hooks of the job lifecycle -------------------------------------------------------------

  async enroll(
    trx: Transaction<Database>,
    job: {
      jobType: JobTypeName;
      jobId: string;
      vehicleType: DispatchJob['vehicleType'];
      lat: number;
      lng: number;
      at: Date;
    },
  ): Promise<void> {
    if (this.mode !== 'offer') return;
    await this.deps.repo.enroll(trx, {
      job_id: job.jobId,
      job_type: job.jobType,
      vehicle_type: job.vehicleType,
      pickup_lat: job.lat,
      pickup_lng: job.lng,
      next_attempt_at: job.at,
      created_at: job.at,
    });
  }

  kick(jobType: JobTypeName, jobId: string): void {
    if (this.mode !== 'offer') return;
    this.track(this.dispatch(jobType, jobId));
  }

  async changed(
    trx: Transaction<Database>,
    change: {
      jobType: JobTypeName;
      jobId: string;
      from: string;
      status: string;
      driverId: string | null;
      assigned: boolean;
      at: Date;
    },
  ): Promise<(() => void) | undefined> {
    if (change.status === WAITING[change.jobType]) return undefined;
    // A job that had left waiting has nothing open here: its offers were closed and its dispatch row
    // marked DONE in the change that took it out of waiting (insertOffer re-checks the status under lock).
    if (change.from !== WAITING[change.jobType]) return undefined;
    const closed = await this.deps.repo.closeOpenOffers(
      trx,
      change.jobId,
      change.assigned ? change.driverId : null,
      change.at,
    );
    const done = await this.deps.repo.markDone(trx, change.jobId, change.at);
    // Booked for later (section 22): nobody takes it before it enters dispatch at start − lead (the
    // nearby lists leave it out; this refuses an accept by id). The transaction rolls back.
    if (change.assigned && done?.was === 'SCHEDULED')
      throw conflict('This job is booked for later: drivers can take it once it is offered', 'JOB_SCHEDULED');
    return () => {
      this.waiting.delete(change.jobId);
      this.announceClosed(closed.map((o) => ({ ...o, job_id: change.jobId, job_type: change.jobType })));
      if (change.assigned && done)
        this.assignment.observe((change.at.getTime() - new Date(done.created_at).getTime()) / 1000);
    };
  }

  async released(
    trx: Transaction<Database>,
    release: {
      jobType: JobTypeName;
      jobId: string;
      driverId: string;
      reason: string | null;
      actorId: string;
      at: Date;
      releases: number;
    },
  ): Promise<() => void> {
    if (this.mode === 'offer') await this.deps.repo.searchAfterRelease(trx, release);
    return () => {
      this.releases.inc({ jobType: release.jobType });
      const max = this.deps.config.dispatch.maxReleases;
      if (release.releases > max) {
        // Flagged once (the metric) when it crosses the limit; every release beyond it is logged.
        if (release.releases === max + 1) this.flagged.inc({ jobType: release.jobType });
        const { jobType, jobId, driverId, actorId, releases } = release;
        this.deps.logger.warn(
          { jobType, jobId, driverId, actorId, releases, maxReleases: max },
          'job released more than DISPATCH_MAX_RELEASES times: flagged for an admin',
        );
      }
      this.kick(release.jobType, release.jobId);
    };
  }

  /** A job ended outside the lifecycle (a ride expired by its sweep): its open offer is withdrawn. */
  jobEnded(jobType: JobTypeName, jobId: string): void {
    if (this.mode !== 'offer') return;
    this.waiting.delete(jobId);
    this.track(
      (async () => {
        const now = this.deps.clock.now();
        const closed = await this.deps.repo.closeOpenOffers(null, jobId, null, now);
        await this.deps.repo.markDone(null, jobId, now);
        this.announceClosed(closed.map((o) => ({ ...o, job_id: jobId, job_type: jobType })));
      })(),
    );
  }

  // --- the decision ---------------------------------------------------------------------------

  /** Offers the job to its best driver now, or marks it NO_DRIVERS. */
  async dispatch(jobType: JobTypeName, jobId: string): Promise<Offer | null> {
    const { repo, clock, config } = this.deps;
    const row = await repo.dispatchRow(jobId);
    // A scheduled job is not offered before start − lead: the scheduler's wake-up moves it to SEARCHING.
    if (!row || row.state === 'OFFERED' || row.state === 'DONE' || row.state === 'SCHEDULED') return null;
    const job = await repo.loadJob(jobType, jobId);
    if (!job) return null;
    if (job.status !== WAITING[jobType]) {
      await repo.markDone(null, jobId, clock.now());
      return null;
    }
    const excluded = new Map<string, SkipReason>();
    for (const e of await repo.exclusions(jobId)) {
      excluded.set(e.driver_id, e.why === 'OPEN' || e.why === 'ACCEPTED' ? 'OFFERED_BEFORE' : (e.why as SkipReason));
    }
    const now = clock.nowMs();
    const base = {
      lat: job.pickup.location.lat,
      lng: job.pickup.location.lng,
      vehicleType: job.vehicleType,
      orderType: ORDER_TYPE[jobType],
      staleBefore: now - config.drivers.locationTtlMs,
      maxRadiusMeters: config.dispatch.maxRadiusMeters,
      excluded,
      preferred: job.preferredDriverId ?? null,
    };
    const nearest = candidateIds(this.deps.index, base, 20);
    // The preferred driver (a failed job's parcel holder) may be anywhere: its offers and route are read too.
    const ids = base.preferred && !nearest.includes(base.preferred) ? [...nearest, base.preferred] : nearest;
    const holding = new Set(await repo.holdingOffers(ids));
    const batch = await this.batchFits(jobType, jobId, ids, now);
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const started = performance.now();
      const picked = pickDriver(this.deps.index, {
        ...base,
        radiusMeters: config.dispatch.radiusMeters,
        holding,
        batch,
      });
      this.pickSeconds.observe((performance.now() - started) / 1000);
      if (!picked.choice) break;
      const way = this.deps.roadEta ? await this.byRoad(job, picked.choice) : picked.choice;
      const offer = this.offerFor(job, picked.choice, way);
      const created = clock.now();
      const outcome = await repo.insertOffer(
        {
          id: offer.id,
          job_type: jobType,
          job_id: jobId,
          driver_id: picked.choice.driverId,
          offer,
          choice: picked.choice,
          created_at: created,
          expires_at: new Date(offer.expiresAt),
        },
        WAITING[jobType],
      );
      if (outcome === 'JOB') return null;
      if (outcome === 'DRIVER') {
        holding.add(picked.choice.driverId);
        continue;
      }
      this.waiting.delete(jobId);
      this.touched(jobType, jobId);
      this.outcomes.inc({ outcome: 'SENT' });
      this.deps.bus.publish('driver.push', { driverId: picked.choice.driverId, message: { type: 'offer', offer } });
      this.deps.offerMade?.(picked.choice.driverId, offer);
      return offer;
    }
    const nowDate = clock.now();
    if (await repo.markNoDrivers(jobId, nowDate, new Date(nowDate.getTime() + config.dispatch.retryIntervalMs))) {
      if (row.state !== 'NO_DRIVERS') this.touched(jobType, jobId);
      this.waiting.set(jobId, {
        jobType,
        vehicleType: job.vehicleType,
        lat: job.pickup.location.lat,
        lng: job.pickup.location.lng,
      });
    }
    return null;
  }

  /** Section 24: the package's fit into the routes of the candidates already on one (none: no query). */
  private async batchFits(jobType: JobTypeName, jobId: string, ids: readonly string[], nowMs: number) {
    if (jobType !== 'PACKAGE' || !this.deps.batcher) return undefined;
    const onRoute = [];
    for (const id of ids) {
      const d = this.deps.index.get(id);
      if (d && d.activeJobs > 0)
        onRoute.push({ id, position: d.position && { lat: d.position.lat, lng: d.position.lng } });
    }
    if (onRoute.length === 0) return undefined;
    return this.deps.batcher.evaluate(jobId, onRoute, nowMs);
  }

  /** The job's `dispatch` field changed: the read caches drop their copy (every instance). */
  private touched(jobType: JobTypeName, jobId: string): void {
    this.deps.bus.publish('job.changed', {
      jobType,
      jobId,
      status: WAITING[jobType],
      driverId: null,
      actorId: null,
      assigned: false,
      final: false,
    });
  }

  /** The offer's distance and ETA by road, when a router other than straight is configured. */
  private async byRoad(job: DispatchJob, choice: Choice): Promise<Pick<Offer, 'distanceMeters' | 'etaSeconds'>> {
    const position = this.deps.roadEta && this.deps.index.get(choice.driverId)?.position;
    if (!this.deps.roadEta || !position)
      return { distanceMeters: choice.distanceMeters, etaSeconds: choice.etaSeconds };
    const leg = await this.deps.roadEta(position, job.pickup.location, job.vehicleType);
    return { distanceMeters: leg.distanceMeters, etaSeconds: leg.durationSeconds };
  }

  private offerFor(job: DispatchJob, choice: Choice, way: Pick<Offer, 'distanceMeters' | 'etaSeconds'>): Offer {
    const expiresAt = new Date(this.deps.clock.nowMs() + this.deps.config.dispatch.offerTtlMs).toISOString();
    return {
      id: randomUUID(),
      jobType: job.jobType,
      jobId: job.jobId,
      pickup: job.pickup,
      dropoff: job.dropoff,
      vehicleType: job.vehicleType,
      distanceMeters: way.distanceMeters,
      etaSeconds: way.etaSeconds,
      price: job.price,
      earnings: job.earnings,
      customerRating: job.customerRating,
      expiresAt,
      ...(choice.batch
        ? { batch: { addedSeconds: choice.batch.addedSeconds, stopsBefore: choice.batch.stopsBefore } }
        : {}),
    };
  }

  private announceClosed(closed: Pick<OfferRow, 'id' | 'driver_id' | 'state' | 'job_id' | 'job_type'>[]): void {
    for (const o of closed) {
      this.outcomes.inc({ outcome: o.state });
      if (o.state === 'ACCEPTED') continue;
      this.deps.bus.publish('driver.push', {
        driverId: o.driver_id,
        message: { type: 'offer.withdrawn', offerId: o.id, jobType: o.job_type, jobId: o.job_id, state: o.state },
      });
    }
  }

  // --- the sweep (shared background work) -----------------------------------------------------

  /** Lapses overdue offers and tries again the jobs that are due; safe on several instances at once. */
  async sweep(): Promise<{ lapsed: number; retried: number }> {
    if (this.mode !== 'offer') return { lapsed: 0, retried: 0 };
    const { repo, clock } = this.deps;
    const now = clock.now();
    const lapsed = await repo.lapse(now);
    this.announceClosed(lapsed);
    for (const o of lapsed) this.touched(o.job_type, o.job_id);
    const due = await repo.claimDue(now, new Date(now.getTime() + CLAIM_LEASE_MS));
    const jobs = new Map<string, JobTypeName>([
      ...lapsed.map((o) => [o.job_id, o.job_type] as const),
      ...due.map((d) => [d.job_id, d.job_type] as const),
    ]);
    for (const [jobId, jobType] of jobs)
      await this.dispatch(jobType, jobId).catch((err) => this.deps.logger.warn({ err, jobId }, 'dispatch failed'));
    this.waiting = new Map(
      (await repo.waitingJobs()).map((j) => [
        j.job_id,
        { jobType: j.job_type, vehicleType: j.vehicle_type, lat: j.pickup_lat, lng: j.pickup_lng },
      ]),
    );
    return { lapsed: lapsed.length, retried: due.length };
  }

  /**
   * A driver came online or moved: the NO_DRIVERS jobs it could take are tried at once rather than at
   * their next retry (checked in memory, at most every few seconds per driver).
   */
  driverAvailable(driverId: string, force = false): void {
    if (this.mode !== 'offer' || this.waiting.size === 0) return;
    const now = this.deps.clock.nowMs();
    if (!force && now - (this.lastDriverCheck.get(driverId) ?? -Infinity) < DRIVER_CHECK_INTERVAL_MS) return;
    const d = this.deps.index.get(driverId);
    if (!d || !d.position || !d.online || !d.active || d.busy) return;
    if (this.lastDriverCheck.size > 100_000) this.lastDriverCheck.clear();
    this.lastDriverCheck.set(driverId, now);
    for (const [jobId, job] of this.waiting) {
      if (job.vehicleType !== d.vehicleType || !(d.serviceMask & SERVICE_BITS[ORDER_TYPE[job.jobType]])) continue;
      if (distanceMeters(job.lat, job.lng, d.position.lat, d.position.lng) > this.deps.config.dispatch.maxRadiusMeters)
        continue;
      this.waiting.delete(jobId);
      this.kick(job.jobType, jobId);
    }
  }

  // --- the driver's answers -------------------------------------------------------------------

  async myOffers(driverId: string): Promise<Offer[]> {
    const rows = await this.deps.repo.openOffersOf(driverId, this.deps.clock.now());
    // Offers made before prices existed have none stored.
    return rows.map((r) => {
      const offer = json<Offer>(r.offer as never);
      return {
        ...offer,
        price: offer.price ?? null,
        earnings: offer.earnings ?? null,
        customerRating: offer.customerRating ?? null,
      };
    });
  }

  private async ownOffer(offerId: string, driverId: string): Promise<OfferRow> {
    const offer = await this.deps.repo.offer(offerId);
    if (!offer || offer.driver_id !== driverId) throw offerNotFound();
    return offer;
  }

  private closedError(state: OfferState): AppError {
    return conflict(`Offer is ${state}`, `OFFER_${state}`);
  }

  async accept(offerId: string, auth: AuthContext, record?: RecordAnswer): Promise<unknown> {
    const offer = await this.ownOffer(offerId, auth.userId);
    if (offer.state !== 'OPEN') throw this.closedError(offer.state);
    if (new Date(offer.expires_at).getTime() <= this.deps.clock.nowMs()) {
      // Past its deadline: lapsed, whether or not the sweep has marked it yet.
      this.track(this.sweep());
      throw this.closedError('LAPSED');
    }
    const acceptor = this.deps.acceptors[offer.job_type];
    return acceptor(offer.job_id, auth, record);
  }

  async decline(offerId: string, auth: AuthContext): Promise<void> {
    const now = this.deps.clock.now();
    const declined = await this.deps.repo.decline(offerId, auth.userId, now);
    if (!declined) {
      const offer = await this.ownOffer(offerId, auth.userId);
      throw this.closedError(offer.state === 'OPEN' ? 'LAPSED' : offer.state);
    }
    this.outcomes.inc({ outcome: 'DECLINED' });
    await this.deps.repo.searchAgain(null, [declined.job_id], now);
    this.touched(declined.job_type, declined.job_id);
    this.kick(declined.job_type, declined.job_id);
  }

  // --- the admin's log ------------------------------------------------------------------------

  async log(jobId: string) {
    return dispatchLog(this.deps.repo, this.deps.config.dispatch.maxReleases, jobId);
  }
}
