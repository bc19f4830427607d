// SQL of dispatch: the job rows, the offers and the releases. Every write is a conditional statement
// (or takes its rows with SKIP LOCKED), so that several instances may dispatch at once.
import { sql, type Selectable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { VehicleType } from '../../db/schema.js';
import type { DispatchJobsTable, DispatchOffersTable, JobTypeName, OfferState } from '../../db/tables/dispatch.js';
import { json } from '../../db/json.js';
import { money, type Money } from '../jobs/job-price.js';
import { jobEarnings } from '../jobs/job-money.js';
import { releaseCount } from '../jobs/job-releases.repository.js';
import type { Executor } from '../../db/executor.js';

export interface DispatchJob {
  jobType: JobTypeName;
  jobId: string;
  status: string;
  vehicleType: VehicleType;
  pickup: { location: { lat: number; lng: number }; address?: string };
  dropoff: { location: { lat: number; lng: number } };
  /** What the job pays (null for a job created before prices existed). */
  price: Money | null;
  /** What the driver would earn from the price (section 21): null without a price. */
  earnings: Money | null;
  /** The rating of who ordered it (a ride's customer, a package's creator): one decimal, null before the first (section 20). */
  customerRating: number | null;
  /** Offered first to this driver (a failed package's re-attempt or return: the driver holding the parcel, section 23). */
  preferredDriverId?: string | null;
}

/** The driver's share of a price: (price − booking fee) less the commission (jobs/job-money.ts). */
const expectedEarnings = (row: {
  status: string;
  price_amount: number | null;
  price_currency: string | null;
  commission_rate: number;
  price_breakdown: unknown;
  payment_method: 'CASH' | 'ACCOUNT' | 'MPESA';
}): Money | null => {
  const e = jobEarnings({ ...row, status: 'PENDING', driver_id: null, cancellation_fee: null }, row.price_amount, 0);
  return e ? { amount: e.driver, currency: e.currency } : null;
};

/** The average_tenths of a party's rating summary as a number with one decimal. */
const ratingOf = (tenths: number | null | undefined) => (tenths === null || tenths === undefined ? null : tenths / 10);

export type OfferRow = Selectable<DispatchOffersTable>;

export class DispatchRepository {
  constructor(private readonly db: DB) {}

  async enroll(trx: Executor, row: Omit<DispatchJobsTable, 'attempts' | 'state' | 'updated_at'>): Promise<void> {
    await trx
      .insertInto('dispatch_jobs')
      .values({ ...row, state: 'SEARCHING', attempts: 0, updated_at: row.created_at })
      .onConflict((oc) => oc.column('job_id').doNothing())
      .execute();
  }

  dispatchRow(jobId: string) {
    return this.db.selectFrom('dispatch_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst();
  }

  /** The job as an offer shows it, and whether it still waits. */
  async loadJob(jobType: JobTypeName, jobId: string): Promise<DispatchJob | undefined> {
    if (jobType === 'PACKAGE') {
      const row = await this.db
        .selectFrom('packages')
        .leftJoin('rating_summaries as rs', 'rs.user_id', 'packages.created_by')
        .select([
          'status',
          'vehicle_type',
          'pickup',
          'dropoff',
          'price_amount',
          'price_currency',
          'commission_rate',
          'price_breakdown',
          'payment_method',
          'preferred_driver_id',
          'rs.average_tenths',
        ])
        .where('id', '=', jobId)
        .executeTakeFirst();
      if (!row) return undefined;
      const pickup = json<{ location: { lat: number; lng: number }; address: string }>(row.pickup as never);
      const dropoff = json<{ location: { lat: number; lng: number } }>(row.dropoff as never);
      return {
        jobType,
        jobId,
        status: row.status,
        vehicleType: row.vehicle_type,
        pickup: { location: pickup.location, address: pickup.address },
        dropoff: { location: dropoff.location },
        price: money(row.price_amount, row.price_currency),
        earnings: expectedEarnings(row),
        customerRating: ratingOf(row.average_tenths),
        preferredDriverId: row.preferred_driver_id,
      };
    }
    const row = await this.db
      .selectFrom('rides')
      .leftJoin('rating_summaries as rs', 'rs.user_id', 'rides.customer_id')
      .select([
        'status',
        'vehicle_type',
        'pickup_lat',
        'pickup_lng',
        'destination_lat',
        'destination_lng',
        'price_amount',
        'price_currency',
        'commission_rate',
        'price_breakdown',
        'payment_method',
        'rs.average_tenths',
      ])
      .where('id', '=', jobId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      jobType,
      jobId,
      status: row.status,
      vehicleType: row.vehicle_type,
      pickup: { location: { lat: row.pickup_lat, lng: row.pickup_lng } },
      dropoff: { location: { lat: row.destination_lat, lng: row.destination_lng } },
      price: money(row.price_amount, row.price_currency),
      earnings: expectedEarnings(row),
      customerRating: ratingOf(row.average_tenths),
    };
  }

  /** Who this job must not go to again: every driver offered it before (with the outcome) and every driver who released it. */
  async exclusions(jobId: string): Promise<{ driver_id: string; why: string }[]> {
    const result = await sql<{ driver_id: string; why: string }>`
      select driver_id, state as why from dispatch_offers where job_id = ${jobId}
      union all select driver_id, 'RELEASED' from dispatch_releases where job_id = ${jobId}`.execute(this.db);
    return result.rows;
  }

  async holdingOffers(driverIds: string[]): Promise<string[]> {
    if (!driverIds.length) return [];
    const rows = await this.db
      .selectFrom('dispatch_offers')
      .select('driver_id')
      .where('state', '=', 'OPEN')
      .where('driver_id', 'in', driverIds)
      .execute();
    return rows.map((r) => r.driver_id);
  }

  async markNoDrivers(jobId: string, now: Date, retryAt: Date): Promise<boolean> {
    const r = await this.db
      .updateTable('dispatch_jobs')
      .set({ state: 'NO_DRIVERS', next_attempt_at: retryAt, updated_at: now })
      .where('job_id', '=', jobId)
      .where('state', 'in', ['SEARCHING', 'NO_DRIVERS'])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Takes the job out of dispatch; `was` is the state it left (SCHEDULED: booked for later, section 22). */
  async markDone(
    trx: Executor | null,
    jobId: string,
    now: Date,
  ): Promise<{ created_at: Date; was: string | null } | undefined> {
    return (trx ?? this.db)
      .with('prev', (db) => db.selectFrom('dispatch_jobs').select('state').where('job_id', '=', jobId))
      .updateTable('dispatch_jobs')
      .set({ state: 'DONE', updated_at: now })
      .where('job_id', '=', jobId)
      .where('state', '<>', 'DONE')
      .returning(['created_at', sql<string | null>`(select state from prev)`.as('was')])
      .executeTakeFirst();
  }

  /**
   * Inserts the offer when the job still waits (its row locked for share, so that an accept
   * committing meanwhile is seen) and neither the job nor the driver holds an open offer (the
   * partial unique indexes). 'JOB': the job is taken or has its offer; 'DRIVER': the driver has one.
   */
  async insertOffer(
    offer: Omit<OfferRow, 'state' | 'answered_at' | 'seq'>,
    waitingStatus: string,
  ): Promise<'OK' | 'JOB' | 'DRIVER'> {
    return this.db.transaction().execute(async (trx) => {
      const table = offer.job_type === 'PACKAGE' ? 'packages' : 'rides';
      const waiting =
        await sql`select 1 from ${sql.table(table)} where id = ${offer.job_id} and status = ${waitingStatus} for share`.execute(
          trx,
        );
      if (!waiting.rows.length) return 'JOB';
      const inserted = await trx
        .insertInto('dispatch_offers')
        .values({
          ...offer,
          offer: JSON.stringify(offer.offer),
          choice: JSON.stringify(offer.choice),
          state: 'OPEN',
          answered_at: null,
        })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) {
        const jobHasOne = await trx
          .selectFrom('dispatch_offers')
          .select('id')
          .where('job_id', '=', offer.job_id)
          .where('state', '=', 'OPEN')
          .executeTakeFirst();
        return jobHasOne ? 'JOB' : 'DRIVER';
      }
      await trx
        .updateTable('dispatch_jobs')
        .set((eb) => ({ state: 'OFFERED', attempts: eb('attempts', '+', 1), updated_at: offer.created_at }))
        .where('job_id', '=', offer.job_id)
        .execute();
      return 'OK';
    });
  }

  /** Closes the job's open offer: ACCEPTED when `driverId` took it, else WITHDRAWN. */
  async closeOpenOffers(
    trx: Executor | null,
    jobId: string,
    driverId: string | null,
    now: Date,
  ): Promise<{ id: string; driver_id: string; state: OfferState }[]> {
    return (trx ?? this.db)
      .updateTable('dispatch_offers')
      .set({
        state: sql<OfferState>`case when driver_id = ${driverId} then 'ACCEPTED' else 'WITHDRAWN' end`,
        answered_at: now,
      })
      .where('job_id', '=', jobId)
      .where('state', '=', 'OPEN')
      .returning(['id', 'driver_id', 'state'])
      .execute();
  }

  async decline(offerId: string, driverId: string, now: Date): Promise<OfferRow | undefined> {
    return this.db
      .updateTable('dispatch_offers')
      .set({ state: 'DECLINED', answered_at: now })
      .where('id', '=', offerId)
      .where('driver_id', '=', driverId)
      .where('state', '=', 'OPEN')
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
  }

  offer(id: string) {
    return this.db.selectFrom('dispatch_offers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  openOffersOf(driverId: string, now: Date) {
    return this.db
      .selectFrom('dispatch_offers')
      .selectAll()
      .where('driver_id', '=', driverId)
      .where('state', '=', 'OPEN')
      .where('expires_at', '>', now)
      .execute();
  }

  /** A job whose offer closed searches again at once. */
  async searchAgain(trx: Executor | null, jobIds: string[], now: Date): Promise<void> {
    if (!jobIds.length) return;
    await (trx ?? this.db)
      .updateTable('dispatch_jobs')
      .set({ state: 'SEARCHING', next_attempt_at: now, updated_at: now })
      .where('job_id', 'in', jobIds)
      .where('state', '=', 'OFFERED')
      .execute();
  }

  /** Lapses the offers past their deadline (each exactly once, whichever instance runs it). */
  async lapse(now: Date, limit = 500): Promise<OfferRow[]> {
    return this.db.transaction().execute(async (trx) => {
      const lapsed = await sql<OfferRow>`
        update dispatch_offers set state = 'LAPSED', answered_at = ${now}
        where id in (select id from dispatch_offers where state = 'OPEN' and expires_at <= ${now} order by expires_at limit ${limit} for update skip locked)
        returning *`.execute(trx);
      await this.searchAgain(
        trx,
        lapsed.rows.map((r) => r.job_id),
        now,
      );
      return lapsed.rows;
    });
  }

  /** Takes the jobs due for another try (the lease keeps other instances off them meanwhile). */
  async claimDue(now: Date, leaseUntil: Date, limit = 100): Promise<{ job_id: string; job_type: JobTypeName }[]> {
    const result = await sql<{ job_id: string; job_type: JobTypeName }>`
      update dispatch_jobs set next_attempt_at = ${leaseUntil}
      where job_id in (select job_id from dispatch_jobs where state in ('SEARCHING', 'NO_DRIVERS') and next_attempt_at <= ${now}
                       order by next_attempt_at limit ${limit} for update skip locked)
      returning job_id, job_type`.execute(this.db);
    return result.rows;
  }

  waitingJobs() {
    return this.db
      .selectFrom('dispatch_jobs')
      .select(['job_id', 'job_type', 'vehicle_type', 'pickup_lat', 'pickup_lng'])
      .where('state', '=', 'NO_DRIVERS')
      .limit(5000)
      .execute();
  }

  /** A released job waits in dispatch from now (the lifecycle recorded who released it: jobs/job-releases.ts). */
  async searchAfterRelease(trx: Executor, r: { jobType: JobTypeName; jobId: string; at: Date }): Promise<void> {
    const source =
      r.jobType === 'PACKAGE'
        ? sql`select id, 'PACKAGE', vehicle_type, pickup_lat, pickup_lng, created_at from packages where id = ${r.jobId}`
        : sql`select id, 'RIDE', vehicle_type, pickup_lat, pickup_lng, created_at from rides where id = ${r.jobId}`;
    await sql`
      insert into dispatch_jobs (job_id, job_type, vehicle_type, pickup_lat, pickup_lng, created_at, state, attempts, next_attempt_at, updated_at)
      select s.*, 'SEARCHING', 0, ${r.at}, ${r.at} from (${source}) s
      on conflict (job_id) do update set state = 'SEARCHING', next_attempt_at = ${r.at}, updated_at = ${r.at}`.execute(
      trx,
    );
  }

  releaseCount(jobType: JobTypeName, jobId: string): Promise<number> {
    return releaseCount(this.db, jobType, jobId);
  }

  async log(jobId: string) {
    const [job, offers, releases] = await Promise.all([
      this.dispatchRow(jobId),
      this.db.selectFrom('dispatch_offers').selectAll().where('job_id', '=', jobId).orderBy('seq').execute(),
      this.db.selectFrom('dispatch_releases').selectAll().where('job_id', '=', jobId).orderBy('at').execute(),
    ]);
    return { job, offers, releases };
  }

  async jobExists(jobId: string): Promise<{ jobType: JobTypeName; status: string } | undefined> {
    const p = await this.db.selectFrom('packages').select('status').where('id', '=', jobId).executeTakeFirst();
    if (p) return { jobType: 'PACKAGE', status: p.status };
    const r = await this.db.selectFrom('rides').select('status').where('id', '=', jobId).executeTakeFirst();
    return r ? { jobType: 'RIDE', status: r.status } : undefined;
  }
}
