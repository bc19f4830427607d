// Rides (contract section 10): request, the driver's steps, cancellation and expiry.
import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { AuthContext } from '../../shared/auth-context.js';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, conflict, forbidden, notFound } from '../../shared/errors.js';
import { beforeCursor, decodeCursor, toPage } from '../../shared/pagination.js';
import {
  claimDriver,
  DRIVER_SUMMARY_COLUMNS,
  explainClaimFailure,
  publishDriverJob,
  pushNearbyJob,
  releaseDriver,
  toDriverSummary,
  toHistory,
  type HistoryJson,
} from '../jobs/driver-claims.js';
import type { DriverIndex } from '../matching/driver-index.js';
import type { RideStatus } from '../../db/tables/jobs.js';
import { checkRideTransition, FINAL_RIDE_STATUSES, type RideActor } from './ride-status.js';
import type { CreateRideBody, RideListQuery, RideResponse } from './rides.schemas.js';

/** A ride nobody accepted within this time expires. */
export const RIDE_EXPIRY_MS = 5 * 60_000;

export const rideNotFound = () => notFound('Ride not found', 'RIDE_NOT_FOUND');
const invalidTransition = (status: string): AppError => conflict(`Ride is ${status}`, 'INVALID_STATUS_TRANSITION');

type RideRow = Awaited<ReturnType<ReturnType<RideService['selectRides']>['executeTakeFirstOrThrow']>>;

export class RideService {
  constructor(private readonly deps: { db: DB; bus: Bus; clock: Clock; driverLocationTtlMs: number; driverIndex: DriverIndex }) {}

  selectRides(db: DB | Transaction<Database> = this.deps.db) {
    return db
      .selectFrom('rides as r')
      .leftJoin('users as du', 'du.id', 'r.driver_id')
      .leftJoin('driver_profiles as dp', 'dp.user_id', 'r.driver_id')
      .select([
        'r.id',
        'r.status',
        'r.customer_id',
        'r.driver_id',
        'r.vehicle_type',
        'r.country_id',
        'r.pickup_lat',
        'r.pickup_lng',
        'r.destination_lat',
        'r.destination_lng',
        'r.created_at',
        'r.updated_at',
        ...DRIVER_SUMMARY_COLUMNS,
        sql<HistoryJson[]>`(select coalesce(json_agg(json_build_object('status', h.status, 'at', (extract(epoch from h.at) * 1000)::bigint, 'reason', h.reason) order by h.id), '[]'::json)
          from ride_status_history h where h.ride_id = r.id)`.as('history'),
      ]);
  }

  private load(id: string, db: DB | Transaction<Database> = this.deps.db) {
    return this.selectRides(db).where('r.id', '=', id).executeTakeFirst();
  }

  static canSee(row: Pick<RideRow, 'customer_id' | 'driver_id' | 'driver_company_id'>, auth: AuthContext): boolean {
    if (auth.role === 'ADMIN') return true;
    if (auth.userId === row.customer_id || auth.userId === row.driver_id) return true;
    return auth.role === 'COMPANY' && row.driver_id !== null && row.driver_company_id === auth.userId;
  }

  static actorFor(row: Pick<RideRow, 'customer_id' | 'driver_id'>, auth: AuthContext): RideActor {
    if (auth.role === 'ADMIN') return 'ADMIN';
    if (auth.userId === row.driver_id) return 'ASSIGNED_DRIVER';
    if (auth.userId === row.customer_id) return 'CUSTOMER';
    if (auth.role === 'COMPANY') return 'COMPANY';
    return 'DRIVER';
  }

  static toResponse(row: RideRow): RideResponse {
    return {
      id: row.id,
      status: row.status,
      orderType: 'RIDE',
      customerId: row.customer_id,
      vehicleType: row.vehicle_type,
      countryId: row.country_id,
      pickupLocation: { lat: row.pickup_lat, lng: row.pickup_lng },
      destinationLocation: { lat: row.destination_lat, lng: row.destination_lng },
      driver: toDriverSummary(row),
      statusHistory: toHistory(row.history),
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    };
  }

  async get(id: string, auth: AuthContext): Promise<RideResponse> {
    const row = await this.load(id);
    if (!row || !RideService.canSee(row, auth)) throw rideNotFound();
    return RideService.toResponse(row);
  }

  async list(auth: AuthContext, query: RideListQuery) {
    const limit = query.limit ?? 20;
    const cursor = decodeCursor(query.cursor);
    let q = this.selectRides();
    const me = auth.userId;
    if (auth.role === 'CUSTOMER') q = q.where('r.customer_id', '=', me);
    else if (auth.role === 'DRIVER') q = q.where('r.driver_id', '=', me);
    else if (auth.role === 'COMPANY') {
      q = q.where('r.driver_id', 'in', (eb) => eb.selectFrom('driver_profiles').select('user_id').where('company_id', '=', me));
    } else if (auth.role !== 'ADMIN') q = q.where(sql<boolean>`false`);
    if (query.status) q = q.where('r.status', '=', query.status);
    if (cursor) q = q.where(beforeCursor(cursor, 'r.created_at', 'r.id'));
    const rows = await q.orderBy('r.created_at', 'desc').orderBy('r.id', 'desc').limit(limit + 1).execute();
    return toPage(
      rows.map((r) => ({ ...r, createdAt: r.created_at })),
      limit,
      (r) => RideService.toResponse(r),
    );
  }

  async create(trx: Transaction<Database>, auth: AuthContext, body: CreateRideBody): Promise<RideResponse> {
    const country = await trx.selectFrom('countries').select('id').where('id', '=', body.countryId).executeTakeFirst();
    if (!country) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    const id = randomUUID();
    const now = this.deps.clock.now();
    await trx
      .insertInto('rides')
      .values({
        id,
        status: 'REQUESTED',
        customer_id: auth.userId,
        driver_id: null,
        vehicle_type: body.vehicleType,
        country_id: body.countryId,
        pickup_lat: body.pickupLocation.lat,
        pickup_lng: body.pickupLocation.lng,
        destination_lat: body.destinationLocation.lat,
        destination_lng: body.destinationLocation.lng,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await trx.insertInto('ride_status_history').values({ ride_id: id, status: 'REQUESTED', reason: null, actor_id: auth.userId, at: now }).execute();
    return RideService.toResponse((await this.load(id, trx))!);
  }

  announce(ride: RideResponse): number {
    return pushNearbyJob(
      { index: this.deps.driverIndex, bus: this.deps.bus, now: this.deps.clock.now(), locationTtlMs: this.deps.driverLocationTtlMs },
      {
        jobType: 'RIDE',
        jobId: ride.id,
        vehicleType: ride.vehicleType,
        orderType: 'RIDE',
        lat: ride.pickupLocation.lat,
        lng: ride.pickupLocation.lng,
        parcelSize: null,
      },
    );
  }

  async accept(id: string, auth: AuthContext): Promise<RideResponse> {
    const row = await this.load(id);
    if (!row) throw rideNotFound();
    const check = checkRideTransition(row.status, 'ACCEPTED', 'DRIVER');
    if (!check.ok) throw invalidTransition(row.status);
    const now = this.deps.clock.now();
    // Past five minutes a ride is expired, whether or not the sweep has marked it yet.
    const cutoff = new Date(now.getTime() - RIDE_EXPIRY_MS);
    if (row.created_at <= cutoff) throw invalidTransition('EXPIRED');
    const claim = { driverId: auth.userId, jobType: 'RIDE' as const, jobId: id, vehicleType: row.vehicle_type, orderType: 'RIDE' as const };
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('rides')
        .set({ status: 'ACCEPTED', driver_id: auth.userId, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'REQUESTED')
        .where('created_at', '>', cutoff)
        .returning('id')
        .executeTakeFirst();
      if (!moved) {
        const current = await this.currentStatus(trx, id);
        throw invalidTransition(current === 'REQUESTED' ? 'EXPIRED' : current);
      }
      if (!(await claimDriver(trx, claim, now))) throw await explainClaimFailure(trx, claim);
      await trx.insertInto('ride_status_history').values({ ride_id: id, status: 'ACCEPTED', reason: null, actor_id: auth.userId, at: now }).execute();
      return (await this.load(id, trx))!;
    });
    publishDriverJob(this.deps.bus, auth.userId, 'RIDE', id, true);
    this.deps.bus.publish('driver.push', { driverId: auth.userId, message: { type: 'job.assigned', jobType: 'RIDE', jobId: id, status: 'ACCEPTED' } });
    return RideService.toResponse(updated);
  }

  arrive(id: string, auth: AuthContext) {
    return this.move(id, auth, 'ARRIVED');
  }

  start(id: string, auth: AuthContext) {
    return this.move(id, auth, 'IN_PROGRESS');
  }

  complete(id: string, auth: AuthContext) {
    return this.move(id, auth, 'COMPLETED');
  }

  cancel(id: string, auth: AuthContext, reason: string | undefined) {
    return this.move(id, auth, 'CANCELLED', reason);
  }

  private async move(id: string, auth: AuthContext, to: RideStatus, reason?: string): Promise<RideResponse> {
    const row = await this.load(id);
    if (!row || !RideService.canSee(row, auth)) throw rideNotFound();
    const check = checkRideTransition(row.status, to, RideService.actorFor(row, auth));
    if (!check.ok) {
      if (check.reason === 'STATUS') throw invalidTransition(row.status);
      throw forbidden(`You may not move this ride to ${to}`, 'ACTION_NOT_ALLOWED');
    }
    const now = this.deps.clock.now();
    const final = FINAL_RIDE_STATUSES.includes(to);
    const updated = await this.deps.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('rides')
        .set({ status: to, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', row.status)
        .returning('driver_id')
        .executeTakeFirst();
      if (!moved) throw invalidTransition(await this.currentStatus(trx, id));
      if (final && moved.driver_id) await releaseDriver(trx, moved.driver_id, id, now);
      await trx.insertInto('ride_status_history').values({ ride_id: id, status: to, reason: reason ?? null, actor_id: auth.userId, at: now }).execute();
      return (await this.load(id, trx))!;
    });
    if (updated.driver_id) {
      if (final) publishDriverJob(this.deps.bus, updated.driver_id, 'RIDE', id, false);
      if (updated.driver_id !== auth.userId) {
        this.deps.bus.publish('driver.push', { driverId: updated.driver_id, message: { type: 'job.updated', jobType: 'RIDE', jobId: id, status: to } });
      }
    }
    return RideService.toResponse(updated);
  }

  /**
   * Expires REQUESTED rides older than 5 minutes. One statement (update + history insert), so
   * several instances may run it at once: each ride is expired, and recorded, exactly once.
   */
  async expireStale(): Promise<string[]> {
    const now = this.deps.clock.now();
    const cutoff = new Date(now.getTime() - RIDE_EXPIRY_MS);
    const result = await sql<{ ride_id: string }>`
      with expired as (
        update rides set status = 'EXPIRED', updated_at = ${now}
        where status = 'REQUESTED' and created_at < ${cutoff}
        returning id
      )
      insert into ride_status_history (ride_id, status, reason, actor_id, at)
      select id, 'EXPIRED', 'No driver accepted within 5 minutes', null, ${now} from expired
      returning ride_id`.execute(this.deps.db);
    return result.rows.map((r) => r.ride_id);
  }

  private async currentStatus(trx: Transaction<Database>, id: string): Promise<RideStatus> {
    const row = await trx.selectFrom('rides').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    return row.status;
  }
}
