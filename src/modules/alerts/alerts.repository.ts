// Kysely and SQL of alerts (contract section 23): the monitor's one read of every active job, the
// alerts it raises (ON CONFLICT DO NOTHING on the job-and-kind key: once, whichever instance), their
// outbox rows, its memory of drivers, and the reads, acknowledgements and resolutions of the routes.
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { AlertKind, AlertState } from '../../db/tables/alerts.js';
import type { JobTypeName } from '../../db/tables/dispatch.js';
import type { VehicleType } from '../../db/schema.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';

/** The monitor's lock: one instance does a turn at a time (pg_try_advisory_xact_lock's key). */
const MONITOR_LOCK = 230_023;

/** An active job as the monitor reads it (times as epoch milliseconds, computed by PostgreSQL). */
export interface ActiveJobRow {
  job_type: JobTypeName;
  job_id: string;
  status: string;
  vehicle_type: VehicleType;
  business_id: string | null;
  driver_id: string | null;
  driver_company_id: string | null;
  created_ms: number;
  pickup_start_ms: number | null;
  pickup_end_ms: number | null;
  dropoff_end_ms: number | null;
  scheduled_ms: number | null;
  duration_seconds: number | null;
  pickup_lat: number;
  pickup_lng: number;
  dropoff_lat: number;
  dropoff_lng: number;
  driver_lat: number | null;
  driver_lng: number | null;
  dispatch_state: string | null;
  entered_ms: number | null;
  offers: number;
  watch_driver_id: string | null;
  anchor_lat: number | null;
  anchor_lng: number | null;
  anchor_ms: number | null;
  arrived_ms: number | null;
  raised: string[] | string | null;
}

export interface NewAlert {
  id: string;
  kind: AlertKind;
  jobType: JobTypeName;
  jobId: string;
  driverId: string | null;
  businessId: string | null;
  details: string;
}

export interface AlertRow {
  id: string;
  kind: AlertKind;
  job_type: JobTypeName;
  job_id: string;
  driver_id: string | null;
  business_id: string | null;
  raised_at: Date;
  details: unknown;
  state: AlertState;
  state_by: string | null;
  state_at: Date | null;
  driver_company_id: string | null;
}

export interface WatchChange {
  jobType: JobTypeName;
  jobId: string;
  driverId: string;
  anchorLat: number | null;
  anchorLng: number | null;
  anchorAt: string;
  arrivedAt: string | null;
}

const ms = (column: string) => sql.raw(`(extract(epoch from ${column}) * 1000)::float8`);

export interface AlertFilter {
  state?: AlertState;
  kind?: AlertKind;
  from?: Date;
  to?: Date;
  cursor?: Cursor;
  limit: number;
}

export class AlertsRepository {
  constructor(private readonly db: DB) {}

  /** Whether this transaction holds the monitor's turn (released at its end; none waits for it). */
  async tryLock(trx: Executor): Promise<boolean> {
    const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${MONITOR_LOCK}) as ok`.execute(trx);
    return rows[0]?.ok === true;
  }

  /**
   * Every active package and ride in one statement, with what the rules need: its promise's columns,
   * its driver's last position, dispatch's state and offers (waiting jobs only), the monitor's memory
   * and the kinds already raised (whose conditions need no check).
   */
  async activeJobs(trx: Executor): Promise<ActiveJobRow[]> {
    const { rows } = await sql<ActiveJobRow>`
      select 'PACKAGE' as job_type, p.id as job_id, p.status, p.vehicle_type, p.business_id, p.driver_id,
        dp.company_id as driver_company_id,
        ${ms('p.created_at')} as created_ms, ${ms('p.pickup_window_start')} as pickup_start_ms,
        ${ms('p.pickup_window_end')} as pickup_end_ms, ${ms('p.dropoff_window_end')} as dropoff_end_ms,
        null::float8 as scheduled_ms, (p.price_inputs->>'durationSeconds')::float8 as duration_seconds,
        p.pickup_lat, p.pickup_lng,
        (p.dropoff->'location'->>'lat')::float8 as dropoff_lat, (p.dropoff->'location'->>'lng')::float8 as dropoff_lng,
        dp.last_lat as driver_lat, dp.last_lng as driver_lng, dj.state as dispatch_state,
        ${ms('coalesce(dj.entered_at, dj.created_at)')} as entered_ms,
        case when p.status = 'PENDING' then (select count(*)::int from dispatch_offers o where o.job_id = p.id) else 0 end as offers,
        w.driver_id as watch_driver_id, w.anchor_lat, w.anchor_lng, ${ms('w.anchor_at')} as anchor_ms, ${ms('w.arrived_at')} as arrived_ms,
        (select array_agg(a.kind) from alerts a where a.job_type = 'PACKAGE' and a.job_id = p.id) as raised
      from packages p
      left join driver_profiles dp on dp.user_id = p.driver_id
      left join dispatch_jobs dj on dj.job_id = p.id
      left join alert_watch w on w.job_type = 'PACKAGE' and w.job_id = p.id
      where p.status in ('PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT')
        -- An M-Pesa package is not in dispatch until paid (section 26): nothing to alert on before.
        and (p.payment_state is null or p.payment_state = 'PAID')
      union all
      select 'RIDE', r.id, r.status, r.vehicle_type, null, r.driver_id, dp.company_id,
        ${ms('r.created_at')}, null, null, null, ${ms('r.scheduled_at')}, (r.price_inputs->>'durationSeconds')::float8,
        r.pickup_lat, r.pickup_lng, r.destination_lat, r.destination_lng,
        dp.last_lat, dp.last_lng, dj.state, ${ms('coalesce(dj.entered_at, dj.created_at)')},
        case when r.status = 'REQUESTED' then (select count(*)::int from dispatch_offers o where o.job_id = r.id) else 0 end,
        w.driver_id, w.anchor_lat, w.anchor_lng, ${ms('w.anchor_at')}, ${ms('w.arrived_at')},
        (select array_agg(a.kind) from alerts a where a.job_type = 'RIDE' and a.job_id = r.id)
      from rides r
      left join driver_profiles dp on dp.user_id = r.driver_id
      left join dispatch_jobs dj on dj.job_id = r.id
      left join alert_watch w on w.job_type = 'RIDE' and w.job_id = r.id
      where r.status in ('REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS')`.execute(trx);
    return rows;
  }

  /** The alerts not raised before (the job-and-kind key), as inserted. */
  async insertAlerts(trx: Executor, alerts: NewAlert[], raisedAt: Date): Promise<AlertRow[]> {
    if (alerts.length === 0) return [];
    const col = <K extends keyof NewAlert>(key: K) => alerts.map((a) => a[key]);
    const { rows } = await sql<AlertRow>`
      with ins as (
        insert into alerts (id, kind, job_type, job_id, driver_id, business_id, raised_at, details)
        select v.id, v.kind, v.job_type, v.job_id, v.driver_id, v.business_id, ${raisedAt}::timestamptz, v.details::jsonb
        from unnest(${col('id')}::uuid[], ${col('kind')}::text[], ${col('jobType')}::text[], ${col('jobId')}::uuid[],
                    ${col('driverId')}::uuid[], ${col('businessId')}::uuid[], ${col('details')}::text[])
             as v(id, kind, job_type, job_id, driver_id, business_id, details)
        on conflict (job_type, job_id, kind) do nothing
        returning *
      )
      select ins.*, dp.company_id as driver_company_id from ins left join driver_profiles dp on dp.user_id = ins.driver_id`.execute(
      trx,
    );
    return rows;
  }

  /** alert.raised to every enabled endpoint of each package's business that subscribed to it (never by default). */
  async insertWebhooks(
    trx: Executor,
    rows: { businessId: string; packageId: string; payload: string }[],
    at: Date,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const result = await sql`
      insert into webhook_deliveries (id, endpoint_id, event, delivery_id, payload, status, next_attempt_at, created_at)
      select gen_random_uuid(), e.id, 'alert.raised', v.package_id, v.payload, 'PENDING', ${at}::timestamptz, ${at}::timestamptz
      from unnest(${rows.map((r) => r.businessId)}::uuid[], ${rows.map((r) => r.packageId)}::text[],
                  ${rows.map((r) => r.payload)}::text[]) with ordinality as v(business_id, package_id, payload, n)
      join webhook_endpoints e on e.business_id = v.business_id
      where e.enabled and 'alert.raised' = any(e.events)
      order by v.n, e.created_at, e.id`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  }

  /** The packages' statuses (the webhook body's `status`). */
  async packageStatuses(trx: Executor, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await trx.selectFrom('packages').select(['id', 'status']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.status]));
  }

  /** The monitor's memory of the drivers that moved, arrived or changed (one statement). */
  async saveWatches(trx: Executor, changes: WatchChange[]): Promise<void> {
    if (changes.length === 0) return;
    const col = <K extends keyof WatchChange>(key: K) => changes.map((c) => c[key]);
    await sql`
      insert into alert_watch (job_type, job_id, driver_id, anchor_lat, anchor_lng, anchor_at, arrived_at)
      select * from unnest(${col('jobType')}::text[], ${col('jobId')}::uuid[], ${col('driverId')}::uuid[],
                           ${col('anchorLat')}::float8[], ${col('anchorLng')}::float8[], ${col('anchorAt')}::timestamptz[],
                           ${col('arrivedAt')}::timestamptz[])
      on conflict (job_type, job_id) do update set driver_id = excluded.driver_id, anchor_lat = excluded.anchor_lat,
        anchor_lng = excluded.anchor_lng, anchor_at = excluded.anchor_at, arrived_at = excluded.arrived_at`.execute(
      trx,
    );
  }

  /** Forgets the jobs that have ended (by their primary keys: no list of the active ones is sent). */
  async dropWatches(trx: Executor): Promise<void> {
    await sql`
      delete from alert_watch w
      where not exists (select 1 from packages p where w.job_type = 'PACKAGE' and p.id = w.job_id
                          and p.status in ('PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT'))
        and not exists (select 1 from rides r where w.job_type = 'RIDE' and r.id = w.job_id
                          and r.status in ('REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS'))`.execute(trx);
  }

  private visible(auth: AuthContext) {
    let q = this.db
      .selectFrom('alerts as a')
      .leftJoin('driver_profiles as dp', 'dp.user_id', 'a.driver_id')
      .selectAll('a')
      .select('dp.company_id as driver_company_id');
    if (auth.role === 'BUSINESS') q = q.where('a.business_id', '=', auth.userId);
    else if (auth.role === 'COMPANY') q = q.where('dp.company_id', '=', auth.userId);
    else if (auth.role !== 'ADMIN') q = q.where(sql<boolean>`false`);
    return q;
  }

  list(auth: AuthContext, f: AlertFilter): Promise<AlertRow[]> {
    let q = this.visible(auth);
    if (f.state) q = q.where('a.state', '=', f.state);
    if (f.kind) q = q.where('a.kind', '=', f.kind);
    if (f.from) q = q.where('a.raised_at', '>=', f.from);
    if (f.to) q = q.where('a.raised_at', '<', f.to);
    if (f.cursor) q = q.where(beforeCursor(f.cursor, 'a.raised_at', 'a.id'));
    return q
      .orderBy('a.raised_at', 'desc')
      .orderBy('a.id', 'desc')
      .limit(f.limit + 1)
      .execute() as Promise<AlertRow[]>;
  }

  getVisible(auth: AuthContext, id: string): Promise<AlertRow | undefined> {
    return this.visible(auth).where('a.id', '=', id).executeTakeFirst() as Promise<AlertRow | undefined>;
  }

  /** Moves the alert from one of `from` to `to` (a conditional update: a concurrent change wins once). */
  async setState(
    trx: Executor,
    change: { id: string; from: AlertState[]; to: AlertState; by: string; at: Date },
  ): Promise<boolean> {
    const result = await trx
      .updateTable('alerts')
      .set({ state: change.to, state_by: change.by, state_at: change.at })
      .where('id', '=', change.id)
      .where('state', 'in', change.from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async audit(
    trx: Executor,
    row: {
      id: string;
      alertId: string;
      action: 'ACKNOWLEDGE' | 'RESOLVE';
      from: AlertState;
      to: AlertState;
      actorId: string;
      actorRole: string;
      at: Date;
    },
  ): Promise<void> {
    await trx
      .insertInto('alert_audit')
      .values({
        id: row.id,
        alert_id: row.alertId,
        action: row.action,
        from_state: row.from,
        to_state: row.to,
        actor_id: row.actorId,
        actor_role: row.actorRole,
        at: row.at,
      })
      .execute();
  }
}
