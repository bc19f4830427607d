// Rides (contract section 10): request, the driver's steps, cancellation and expiry.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { RideStatus } from '../../db/tables/jobs.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import type { RecordAnswer } from '../../shared/record-answer.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { decodeCursor, toRowPage } from '../../shared/pagination.js';
import { json } from '../../db/json.js';
import {
  cancellationFeeFor,
  cancellationFeeNow,
  money,
  priceColumns,
  priceNewJob,
  storedPrice,
  viewerMoney,
  type JobPricing,
} from '../jobs/job-price.js';
import { checkTransition } from '../jobs/transitions.js';
import {
  isDriverSide,
  jobFields,
  JobLifecycle,
  type DispatchHooks,
  type JobChangeWatcher,
  type StatusSet,
} from '../jobs/lifecycle.js';
import type { StatusHistoryItemJson } from '../../db/tables/jobs.js';
import { countryMoney } from '../jobs/references.repository.js';
import type { Sla, SlaFacts } from '../alerts/sla.js';
import type { SchedulingService } from '../scheduling/scheduling.service.js';
import { SCHEDULED_RIDE_SEARCH_MS } from '../scheduling/scheduling.service.js';
import { checkTimeZone, validateScheduledAt, type RideRules } from '../scheduling/windows.js';
import { jobEarnings, moneyFacts, seesEarnings, type JobMoneyHook } from '../jobs/job-money.js';
import type { DriverIndex } from '../matching/driver-index.js';
import { FINAL_RIDE_STATUSES, RIDE_TRANSITIONS, type RideActor, type RideEvent } from './ride-status.js';
import type { RideRow, RidesRepository } from './rides.repository.js';
import type { CreateRideBody, RideListQuery, RideResponse } from './rides.schemas.js';

/** A ride nobody accepted within this time expires. */
export const RIDE_EXPIRY_MS = 5 * 60_000;

export const rideNotFound = () => notFound('Ride not found', 'RIDE_NOT_FOUND');

export interface RideServiceDeps {
  db: DB;
  repo: RidesRepository;
  bus: Bus;
  clock: Clock;
  driverLocationTtlMs: number;
  driverIndex: DriverIndex;
  dispatch?: DispatchHooks;
  pricing: JobPricing;
  /** Told of each status change after commit (push notifications). */
  watcher?: JobChangeWatcher;
  /** Writes the positions reported to this process now, so a completing ride's trip has them all. */
  flushPositions?: () => Promise<void>;
  /** Books the money of a ride's end in its transaction and reads its tips (jobs/job-money-hook.ts). */
  money?: JobMoneyHook;
  /** Booking ahead (contract section 22): its rules, and the wake-up of a scheduled ride. */
  booking: RideRules;
  scheduling?: Pick<SchedulingService, 'plan' | 'planned'>;
  /** Each active ride's `sla` (contract section 23, alerts/). */
  sla?: (facts: SlaFacts) => Sla | null;
}

/** What a ride's `sla` is computed from: columns every read of a ride has. */
export function rideSlaFacts(row: RideRow): SlaFacts {
  const inputs = storedPrice(row)?.inputs;
  return {
    jobType: 'RIDE',
    status: row.status,
    vehicleType: row.vehicle_type,
    createdAtMs: new Date(row.created_at).getTime(),
    pickupWindowStartMs: null,
    pickupWindowEndMs: null,
    dropoffWindowEndMs: null,
    scheduledAtMs: row.scheduled_at ? new Date(row.scheduled_at).getTime() : null,
    durationSeconds: inputs?.durationSeconds ?? null,
    pickup: { lat: row.pickup_lat, lng: row.pickup_lng },
    dropoff: { lat: row.destination_lat, lng: row.destination_lng },
    driverId: row.driver_id,
    driver:
      row.driver_id && row.driver_lat !== null && row.driver_lng !== null
        ? { lat: row.driver_lat, lng: row.driver_lng }
        : null,
  };
}

export class RideService {
  private readonly lifecycle: JobLifecycle<RideStatus, RideActor, RideEvent, RideRow>;
  private readonly repo: RidesRepository;
  /** Scheduled rides created here, and when they wake: announce leaves them out of dispatch until then. */
  private readonly dueOnAnnounce = new LRUCache<string, Date>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly deps: RideServiceDeps) {
    this.repo = deps.repo;
    this.lifecycle = new JobLifecycle(deps, {
      jobType: 'RIDE',
      orderType: 'RIDE',
      noun: 'ride',
      transitions: RIDE_TRANSITIONS,
      finals: FINAL_RIDE_STATUSES,
      store: deps.repo,
      // A ride is the customer's, paid in cash (section 21); its amount is the final fare when there is one.
      moneyFacts: (row) =>
        moneyFacts('RIDE', row, {
          payer: { kind: 'CUSTOMER', partyId: row.customer_id },
          amount: row.fare_amount ?? row.price_amount,
          cashOnDelivery: null,
        }),
    });
  }

  static canSee(row: Pick<RideRow, 'customer_id' | 'driver_id' | 'driver_company_id'>, auth: AuthContext): boolean {
    return auth.role === 'ADMIN' || auth.userId === row.customer_id || isDriverSide(row, auth);
  }

  static actorFor(row: Pick<RideRow, 'customer_id' | 'driver_id'>, auth: AuthContext): RideActor {
    if (auth.role === 'ADMIN') return 'ADMIN';
    if (auth.userId === row.driver_id) return 'ASSIGNED_DRIVER';
    if (auth.userId === row.customer_id) return 'CUSTOMER';
    return auth.role === 'COMPANY' ? 'COMPANY' : 'DRIVER';
  }

  static toResponse(row: RideRow): RideResponse {
    return {
      ...jobFields(row, 'REQUESTED'),
      orderType: 'RIDE',
      customerId: row.customer_id,
      pickupLocation: { lat: row.pickup_lat, lng: row.pickup_lng },
      destinationLocation: { lat: row.destination_lat, lng: row.destination_lng },
      price: money(row.price_amount, row.price_currency),
      fare: money(row.fare_amount, row.price_currency),
      cancellationFee: money(row.cancellation_fee, row.price_currency),
      paymentMethod: row.payment_method,
      scheduledAt: row.scheduled_at ? row.scheduled_at.toISOString() : null,
      timeZone: row.time_zone,
    };
  }

  /** The ride as this caller sees it: `earnings` for its driver's side and admins only (section 21). */
  static toResponseFor(row: RideRow, auth: AuthContext, tips: Map<string, number>): RideResponse {
    const body = RideService.toResponse(row);
    const earnings = seesEarnings(row, auth)
      ? jobEarnings(row, row.fare_amount ?? row.price_amount, tips.get(row.id) ?? 0)
      : null;
    return earnings ? { ...body, earnings } : body;
  }

  /** The tips of the rides whose earnings this caller sees: the `tips` row each read joins (booked in its transaction with the ledger's entries). */
  private tipsFor(rows: RideRow[], auth: AuthContext): Map<string, number> {
    return new Map(
      rows.filter((r) => r.driver_id !== null && seesEarnings(r, auth)).map((r) => [r.id, r.tip_amount ?? 0]),
    );
  }

  private async present(row: RideRow, auth: AuthContext): Promise<RideResponse> {
    return {
      ...RideService.toResponseFor(row, auth, this.tipsFor([row], auth)),
      ...this.slaOf(row),
      ...this.viewerMoneyOf(row, auth),
    };
  }

  private slaOf(row: RideRow): Pick<RideResponse, 'sla'> {
    return this.deps.sla ? { sla: this.deps.sla(rideSlaFacts(row)) } : {};
  }

  /** The tip and cancellationFeeNow where contract section 20 shows them (the tip: the parties and admins; the fee: the customer). */
  private viewerMoneyOf(row: RideRow, auth: AuthContext) {
    const values = {
      tip: money(row.tip_amount, row.tip_currency),
      cancellationFeeNow: cancellationFeeNow(this.deps.pricing, row, {
        creatorMayCancel: checkTransition(RIDE_TRANSITIONS, row.status, 'CANCELLED', 'CUSTOMER').ok,
        afterAssignment: row.status !== 'REQUESTED',
      }),
    };
    return viewerMoney(
      { creatorId: row.customer_id, driverId: row.driver_id, driverCompanyId: row.driver_company_id },
      auth,
      values,
    );
  }

  async get(id: string, auth: AuthContext): Promise<RideResponse> {
    const row = await this.repo.load(id);
    if (!row || !RideService.canSee(row, auth)) throw rideNotFound();
    return this.present(row, auth);
  }

  async list(auth: AuthContext, query: RideListQuery) {
    const limit = query.limit ?? 20;
    const rows = await this.repo.list(auth, { status: query.status, cursor: decodeCursor(query.cursor), limit });
    const tips = this.tipsFor(rows.slice(0, limit), auth);
    return toRowPage(rows, limit, (r) => ({
      ...RideService.toResponseFor(r, auth, tips),
      ...this.slaOf(r),
      ...this.viewerMoneyOf(r, auth),
    }));
  }

  async create(trx: Transaction<Database>, auth: AuthContext, body: CreateRideBody): Promise<RideResponse> {
    const scheduledAt = validateScheduledAt(body.scheduledAt, this.deps.clock.nowMs(), this.deps.booking);
    const timeZone = checkTimeZone(body.timeZone, 'body.timeZone');
    const country = await countryMoney(trx, body.countryId);
    if (!country) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    // A ride is a customer's: cash, the only method until a payment provider exists (section 21).
    if (body.paymentMethod !== undefined && body.paymentMethod !== 'CASH') {
      throw badRequest("A customer's job is paid in cash: paymentMethod must be CASH", 'PAYMENT_METHOD_NOT_ALLOWED');
    }
    const price = await priceNewJob(this.deps.pricing, trx, {
      kind: 'RIDE',
      accountId: auth.userId,
      quoteId: body.quoteId,
      pickup: body.pickupLocation,
      dropoff: body.destinationLocation,
      vehicleType: body.vehicleType,
      countryId: body.countryId,
    });
    const commissionRate = await this.deps.pricing.commissionRate(body.countryId, body.vehicleType, trx);
    const id = randomUUID();
    const now = this.deps.clock.now();
    await this.repo.insert(trx, {
      ...priceColumns(price),
      payment_method: 'CASH',
      commission_rate: commissionRate,
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
      scheduled_at: scheduledAt,
      time_zone: timeZone ?? country.time_zone,
    });
    await this.repo.addHistory(trx, id, { status: 'REQUESTED', reason: null, actorId: auth.userId, at: now });
    await this.deps.dispatch?.enroll(trx, {
      jobType: 'RIDE',
      jobId: id,
      vehicleType: body.vehicleType,
      ...body.pickupLocation,
      at: now,
    });
    if (scheduledAt) {
      const planned = await this.deps.scheduling?.plan(trx, {
        jobType: 'RIDE',
        jobId: id,
        start: scheduledAt,
        ...body.pickupLocation,
        at: now,
      });
      if (planned) this.dueOnAnnounce.set(id, planned.dueAt);
    }
    return this.present((await this.repo.load(id, trx))!, auth);
  }

  /**
   * A scheduled ride entering dispatch (in its wake-up's transaction) is priced now, with the tariff
   * and surge of the moment, unless a quote locked its price (contract section 22).
   */
  async repriceScheduled(trx: Transaction<Database>, id: string): Promise<boolean> {
    const row = await this.repo.pricingFacts(trx, id);
    if (!row || row.status !== 'REQUESTED' || row.quote_id !== null) return false;
    const price = await this.deps.pricing.priceWithoutQuote(
      {
        kind: 'RIDE',
        pickup: { lat: row.pickup_lat, lng: row.pickup_lng },
        dropoff: { lat: row.destination_lat, lng: row.destination_lng },
        vehicleType: row.vehicle_type,
        countryId: row.country_id,
      },
      trx,
    );
    await this.repo.setPrice(trx, id, priceColumns(price));
    return true;
  }

  announce(ride: RideResponse): number {
    const dueAt = this.dueOnAnnounce.get(ride.id);
    if (dueAt) {
      // Booked ahead: offered from scheduledAt − lead (this instance's timer, or any instance's poll), not now.
      this.dueOnAnnounce.delete(ride.id);
      this.deps.scheduling?.planned(dueAt);
      return 0;
    }
    return this.lifecycle.offerNearby({
      id: ride.id,
      vehicleType: ride.vehicleType,
      ...ride.pickupLocation,
      parcelSize: null,
    });
  }

  async accept(id: string, auth: AuthContext, record?: RecordAnswer): Promise<RideResponse> {
    const row = await this.repo.load(id);
    if (!row) throw rideNotFound();
    const event = this.lifecycle.check(row.status, 'ACCEPTED', 'DRIVER');
    // Five minutes after its last entry into REQUESTED a ride is expired, whether or not the sweep has marked it yet;
    // a ride booked ahead searches until scheduledAt + 10m (section 22) and at least five minutes after a release.
    const nowMs = this.deps.clock.nowMs();
    const searchUntil = row.scheduled_at ? row.scheduled_at.getTime() + SCHEDULED_RIDE_SEARCH_MS : null;
    const cutoff = searchUntil !== null && nowMs < searchUntil ? new Date(0) : new Date(nowMs - RIDE_EXPIRY_MS);
    if (row.status === 'REQUESTED' && row.updated_at <= cutoff) throw this.lifecycle.invalidTransition('EXPIRED');
    const updated = await this.lifecycle.assign(row, 'ACCEPTED', event, auth.userId, auth.userId, {
      createdAfter: cutoff,
      missed: (current) => (current === 'REQUESTED' ? 'EXPIRED' : current),
      answer: this.answer(auth, record),
    });
    return this.present(updated, auth);
  }

  arrive(id: string, auth: AuthContext, record?: RecordAnswer) {
    return this.move(id, auth, 'ARRIVED', undefined, undefined, record);
  }

  start(id: string, auth: AuthContext, record?: RecordAnswer) {
    return this.move(id, auth, 'IN_PROGRESS', undefined, undefined, record);
  }

  complete(id: string, auth: AuthContext, record?: RecordAnswer) {
    return this.move(
      id,
      auth,
      'COMPLETED',
      undefined,
      async (row) => {
        const fare = await this.finalFare(row);
        // A CASH ride: the driver collected the fare (the ledger books it as CASH_COLLECTED).
        const amount = fare.fare_amount ?? row.price_amount;
        return { ...fare, ...(row.payment_method === 'CASH' && amount != null ? { cash_collected: amount } : {}) };
      },
      record,
    );
  }

  cancel(id: string, auth: AuthContext, reason: string | undefined, record?: RecordAnswer) {
    return this.move(
      id,
      auth,
      'CANCELLED',
      reason,
      async (row) => {
        const actor = RideService.actorFor(row, auth);
        const cancelledBy = actor === 'CUSTOMER' ? 'CREATOR' : actor === 'ADMIN' ? 'ADMIN' : 'DRIVER';
        return {
          cancellation_fee: cancellationFeeFor(this.deps.pricing, row, {
            cancelledBy,
            afterAssignment: row.status !== 'REQUESTED',
          }),
        };
      },
      record,
    );
  }

  /** Stores a keyed request's answer (the ride as `present` shows it) in the change's transaction. */
  private answer(auth: AuthContext, record: RecordAnswer | undefined) {
    return record && (async (trx: Transaction<Database>, row: RideRow) => record(trx, await this.present(row, auth)));
  }

  /**
   * The fare of a ride being completed: its price's tariff and surge over the positions its driver
   * reported since it started (those written behind, and the newest one this process holds).
   */
  private async finalFare(row: RideRow): Promise<Pick<StatusSet<RideStatus>, 'fare_amount' | 'fare_detail'>> {
    const price = storedPrice(row);
    if (!price) return {};
    const history = json<StatusHistoryItemJson[]>(row.status_history);
    const started = [...history].reverse().find((h) => h.status === 'IN_PROGRESS');
    const since = started ? new Date(started.at) : row.updated_at;
    await this.deps.flushPositions?.();
    const positions: { lat: number; lng: number; at: Date | number }[] = await this.repo.tripPositions(row.id, since);
    const latest = row.driver_id ? this.deps.driverIndex.get(row.driver_id)?.position : undefined;
    const last = positions.at(-1);
    if (latest && latest.at >= since.getTime() && (!last || latest.at > new Date(last.at).getTime()))
      positions.push({ lat: latest.lat, lng: latest.lng, at: latest.at });
    const fare = this.deps.pricing.finalRideFare(price, { positions });
    const detail = {
      breakdown: fare.breakdown,
      uncappedAmount: fare.uncappedAmount,
      capped: fare.capped,
      distanceMeters: fare.distanceMeters,
      durationSeconds: fare.durationSeconds,
      positions: positions.length,
    };
    return { fare_amount: fare.amount, fare_detail: JSON.stringify(detail) };
  }

  /** Hands an ACCEPTED ride back (its driver before arriving, or an admin): REQUESTED again, back in dispatch. */
  async release(id: string, auth: AuthContext, reason: string | null, record?: RecordAnswer): Promise<RideResponse> {
    const row = await this.repo.load(id);
    if (!row || !RideService.canSee(row, auth) || (auth.role !== 'ADMIN' && auth.userId !== row.driver_id))
      throw rideNotFound();
    return this.present(
      await this.lifecycle.release(row, 'ACCEPTED', 'REQUESTED', auth.userId, reason, this.answer(auth, record)),
      auth,
    );
  }

  private async move(
    id: string,
    auth: AuthContext,
    to: RideStatus,
    reason?: string,
    set?: (row: RideRow) => Promise<Omit<StatusSet<RideStatus>, 'status' | 'updated_at'>>,
    record?: RecordAnswer,
  ): Promise<RideResponse> {
    const row = await this.repo.load(id);
    if (!row || !RideService.canSee(row, auth)) throw rideNotFound();
    const event = this.lifecycle.check(row.status, to, RideService.actorFor(row, auth));
    return this.present(
      await this.lifecycle.transition(row, to, event, auth.userId, {
        reason,
        set: await set?.(row),
        answer: this.answer(auth, record),
      }),
      auth,
    );
  }

  /** Expires REQUESTED rides older than 5 minutes (safe to run on several instances at once). */
  async expireStale(): Promise<string[]> {
    const now = this.deps.clock.now();
    const expired = await this.repo.expireRequested(
      new Date(now.getTime() - RIDE_EXPIRY_MS),
      now,
      'No driver accepted within 5 minutes',
      new Date(now.getTime() - SCHEDULED_RIDE_SEARCH_MS),
    );
    for (const jobId of expired) {
      this.deps.bus.publish('job.changed', {
        jobType: 'RIDE',
        jobId,
        status: 'EXPIRED',
        driverId: null,
        actorId: null,
        assigned: false,
        final: true,
      });
    }
    return expired;
  }
}
