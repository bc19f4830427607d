// Kysely for rides and their history.
import { sql, type Insertable, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { RidesTable, RideStatus } from '../../db/tables/jobs.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';
import { DRIVER_SUMMARY_COLUMNS } from '../jobs/driver-claims.js';
import type { JobStore, StatusHistoryEntry, StatusSet } from '../jobs/lifecycle.js';
import { releaseMovedDriver } from '../jobs/driver-claims.repository.js';
import { runPrepared } from '../../db/prepared.js';

export type RideRow = Awaited<ReturnType<ReturnType<RidesRepository['selectRides']>['executeTakeFirstOrThrow']>>;

export class RidesRepository implements JobStore<RideStatus, RideRow> {
  constructor(private readonly db: DB) {}

  selectRides(db: DB | Transaction<Database> = this.db) {
    return db
      .selectFrom('rides as r')
      .leftJoin('users as du', 'du.id', 'r.driver_id')
      .leftJoin('driver_profiles as dp', 'dp.user_id', 'r.driver_id')
      .leftJoin('dispatch_jobs as dj', 'dj.job_id', 'r.id')
      .leftJoin('tips as tp', (join) => join.onRef('tp.job_id', '=', 'r.id').on(sql<boolean>`tp.job_type = 'RIDE'`))
      .select([
        'dj.state as dispatch_state',
        'dj.attempts as dispatch_attempts',
        'tp.amount as tip_amount',
        'tp.currency as tip_currency',
      ])
      .select([
        'r.id',
        'r.status',
        'r.customer_id',
        'r.driver_id',
        'r.vehicle_type',
        'r.country_id',
        'r.created_at',
        'r.updated_at',
      ])
      .select(['r.pickup_lat', 'r.pickup_lng', 'r.destination_lat', 'r.destination_lng'])
      .select([...DRIVER_SUMMARY_COLUMNS, 'r.status_history'])
      .select(['r.price_amount', 'r.price_currency', 'r.price_inputs', 'r.cancellation_fee', 'r.fare_amount'])
      .select(['r.payment_method', 'r.commission_rate', 'r.price_breakdown', 'r.cash_collected'])
      .select(['r.scheduled_at', 'r.time_zone']);
  }

  /** What pricing a waking scheduled ride needs (contract section 22), read in its wake-up's transaction. */
  pricingFacts(trx: Transaction<Database>, id: string) {
    return trx
      .selectFrom('rides')
      .select(['status', 'quote_id', 'pickup_lat', 'pickup_lng', 'destination_lat', 'destination_lng'])
      .select(['vehicle_type', 'country_id'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async setPrice(trx: Transaction<Database>, id: string, columns: Updateable<RidesTable>): Promise<void> {
    await trx.updateTable('rides').set(columns).where('id', '=', id).execute();
  }

  async load(id: string, trx?: Transaction<Database>): Promise<RideRow | undefined> {
    return (await runPrepared(trx ?? this.db, this.selectRides(trx).where('r.id', '=', id).compile()))[0];
  }

  list(auth: AuthContext, filter: { status?: RideStatus; cursor?: Cursor; limit: number }) {
    let q = this.selectRides();
    const me = auth.userId;
    if (auth.role === 'CUSTOMER') q = q.where('r.customer_id', '=', me);
    else if (auth.role === 'DRIVER') q = q.where('r.driver_id', '=', me);
    else if (auth.role === 'COMPANY') {
      q = q.where('r.driver_id', 'in', (eb) =>
        eb.selectFrom('driver_profiles').select('user_id').where('company_id', '=', me),
      );
    } else if (auth.role !== 'ADMIN') q = q.where(sql<boolean>`false`);
    if (filter.status) q = q.where('r.status', '=', filter.status);
    if (filter.cursor) q = q.where(beforeCursor(filter.cursor, 'r.created_at', 'r.id'));
    return q
      .orderBy('r.created_at', 'desc')
      .orderBy('r.id', 'desc')
      .limit(filter.limit + 1)
      .execute();
  }

  async insert(trx: Transaction<Database>, row: Insertable<Omit<RidesTable, 'status_history'>>): Promise<void> {
    await trx.insertInto('rides').values(row).execute();
  }

  /**
   * The conditional status change and, when it happened, its history row, in one statement.
   * `requestedAfter`: only when the ride last entered REQUESTED (its updated_at while REQUESTED) after that instant.
   */
  async updateStatus(
    trx: Transaction<Database>,
    id: string,
    from: RideStatus,
    set: Omit<StatusSet<RideStatus>, 'recipient_name'>,
    effects: { history: StatusHistoryEntry<RideStatus>; releaseDriver?: boolean },
    requestedAfter?: Date,
  ) {
    const { history } = effects;
    const changes = trx
      .with('moved', (db) => {
        let q = db.updateTable('rides').set(set).where('id', '=', id).where('status', '=', from);
        if (requestedAfter) q = q.where('updated_at', '>', requestedAfter);
        return q.returning(['id', 'driver_id']);
      })
      .with('history', (db) =>
        db
          .insertInto('ride_status_history')
          .columns(['ride_id', 'status', 'reason', 'actor_id', 'at'])
          .expression(
            sql`select id, ${history.status}::text, ${history.reason}::text, ${history.actorId}::uuid, ${history.at}::timestamptz from moved`,
          ),
      );
    // The job's end frees its driver in the same statement (the casts: Kysely's query creators are
    // invariant in their CTE types, and the release needs only `moved`'s id and driver_id).
    const all = effects.releaseDriver
      ? (changes.with(
          'released',
          (db) => releaseMovedDriver(db as never, set.updated_at) as never,
        ) as unknown as typeof changes)
      : changes;
    const query = all.selectFrom('moved').select(['driver_id']);
    // Prepared: one text per set of columns a transition writes (a handful).
    return (await runPrepared(trx, query.compile()))[0];
  }

  async currentStatus(trx: Transaction<Database>, id: string): Promise<RideStatus> {
    return (await trx.selectFrom('rides').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
  }

  async addHistory(
    trx: Transaction<Database>,
    id: string,
    entry: { status: RideStatus; reason: string | null; actorId: string | null; at: Date },
  ): Promise<void> {
    await trx
      .insertInto('ride_status_history')
      .values({ ride_id: id, status: entry.status, reason: entry.reason, actor_id: entry.actorId, at: entry.at })
      .execute();
  }

  /** The positions its driver reported from `since` on (written behind while the ride was IN_PROGRESS), in order. */
  tripPositions(id: string, since: Date) {
    return this.db
      .selectFrom('ride_positions')
      .select(['lat', 'lng', 'at'])
      .where('ride_id', '=', id)
      .where('at', '>=', since)
      .orderBy('at')
      .execute();
  }

  /**
   * Expires REQUESTED rides that entered REQUESTED (created, or released: updated_at) before `cutoff`
   * (and, booked ahead, whose scheduledAt is before `scheduledBefore`). One statement (update + history insert), so
   * several instances may run it at once: each ride is expired, and recorded, exactly once.
   */
  async expireRequested(cutoff: Date, now: Date, reason: string, scheduledBefore: Date): Promise<string[]> {
    const result = await sql<{ ride_id: string }>`
      with expired as (
        update rides set status = 'EXPIRED', updated_at = ${now}
        where status = 'REQUESTED' and updated_at < ${cutoff}
          -- A ride booked ahead keeps searching until scheduledAt + 10m (contract section 22).
          and (scheduled_at is null or scheduled_at < ${scheduledBefore})
        returning id
      )
      insert into ride_status_history (ride_id, status, reason, actor_id, at)
      select id, 'EXPIRED', ${reason}, null, ${now} from expired
      returning ride_id`.execute(this.db);
    return result.rows.map((r) => r.ride_id);
  }
}
