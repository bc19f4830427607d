// Kysely for packages and their history. The hot reads are batched and, on a PostgreSQL server,
// run as named prepared statements.
import DataLoader from 'dataloader';
import { CompiledQuery, sql, type Insertable, type Transaction, type Updateable } from 'kysely';
import type pg from 'pg';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { PackagesTable, PackageStatus, PaymentMethod } from '../../db/tables/jobs.js';
import type { VehicleType } from '../../db/schema.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';
import { DRIVER_SUMMARY_COLUMNS } from '../jobs/driver-claims.js';
import type { JobStore, StatusHistoryEntry, StatusSet } from '../jobs/lifecycle.js';
import { releaseMovedDriver } from '../jobs/driver-claims.repository.js';
import { prepared, preparedName, runPrepared } from '../../db/prepared.js';
import { FINAL_PACKAGE_STATUSES } from './package-status.js';
import type { Executor } from '../../db/executor.js';
import {
  PACKAGE_JOINED_COLUMNS,
  PACKAGE_OWN_COLUMNS,
  PackageSteps,
  type PackageStep,
} from './package-step.repository.js';

/** An instant as JavaScript's toISOString writes it (UTC, milliseconds, Z). */
const isoSql = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The poll's read: who may see each package, and the package as JSON text built by PostgreSQL and
 * sent as it is (a test holds it equal to toResponse), sparing the hottest read a parse and a
 * serialization of some twenty columns.
 */
const PACKAGE_JSON_SELECT = `
  select p.id, p.created_by, p.customer_id, p.business_id, p.driver_id, dp.company_id as driver_company_id, p.tracking_nonce,
    p.status, p.payment_method, p.commission_rate, p.price_amount, p.price_currency, p.price_breakdown, p.cancellation_fee,
    p.cod_amount, p.cash_collected,
    p.price_inputs, tp.amount as tip_amount, tp.currency as tip_currency,
    p.vehicle_type, p.created_at, p.pickup_window_start, p.pickup_window_end, p.dropoff_window_end, p.pickup_lat, p.pickup_lng,
    (p.dropoff->'location'->>'lat')::float8 as dropoff_lat, (p.dropoff->'location'->>'lng')::float8 as dropoff_lng,
    dp.last_lat as driver_lat, dp.last_lng as driver_lng,
    json_build_object(
      'id', p.id, 'status', p.status, 'orderType', 'PACKAGE_DELIVERY', 'vehicleType', p.vehicle_type,
      'countryId', p.country_id, 'businessId', p.business_id, 'customerId', p.customer_id, 'reference', p.reference,
      'pickup', p.pickup, 'dropoff', p.dropoff, 'parcel', p.parcel,
      'driver', case when p.driver_id is not null and dp.vehicle_type is not null then json_build_object(
        'id', p.driver_id, 'firstName', coalesce(du.first_name, ''), 'phone', coalesce(du.phone, ''),
        'vehicleType', dp.vehicle_type, 'vehiclePlate', coalesce(dp.vehicle_plate, ''),
        'rating', dp.rating, 'ratingCount', dp.rating_count,
        'location', case when dp.last_lat is not null and dp.last_lng is not null and dp.last_location_at is not null
          then json_build_object('lat', dp.last_lat, 'lng', dp.last_lng, 'heading', dp.last_heading, 'speed', dp.last_speed,
                                 'updatedAt', ${isoSql('dp.last_location_at')}) end) end,
      'statusHistory', p.status_history,
      'price', case when p.price_amount is not null then json_build_object('amount', p.price_amount, 'currency', p.price_currency) end,
      'paymentMethod', p.payment_method,
      'payment', case when p.payment_method = 'MPESA' then json_strip_nulls(json_build_object('method', 'MPESA',
        'phone', p.payment_phone, 'state', p.payment_state, 'receipt', p.payment_receipt, 'amount', p.price_amount,
        'currency', p.price_currency, 'failure', p.payment_failure)) end,
      'cancellationFee', case when p.cancellation_fee is not null then json_build_object('amount', p.cancellation_fee, 'currency', p.price_currency) end,
      'proofRequired', to_json(p.proof_required),
      'proof', case when p.proof_at is not null then json_strip_nulls(json_build_object(
        'photoUrl', case when p.proof_photo_key is not null then '/api/packages/' || p.id || '/proof/photo' end,
        'signatureUrl', case when p.proof_signature_key is not null then '/api/packages/' || p.id || '/proof/signature' end,
        'recipientName', p.proof_recipient_name,
        'at', ${isoSql('p.proof_at')})) end,
      'createdAt', ${isoSql('p.created_at')}, 'updatedAt', ${isoSql('p.updated_at')},
      'pickupWindow', case when p.pickup_window_start is not null then json_build_object(
        'start', ${isoSql('p.pickup_window_start')}, 'end', ${isoSql('p.pickup_window_end')}) end,
      'dropoffWindow', case when p.dropoff_window_start is not null then json_build_object(
        'start', ${isoSql('p.dropoff_window_start')}, 'end', ${isoSql('p.dropoff_window_end')}) end,
      'timeZone', p.time_zone,
      'reasonCode', p.fail_reason_code, 'previousAttemptId', p.previous_attempt_id, 'returnOf', p.return_of,
      'followUpId', p.follow_up_id,
      'dispatch', json_build_object(
        'state', case when p.status <> 'PENDING' then (case when dj.job_id is null then 'OFF' else 'DONE' end)
                      when dj.state is null or dj.state = 'DONE' then 'OFF' else dj.state end,
        'attempts', coalesce(dj.attempts, 0))
    )::text as body
  from packages p
  left join users du on du.id = p.driver_id
  left join driver_profiles dp on dp.user_id = p.driver_id
  left join dispatch_jobs dj on dj.job_id = p.id
  left join tips tp on tp.job_type = 'PACKAGE' and tp.job_id = p.id`;
const PACKAGE_JSON_BY_IDS = `${PACKAGE_JSON_SELECT}
  where p.id = any(array(select value::uuid from jsonb_array_elements_text($1::jsonb)))`;
const PACKAGE_JSON_BY_ID = `${PACKAGE_JSON_SELECT}
  where p.id = $1::uuid`;

export interface PackageJsonRow {
  id: string;
  created_by: string;
  customer_id: string | null;
  business_id: string | null;
  status: PackageStatus;
  payment_method: PaymentMethod;
  commission_rate: number;
  price_amount: number | null;
  price_currency: string | null;
  price_breakdown: unknown;
  cancellation_fee: number | null;
  cod_amount: number | null;
  cash_collected: number | null;
  driver_id: string | null;
  driver_company_id: string | null;
  tracking_nonce: string;
  price_inputs: unknown;
  tip_amount: number | null;
  tip_currency: string | null;
  /** What its `sla` is computed from at each read (contract section 23). */
  vehicle_type: VehicleType;
  created_at: Date;
  pickup_window_start: Date | null;
  pickup_window_end: Date | null;
  dropoff_window_end: Date | null;
  pickup_lat: number;
  pickup_lng: number;
  dropoff_lat: number;
  dropoff_lng: number;
  driver_lat: number | null;
  driver_lng: number | null;
  body: string;
}

export type PackageRow = Awaited<
  ReturnType<ReturnType<PackagesRepository['selectPackages']>['executeTakeFirstOrThrow']>
>;

export class PackagesRepository implements JobStore<PackageStatus, PackageRow> {
  private readonly byId: CompiledQuery<PackageRow>;
  private readonly byIds: CompiledQuery<PackageRow>;
  /** Reads outside a transaction: the ids asked for in one event-loop round, fetched by one query. */
  private readonly loader: DataLoader<string, PackageRow | undefined>;
  private readonly jsonLoader: DataLoader<string, PackageJsonRow | undefined>;
  private readonly steps: PackageSteps;

  constructor(
    private readonly db: DB,
    private readonly pgPool?: pg.Pool,
  ) {
    this.steps = new PackageSteps(db);
    this.byId = prepared(this.selectPackages().where('p.id', '=', '00000000-0000-0000-0000-000000000000').compile());
    this.byIds = this.selectPackages()
      // The ids as one JSON parameter: the plan does not depend on how many there are, so PostgreSQL
      // keeps one generic plan for this named statement (with a uuid[] it re-planned every batch).
      .where(sql<boolean>`p.id = any(array(select value::uuid from jsonb_array_elements_text(${'[]'}::jsonb)))`)
      .compile();
    const batching = {
      cache: false,
      maxBatchSize: 100,
      batchScheduleFn: (callback: () => void) => setImmediate(callback),
    };
    this.loader = new DataLoader(
      (ids) => this.byIdsQuery<PackageRow>({ one: this.byId.sql, many: this.byIds.sql }, ids),
      batching,
    );
    this.jsonLoader = new DataLoader(
      (ids) => this.byIdsQuery<PackageJsonRow>({ one: PACKAGE_JSON_BY_ID, many: PACKAGE_JSON_BY_IDS }, ids),
      batching,
    );
  }

  selectPackages() {
    return (
      this.db
        .selectFrom('packages as p')
        .leftJoin('users as du', 'du.id', 'p.driver_id')
        .leftJoin('driver_profiles as dp', 'dp.user_id', 'p.driver_id')
        .leftJoin('dispatch_jobs as dj', 'dj.job_id', 'p.id')
        // A literal, not a parameter: the compiled by-id queries are run with the ids as their only parameters.
        .leftJoin('tips as tp', (join) =>
          join.onRef('tp.job_id', '=', 'p.id').on(sql<boolean>`tp.job_type = 'PACKAGE'`),
        )
        .select(PACKAGE_JOINED_COLUMNS)
        .select(PACKAGE_OWN_COLUMNS)
        .select([...DRIVER_SUMMARY_COLUMNS, 'p.status_history'])
    );
  }

  async load(id: string, trx?: Transaction<Database>): Promise<PackageRow | undefined> {
    if (!trx) return this.loader.load(id);
    const result = await trx.executeQuery<PackageRow>({ ...this.byId, parameters: [id] });
    return result.rows[0];
  }

  loadJson(id: string): Promise<PackageJsonRow | undefined> {
    return this.jsonLoader.load(id);
  }

  /**
   * A batch of one (the usual case) by its id, a larger one by the JSON list: both named statements
   * whose plan does not depend on the values, so PostgreSQL plans each once per connection, and the
   * one-id plan probes each joined table by key whatever their sizes. Named as every marked
   * statement is (preparedName: by its text), so the by-id read shares one statement per connection
   * with the same read inside a transaction.
   */
  private async byIdsQuery<R extends { id: string }>(
    texts: { one: string; many: string },
    ids: readonly string[],
  ): Promise<(R | undefined)[]> {
    const [text, values] = ids.length === 1 ? [texts.one, [ids[0]]] : [texts.many, [JSON.stringify(ids)]];
    const rows = this.pgPool
      ? (await this.pgPool.query<R>({ name: preparedName(text), text, values })).rows
      : (await this.db.executeQuery<R>(CompiledQuery.raw(text, values))).rows;
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id));
  }

  list(auth: AuthContext, filter: { status?: PackageStatus; cursor?: Cursor; limit: number }) {
    let q = this.selectPackages();
    const me = auth.userId;
    switch (auth.role) {
      case 'ADMIN':
        break;
      case 'BUSINESS':
        q = q.where('p.created_by', '=', me);
        break;
      case 'CUSTOMER':
        q = q.where((eb) => eb.or([eb('p.created_by', '=', me), eb('p.customer_id', '=', me)]));
        break;
      case 'DRIVER':
        q = q.where('p.driver_id', '=', me);
        break;
      case 'COMPANY':
        // Its drivers' packages, and the PENDING ones of its country that it may assign (contract section 9).
        q = q.where((eb) =>
          eb.or([
            eb('p.driver_id', 'in', eb.selectFrom('driver_profiles').select('user_id').where('company_id', '=', me)),
            eb.and([
              eb('p.status', '=', 'PENDING'),
              eb('p.country_id', '=', eb.selectFrom('users').select('country_id').where('id', '=', me)),
            ]),
          ]),
        );
        break;
    }
    if (filter.status) q = q.where('p.status', '=', filter.status);
    if (filter.cursor) q = q.where(beforeCursor(filter.cursor, 'p.created_at', 'p.id'));
    return q
      .orderBy('p.created_at', 'desc')
      .orderBy('p.id', 'desc')
      .limit(filter.limit + 1)
      .execute();
  }

  /** What pricing a waking scheduled package needs (contract section 22), read in its wake-up's transaction. */
  pricingFacts(trx: Executor, id: string) {
    return trx
      .selectFrom('packages')
      .select(['status', 'quote_id', 'pickup', 'dropoff', 'vehicle_type', 'country_id'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async setPrice(trx: Executor, id: string, columns: Updateable<PackagesTable>): Promise<void> {
    await trx.updateTable('packages').set(columns).where('id', '=', id).execute();
  }

  async insert(
    trx: Transaction<Database>,
    row: Insertable<
      Omit<
        PackagesTable,
        | 'delivery_code_attempts'
        | 'status_history'
        | 'tracking_nonce'
        | 'notify_recipient'
        | 'proof_photo_key'
        | 'proof_signature_key'
        | 'proof_recipient_name'
        | 'proof_at'
      >
    > & {
      tracking_nonce: string;
      notify_recipient: boolean;
    },
  ): Promise<void> {
    await trx.insertInto('packages').values(row).execute();
  }

  /**
   * The conditional status change and, when it happened, its history row and (releaseDriver) its
   * driver freed, in one statement. Undefined when the package was not in `from`.
   */
  async updateStatus(
    trx: Transaction<Database>,
    id: string,
    from: PackageStatus,
    set: Omit<StatusSet<PackageStatus>, 'fare_amount' | 'fare_detail'>,
    effects: { history: StatusHistoryEntry<PackageStatus>; releaseDriver?: boolean },
  ) {
    const { history } = effects;
    const finished = FINAL_PACKAGE_STATUSES.includes(set.status) ? { finished_at: set.updated_at } : {};
    const changes = trx
      .with('moved', (db) =>
        db
          .updateTable('packages')
          .set({ ...set, ...finished })
          .where('id', '=', id)
          .where('status', '=', from)
          .returning(['id', 'business_id', 'driver_id']),
      )
      .with('history', (db) =>
        db
          .insertInto('package_status_history')
          .columns(['package_id', 'status', 'reason', 'reason_code', 'actor_id', 'at'])
          .expression(
            sql`select id, ${history.status}::text, ${history.reason}::text, ${history.reasonCode ?? null}::text, ${history.actorId}::uuid, ${history.at}::timestamptz from moved`,
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
    const query = all.selectFrom('moved').select(['business_id', 'driver_id']);
    // Prepared: one text per set of columns a transition writes (a handful).
    return (await runPrepared(trx, query.compile()))[0];
  }

  /** A driver's step in one statement (package-step.repository.ts). */
  step(db: Executor, change: PackageStep): Promise<PackageRow | undefined> {
    return this.steps.step(db, change);
  }

  /** The row a keyed step stored with its key, as a read returns it. */
  storedRow(text: string): PackageRow {
    return this.steps.storedRow(text);
  }

  /** A business's packages that reached a final status in [from, to), oldest first (the statement). */
  finishedOf(businessId: string, from: Date, to: Date, limit: number) {
    return this.db
      .selectFrom('packages')
      .select([
        'id',
        'reference',
        'status',
        'vehicle_type',
        'country_id',
        'created_at',
        'finished_at',
        'price_amount',
        'price_currency',
        'cancellation_fee',
      ])
      .where('business_id', '=', businessId)
      .where('finished_at', '>=', from)
      .where('finished_at', '<', to)
      .orderBy('finished_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async currentStatus(trx: Transaction<Database>, id: string): Promise<PackageStatus> {
    return (await trx.selectFrom('packages').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
  }

  async addHistory(
    trx: Transaction<Database>,
    id: string,
    entry: { status: PackageStatus; reason: string | null; actorId: string | null; at: Date },
  ): Promise<void> {
    await trx
      .insertInto('package_status_history')
      .values({ package_id: id, status: entry.status, reason: entry.reason, actor_id: entry.actorId, at: entry.at })
      .execute();
  }

  async reserveCodeAttempt(db: Executor, id: string, maxAttempts: number): Promise<boolean> {
    const reserved = await db
      .updateTable('packages')
      .set((eb) => ({ delivery_code_attempts: eb('delivery_code_attempts', '+', 1) }))
      .where('id', '=', id)
      .where('delivery_code_attempts', '<', maxAttempts)
      .returning('id')
      .executeTakeFirst();
    return Boolean(reserved);
  }
}
export type { PackageStep } from './package-step.repository.js';
