// Kysely for ratings, the rated parties' summaries, tips, and the few job columns they decide on.
import type { PaymentMethod } from '../../db/tables/jobs.js';
import { sql } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { DB } from '../../db/database.js';
import type { Insertable } from 'kysely';
import type { JobKind, RatingsTable, TipsTable } from '../../db/tables/ratings.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';

/** What rating and tipping a job decide on: its status, parties, price and when it reached its final status. */
export interface JobForRating {
  status: string;
  creator_id: string;
  business_id: string | null;
  /** How the job is paid (section 21): a tip is paid the same way. */
  payment_method: PaymentMethod;
  driver_id: string | null;
  driver_company_id: string | null;
  price_amount: number | null;
  price_currency: string | null;
  finished_at: Date | null;
}

export interface RatingListFilter {
  driverId?: string;
  /** Ratings the drivers of this company received. */
  companyId?: string;
  raterId?: string;
  ratedId?: string;
  cursor?: Cursor;
  limit: number;
}

export class RatingsRepository {
  constructor(private readonly db: DB) {}

  async job(jobType: JobKind, jobId: string): Promise<JobForRating | undefined> {
    if (jobType === 'PACKAGE') {
      return this.db
        .selectFrom('packages as p')
        .leftJoin('driver_profiles as dp', 'dp.user_id', 'p.driver_id')
        .select([
          'p.status',
          'p.created_by as creator_id',
          'p.business_id',
          'p.payment_method',
          'p.driver_id',
          'dp.company_id as driver_company_id',
          'p.price_amount',
          'p.price_currency',
        ])
        .select('p.finished_at')
        .where('p.id', '=', jobId)
        .executeTakeFirst()
        .then((row) => row && { ...row, finished_at: row.finished_at ?? null });
    }
    return (
      this.db
        .selectFrom('rides as r')
        .leftJoin('driver_profiles as dp', 'dp.user_id', 'r.driver_id')
        .select([
          'r.status',
          'r.customer_id as creator_id',
          'r.payment_method',
          'r.driver_id',
          'dp.company_id as driver_company_id',
          'r.price_amount',
          'r.price_currency',
        ])
        .select(sql<null>`null::uuid`.as('business_id'))
        // Rides have no finished_at: the instant of their last final status in the history.
        .select((eb) =>
          eb
            .selectFrom('ride_status_history as h')
            .select((h) => h.fn.max('h.at').as('at'))
            .whereRef('h.ride_id', '=', 'r.id')
            .where('h.status', 'in', ['COMPLETED', 'CANCELLED', 'EXPIRED'])
            .as('finished_at'),
        )
        .where('r.id', '=', jobId)
        .executeTakeFirst()
        .then((row) => row && { ...row, finished_at: row.finished_at ? new Date(row.finished_at) : null })
    );
  }

  /**
   * The rated party's summary row, created if new, and locked until the transaction ends: ratings of
   * one party are summed up one after the other, each seeing the ones before.
   */
  async lockSummary(trx: Executor, userId: string, now: Date): Promise<{ rating_count: number }> {
    return trx
      .insertInto('rating_summaries')
      .values({ user_id: userId, average_tenths: null, rating_count: 0, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ user_id: (eb) => eb.ref('excluded.user_id') }))
      .returning('rating_count')
      .executeTakeFirstOrThrow();
  }

  /** Inserts the rating unless that side rated that job before (the unique constraint decides): whether it did. */
  async insertRating(trx: Executor, row: Insertable<RatingsTable>): Promise<boolean> {
    const inserted = await trx
      .insertInto('ratings')
      .values(row)
      .onConflict((oc) => oc.columns(['job_type', 'job_id', 'rater_side']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /** The average of the party's last 500 ratings, in tenths rounded half up. */
  async averageTenths(trx: Executor, userId: string): Promise<number | null> {
    const row = await sql<{ tenths: number | null }>`
      select round(avg(stars) * 10)::int as tenths
      from (select stars from ratings where rated_id = ${userId} order by created_at desc, id desc limit 500) last_ratings`.execute(
      trx,
    );
    return row.rows[0]?.tenths ?? null;
  }

  /** Stores the summary; a driver's is copied onto its profile, which the jobs' driver summary reads. */
  async storeSummary(
    trx: Executor,
    userId: string,
    summary: { averageTenths: number | null; count: number },
    now: Date,
  ): Promise<void> {
    await trx
      .updateTable('rating_summaries')
      .set({ average_tenths: summary.averageTenths, rating_count: summary.count, updated_at: now })
      .where('user_id', '=', userId)
      .execute();
    await trx
      .updateTable('driver_profiles')
      .set({ rating: summary.averageTenths === null ? null : summary.averageTenths / 10, rating_count: summary.count })
      .where('user_id', '=', userId)
      .execute();
  }

  /** Ratings newest first, with the rater's and rated party's roles. */
  list(filter: RatingListFilter) {
    let q = this.db
      .selectFrom('ratings as r')
      .innerJoin('users as rater', 'rater.id', 'r.rater_id')
      .innerJoin('users as rated', 'rated.id', 'r.rated_id')
      .select([
        'r.id',
        'r.job_type',
        'r.job_id',
        'r.rater_side',
        'r.rater_id',
        'r.rated_id',
        'r.driver_id',
        'r.stars',
        'r.comment',
        'r.created_at',
      ])
      .select(['rater.role as rater_role', 'rated.role as rated_role']);
    if (filter.driverId) q = q.where('r.driver_id', '=', filter.driverId);
    if (filter.raterId) q = q.where('r.rater_id', '=', filter.raterId);
    if (filter.ratedId) q = q.where('r.rated_id', '=', filter.ratedId);
    if (filter.companyId) {
      const companyId = filter.companyId;
      q = q
        .where('r.rater_side', '=', 'CREATOR')
        .where('r.driver_id', 'in', (eb) =>
          eb.selectFrom('driver_profiles').select('user_id').where('company_id', '=', companyId),
        );
    }
    if (filter.cursor) q = q.where(beforeCursor(filter.cursor, 'r.created_at', 'r.id'));
    return q
      .orderBy('r.created_at', 'desc')
      .orderBy('r.id', 'desc')
      .limit(filter.limit + 1)
      .execute();
  }

  /** Drivers whose average is below `belowTenths` with at least `minCount` ratings, lowest first. */
  alerts(belowTenths: number, minCount: number, limit: number) {
    return this.db
      .selectFrom('rating_summaries as rs')
      .innerJoin('driver_profiles as dp', 'dp.user_id', 'rs.user_id')
      .innerJoin('users as u', 'u.id', 'rs.user_id')
      .select(['rs.user_id', 'rs.average_tenths', 'rs.rating_count', 'u.first_name', 'u.last_name', 'dp.company_id'])
      .where('rs.average_tenths', '<', belowTenths)
      .where('rs.rating_count', '>=', minCount)
      .orderBy('rs.average_tenths')
      .orderBy('rs.rating_count', 'desc')
      .orderBy('rs.user_id')
      .limit(limit)
      .execute();
  }

  /** Inserts the tip unless the job has one (the unique constraint decides): whether it did. */
  async insertTip(trx: Executor, row: Insertable<TipsTable>): Promise<boolean> {
    const inserted = await trx
      .insertInto('tips')
      .values(row)
      .onConflict((oc) => oc.columns(['job_type', 'job_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }
}
