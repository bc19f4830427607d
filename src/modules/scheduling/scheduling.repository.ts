// Scheduled jobs' rows (contract section 22): the lead's samples, and the durable wake-up kept in
// dispatch_jobs (state SCHEDULED, next_attempt_at = start − lead) so that any instance claims a due
// job, once (FOR UPDATE SKIP LOCKED), and none is forgotten when an instance dies.
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { JobTypeName } from '../../db/tables/dispatch.js';

/** A lat/lng box: the surge cell of a pickup and its 8 neighbours (section 18). */
export interface Area {
  key: string;
  south: number;
  west: number;
  north: number;
  east: number;
}

export interface DueJob {
  job_id: string;
  job_type: JobTypeName;
  next_attempt_at: Date;
  scheduled_start: Date | null;
  lead_seconds: number | null;
}

export class SchedulingRepository {
  constructor(private readonly db: DB) {}

  /**
   * The p90 (seconds) and count of accept-to-arrival times of the area's jobs accepted since `since`:
   * rides ACCEPTED → ARRIVED; packages their last ASSIGNED → PICKED_UP (no position history is kept
   * for packages: pickup is the nearest recorded moment to "the driver within 100 m of the pickup").
   */
  async leadSamples(
    db: Executor,
    jobType: JobTypeName,
    area: Area,
    since: Date,
  ): Promise<{ p90: number | null; samples: number }> {
    const query =
      jobType === 'RIDE'
        ? sql<{ p90: number | null; samples: string }>`
        select percentile_cont(0.9) within group (order by s.seconds) as p90, count(*) as samples from (
          select extract(epoch from (arr.at - acc.at))::float8 as seconds
          from rides r
          join lateral (select max(h.at) as at from ride_status_history h where h.ride_id = r.id and h.status = 'ACCEPTED') acc on true
          join lateral (select min(h.at) as at from ride_status_history h where h.ride_id = r.id and h.status = 'ARRIVED') arr on true
          where r.pickup_lat between ${area.south} and ${area.north} and r.pickup_lng between ${area.west} and ${area.east}
            and r.created_at >= ${since} and acc.at >= ${since} and arr.at >= acc.at) s`
        : sql<{ p90: number | null; samples: string }>`
        select percentile_cont(0.9) within group (order by s.seconds) as p90, count(*) as samples from (
          select extract(epoch from (pu.at - acc.at))::float8 as seconds
          from packages p
          join lateral (select min(h.at) as at from package_status_history h where h.package_id = p.id and h.status = 'PICKED_UP') pu on true
          join lateral (select max(h.at) as at from package_status_history h
                        where h.package_id = p.id and h.status = 'ASSIGNED' and h.at <= pu.at) acc on true
          where p.pickup_lat between ${area.south} and ${area.north} and p.pickup_lng between ${area.west} and ${area.east}
            and p.created_at >= ${since} and acc.at >= ${since}) s`;
    const row = (await query.execute(db)).rows[0];
    return {
      p90: row?.p90 === null || row?.p90 === undefined ? null : Number(row.p90),
      samples: Number(row?.samples ?? 0),
    };
  }

  /** The job's dispatch row (written by dispatch's enroll in the same transaction) waits, SCHEDULED, until `dueAt`. */
  async schedule(
    trx: Executor,
    job: {
      jobId: string;
      start: Date;
      dueAt: Date;
      leadSeconds: number;
      leadSamples: number;
      notifyAt: Date | null;
      at: Date;
    },
  ): Promise<void> {
    await trx
      .updateTable('dispatch_jobs')
      .set({
        state: 'SCHEDULED',
        next_attempt_at: job.dueAt,
        scheduled_start: job.start,
        lead_seconds: job.leadSeconds,
        lead_samples: job.leadSamples,
        notify_at: job.notifyAt,
        updated_at: job.at,
      })
      .where('job_id', '=', job.jobId)
      .execute();
  }

  /** Locks up to `limit` due SCHEDULED jobs that no other instance holds (call in a transaction). */
  async lockDue(trx: Executor, now: Date, limit: number): Promise<DueJob[]> {
    const result = await sql<DueJob>`
      select job_id, job_type, next_attempt_at, scheduled_start, lead_seconds from dispatch_jobs
      where state = 'SCHEDULED' and next_attempt_at <= ${now}
      order by next_attempt_at limit ${limit} for update skip locked`.execute(trx);
    return result.rows;
  }

  /**
   * The locked jobs enter dispatch: SEARCHING, due again at `retryAt` (dispatch's sweep tries them
   * then if the instance that woke them dies before offering them).
   */
  async enter(trx: Executor, jobIds: string[], now: Date, retryAt: Date): Promise<void> {
    if (jobIds.length === 0) return;
    await trx
      .updateTable('dispatch_jobs')
      .set({ state: 'SEARCHING', entered_at: now, next_attempt_at: retryAt, updated_at: now })
      .where('job_id', 'in', jobIds)
      .where('state', '=', 'SCHEDULED')
      .execute();
  }

  /**
   * Whether the job is booked ahead and has not entered dispatch yet (its row still SCHEDULED, never
   * woken): no driver was ever offered it or could take it.
   */
  async neverDispatched(db: Executor, jobId: string): Promise<boolean> {
    const row = await db
      .selectFrom('dispatch_jobs')
      .select('job_id')
      .where('job_id', '=', jobId)
      .where('state', '=', 'SCHEDULED')
      .where('entered_at', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The earliest wake-up still to come (for the in-process timer). */
  async nextDue(): Promise<Date | null> {
    const row = await this.db
      .selectFrom('dispatch_jobs')
      .select((eb) => eb.fn.min('next_attempt_at').as('next'))
      .where('state', '=', 'SCHEDULED')
      .executeTakeFirst();
    return row?.next ? new Date(row.next) : null;
  }

  /**
   * Scheduled rides still REQUESTED at scheduledAt − 10m, claimed for telling their customers: the claim
   * is `notified_at` itself, committed by this one statement before anyone is told, so that no
   * instance (this one after a crash, or another) ever claims a ride again (at most once).
   */
  async claimNotifications(now: Date, limit = 50) {
    const result = await sql<{ job_id: string; customer_id: string; phone: string; scheduled_at: Date }>`
      with due as (
        update dispatch_jobs set notified_at = ${now}
        where job_id in (select d.job_id from dispatch_jobs d join rides r on r.id = d.job_id
                         where d.notified_at is null and d.notify_at <= ${now} and d.state <> 'DONE'
                           and d.job_type = 'RIDE' and r.status = 'REQUESTED'
                         order by d.notify_at limit ${limit} for update of d skip locked)
          and notified_at is null
        returning job_id
      )
      select r.id as job_id, r.customer_id, u.phone, r.scheduled_at
      from due join rides r on r.id = due.job_id join users u on u.id = r.customer_id`.execute(this.db);
    return result.rows;
  }

  /** What the admin's dispatch log shows of a scheduled job. */
  scheduleOf(jobId: string) {
    return this.db
      .selectFrom('dispatch_jobs')
      .select([
        'scheduled_start',
        'lead_seconds',
        'lead_samples',
        'entered_at',
        'notified_at',
        'state',
        'next_attempt_at',
      ])
      .where('job_id', '=', jobId)
      .where('scheduled_start', 'is not', null)
      .executeTakeFirst();
  }

  /** The country's time zone. */
  async countryTimeZone(db: Executor, countryId: string): Promise<string | undefined> {
    const row = await db.selectFrom('countries').select('time_zone').where('id', '=', countryId).executeTakeFirst();
    return row?.time_zone;
  }
}
