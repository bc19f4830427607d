// Ratings and tips (contract section 20): who may rate or tip which job and when, the rated party's
// average (kept in its summary row, in the rating's transaction) and the tip's ledger transaction
// (in the tip's transaction, source key tip:<jobType>:<jobId>).
import { randomUUID } from 'node:crypto';
import type { DB } from '../../db/database.js';
import type { JobKind, RaterSide } from '../../db/tables/ratings.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import type { RecordAnswer } from '../../shared/record-answer.js';
import { AppError, conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toRowPage } from '../../shared/pagination.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import { BASIS_POINTS, sourceKeys, tipEntries, type PartyRef } from '../ledger/postings.js';
import type { JobForRating, RatingListFilter, RatingsRepository } from './ratings.repository.js';
import type { DriverRatingItem, DriverRatingsQuery, RateBody, RatingItem } from './ratings.schemas.js';

export const RATING_WINDOW_MS = 7 * 24 * 3600_000;
export const TIP_WINDOW_MS = 24 * 3600_000;
/** The average is over a party's last this many ratings. */
export const RATING_WINDOW_COUNT = 500;
/** Drivers below the alert threshold are listed once they have this many ratings. */
export const ALERT_MIN_RATINGS = 20;

/** The statuses a job may be rated and tipped in. */
const DONE: Record<JobKind, string> = { PACKAGE: 'DELIVERED', RIDE: 'COMPLETED' };

export interface RatingsServiceDeps {
  db: DB;
  repo: RatingsRepository;
  ledger: LedgerService;
  bus: Bus;
  clock: Clock;
  config: { alertBelowTenths: number; tipMaxShareBasisPoints: number };
}

/** How a tip is paid (contract section 21): the way its job is (a customer's CASH, a business's ACCOUNT unless it chose CASH). */
export function paymentMethodOf(job: Pick<JobForRating, 'payment_method'>): 'CASH' | 'ACCOUNT' {
  // Section 26: a tip on an M-Pesa job goes by a second prompt, which is not built yet.
  if (job.payment_method === 'MPESA')
    throw conflict('Tips on a job paid by M-Pesa are not available yet', 'MPESA_TIP_UNAVAILABLE');
  return job.payment_method;
}

const jobNotFound = (jobType: JobKind) =>
  jobType === 'PACKAGE'
    ? notFound('Package not found', 'PACKAGE_NOT_FOUND')
    : notFound('Ride not found', 'RIDE_NOT_FOUND');
const noun = (jobType: JobKind) => (jobType === 'PACKAGE' ? 'package' : 'ride');

type RatingRow = Awaited<ReturnType<RatingsRepository['list']>>[number];

export class RatingsService {
  constructor(private readonly deps: RatingsServiceDeps) {}

  /** The job, if the caller is one of its parties; anyone else gets the job's 404. */
  private async partyJob(
    jobType: JobKind,
    jobId: string,
    auth: AuthContext,
  ): Promise<{ job: JobForRating; side: RaterSide }> {
    const job = await this.deps.repo.job(jobType, jobId);
    if (job && auth.userId === job.creator_id) return { job, side: 'CREATOR' };
    if (job && job.driver_id !== null && auth.userId === job.driver_id) return { job, side: 'DRIVER' };
    throw jobNotFound(jobType);
  }

  /** The job is COMPLETED or DELIVERED (with its driver), and `windowMs` has not passed since. */
  private assertDone(jobType: JobKind, job: JobForRating, windowMs: number, closed: AppError): string {
    if (job.status !== DONE[jobType] || job.driver_id === null) {
      throw conflict(
        `Only a ${DONE[jobType]} ${noun(jobType)} can be rated or tipped (this one is ${job.status})`,
        'JOB_NOT_COMPLETED',
      );
    }
    const finished = job.finished_at?.getTime() ?? 0;
    if (this.deps.clock.nowMs() - finished > windowMs) throw closed;
    return job.driver_id;
  }

  async rate(jobType: JobKind, jobId: string, auth: AuthContext, body: RateBody) {
    const { job, side } = await this.partyJob(jobType, jobId, auth);
    const driverId = this.assertDone(
      jobType,
      job,
      RATING_WINDOW_MS,
      conflict('Ratings close 7 days after the job ends', 'RATING_CLOSED'),
    );
    const ratedId = side === 'CREATOR' ? driverId : job.creator_id;
    const now = this.deps.clock.now();
    const id = randomUUID();
    const comment = body.comment ?? null;
    await this.deps.db.transaction().execute(async (trx) => {
      // The rated party's summary row first: a party's ratings are summed up one at a time.
      const { rating_count } = await this.deps.repo.lockSummary(trx, ratedId, now);
      const row = {
        id,
        job_type: jobType,
        job_id: jobId,
        rater_side: side,
        rater_id: auth.userId,
        rated_id: ratedId,
        driver_id: driverId,
        stars: body.stars,
        comment,
        created_at: now,
      };
      if (!(await this.deps.repo.insertRating(trx, row)))
        throw conflict(`You rated this ${noun(jobType)} already`, 'ALREADY_RATED');
      const averageTenths = await this.deps.repo.averageTenths(trx, ratedId);
      await this.deps.repo.storeSummary(trx, ratedId, { averageTenths, count: rating_count + 1 }, now);
    });
    this.deps.bus.publish('job.annotated', { jobType, jobId });
    return { id, jobType, jobId, side, ratedId, stars: body.stars, comment, createdAt: now.toISOString() };
  }

  async tip(jobType: JobKind, jobId: string, auth: AuthContext, amount: number, record?: RecordAnswer) {
    const { job, side } = await this.partyJob(jobType, jobId, auth);
    // Only who ordered the job tips it; its driver is not a tipper (a 404 like anyone else's).
    if (side !== 'CREATOR') throw jobNotFound(jobType);
    const driverId = this.assertDone(
      jobType,
      job,
      TIP_WINDOW_MS,
      conflict('Tips close 24 hours after the job ends', 'TIP_CLOSED'),
    );
    if (job.price_amount === null || job.price_currency === null)
      throw conflict(`This ${noun(jobType)} has no price to tip on`, 'TIP_UNAVAILABLE');
    const cap = Math.floor((job.price_amount * this.deps.config.tipMaxShareBasisPoints) / BASIS_POINTS);
    if (amount > cap) {
      throw new AppError(
        400,
        'TIP_TOO_LARGE',
        `A tip may be at most ${this.deps.config.tipMaxShareBasisPoints / 100}% of the price: ${cap} ${job.price_currency} minor units`,
      );
    }
    const currency = job.price_currency;
    const paymentMethod = paymentMethodOf(job);
    const payer: PartyRef = { kind: job.business_id !== null ? 'BUSINESS' : 'CUSTOMER', partyId: job.creator_id };
    const now = this.deps.clock.now();
    const tip = { jobType, jobId, amount, currency, paymentMethod, createdAt: now.toISOString() };
    await this.deps.db.transaction().execute(async (trx) => {
      const row = {
        id: randomUUID(),
        job_type: jobType,
        job_id: jobId,
        payer_id: auth.userId,
        driver_id: driverId,
        amount,
        currency,
        payment_method: paymentMethod,
        created_at: now,
      };
      if (!(await this.deps.repo.insertTip(trx, row)))
        throw conflict(`You tipped this ${noun(jobType)} already`, 'ALREADY_TIPPED');
      await this.deps.ledger.post(trx, {
        sourceKey: sourceKeys.tip(jobType, jobId),
        currency,
        entries: tipEntries({ driverId, payer, paymentMethod, amount }),
        memo: `Tip on ${noun(jobType)} ${jobId}`,
      });
      await record?.(trx, tip);
    });
    this.deps.bus.publish('job.annotated', { jobType, jobId });
    return tip;
  }

  /** GET /admin/ratings: every rating, comments included. */
  adminList(query: { driverId?: string; limit?: number; cursor?: string }) {
    return this.page({ driverId: query.driverId }, query, () => true);
  }

  /** GET /companies/me/ratings: the ratings its drivers received, stars only. */
  companyList(auth: AuthContext, query: { driverId?: string; limit?: number; cursor?: string }) {
    return this.page({ companyId: auth.userId, driverId: query.driverId }, query, () => false);
  }

  /** The ratings the caller gave (GET /businesses/me/ratings), with its own comments. */
  givenBy(auth: AuthContext, query: { limit?: number; cursor?: string }) {
    return this.page({ raterId: auth.userId }, query, () => true);
  }

  /**
   * GET /drivers/me/ratings: received, the stars of the ratings of the driver (no comment, no rater:
   * who gave a low rating stays unknown); given, the ratings the driver gave, with its comments.
   */
  driverList(auth: AuthContext, query: DriverRatingsQuery) {
    const given = query.side === 'given';
    return this.rows(given ? { raterId: auth.userId } : { ratedId: auth.userId }, query, (r): DriverRatingItem => ({
      id: r.id,
      jobType: r.job_type,
      jobId: r.job_id,
      side: r.rater_side,
      stars: r.stars,
      ...(given ? { comment: r.comment } : {}),
      createdAt: r.created_at.toISOString(),
    }));
  }

  /** A page of ratings matching `filter`, each shown by `item` (what a viewer may see of it is item's choice). */
  private async rows<T>(
    filter: Omit<RatingListFilter, 'limit' | 'cursor'>,
    query: { limit?: number; cursor?: string },
    item: (row: RatingRow) => T,
  ) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.list({ ...filter, cursor: decodeCursor(query.cursor), limit });
    return toRowPage(rows, limit, item);
  }

  private page(
    filter: Omit<RatingListFilter, 'limit' | 'cursor'>,
    query: { limit?: number; cursor?: string },
    showComment: (row: RatingRow) => boolean,
  ) {
    return this.rows(filter, query, (r): RatingItem => ({
      id: r.id,
      jobType: r.job_type,
      jobId: r.job_id,
      side: r.rater_side,
      raterId: r.rater_id,
      raterRole: r.rater_role as RatingItem['raterRole'],
      ratedId: r.rated_id,
      ratedRole: r.rated_role as RatingItem['ratedRole'],
      driverId: r.driver_id,
      stars: r.stars,
      ...(showComment(r) ? { comment: r.comment } : {}),
      createdAt: r.created_at.toISOString(),
    }));
  }

  /** GET /admin/ratings/alerts: drivers below RATING_ALERT_BELOW with at least 20 ratings. */
  async alerts(query: { limit?: number }) {
    const below = this.deps.config.alertBelowTenths;
    const rows = await this.deps.repo.alerts(below, ALERT_MIN_RATINGS, query.limit ?? 100);
    return {
      threshold: below / 10,
      minimumRatings: ALERT_MIN_RATINGS,
      items: rows.map((r) => ({
        driverId: r.user_id,
        firstName: r.first_name,
        lastName: r.last_name,
        companyId: r.company_id,
        rating: (r.average_tenths ?? 0) / 10,
        ratingCount: r.rating_count,
      })),
    };
  }
}
