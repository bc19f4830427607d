// A job's promise and its risk (contract section 23), pure: the SLA every active job carries and the
// five alert conditions the monitor checks, from a job's columns, its driver's last position and the
// time. Straight-line ETAs whatever the router (great-circle × 1.3 at the vehicle's town speed), so
// that a read of a package and a turn of the monitor over 10,000 jobs cost no router call.
import type { VehicleType } from '../../db/schema.js';
import type { AlertKind } from '../../db/tables/alerts.js';
import type { JobTypeName } from '../../db/tables/dispatch.js';
import { distanceMeters } from '../matching/driver-index.js';
import { straightLeg, type Point } from '../routing/router.js';

export type Risk = 'OK' | 'AT_RISK' | 'LATE';

export interface Sla {
  pickupBy: string;
  dropoffBy: string;
  risk: Risk;
}

export interface SlaRules {
  /** ASAP_SLACK */
  asapSlackMs: number;
  /** AT_RISK_MARGIN */
  atRiskMarginMs: number;
}

/** What a job's promise and ETA are computed from: columns every read of the job already has. */
export interface SlaFacts {
  jobType: JobTypeName;
  status: string;
  vehicleType: VehicleType;
  createdAtMs: number;
  pickupWindowStartMs: number | null;
  pickupWindowEndMs: number | null;
  dropoffWindowEndMs: number | null;
  /** Rides booked ahead: the driver is to be at the pickup then. */
  scheduledAtMs: number | null;
  /** The trip's duration as priced (the quote's), null for a job priced before prices existed. */
  durationSeconds: number | null;
  pickup: Point;
  dropoff: Point;
  driverId: string | null;
  /** The driver's last reported position (null: none, or no driver). */
  driver: Point | null;
}

/** Within this of the pickup, a package's driver has arrived there (section 22's and 23's 100 m). */
export const AT_PICKUP_METERS = 100;
/** driver.stalled: moved under this in STALLED_AFTER. */
export const STALLED_METERS = 200;
/** driver.not_at_pickup: this long after the pickup window started. */
export const NOT_AT_PICKUP_AFTER_MS = 5 * 60_000;
/** offer.unanswered: this many offers made without an accept. */
export const UNANSWERED_OFFERS = 5;

const ACTIVE = new Set([
  'PENDING',
  'ASSIGNED',
  'PICKED_UP',
  'IN_TRANSIT',
  'REQUESTED',
  'ACCEPTED',
  'ARRIVED',
  'IN_PROGRESS',
]);
/** Before the pickup step is done: a ride's step is arriving (ARRIVED), a package's the pickup. */
const BEFORE_PICKUP = new Set(['PENDING', 'ASSIGNED', 'REQUESTED', 'ACCEPTED']);
const UNASSIGNED = new Set(['PENDING', 'REQUESTED']);

export const isActive = (status: string) => ACTIVE.has(status);
export const pickupPending = (status: string) => BEFORE_PICKUP.has(status);

const tripSeconds = (job: SlaFacts) =>
  job.durationSeconds ?? straightLeg(job.pickup, job.dropoff, job.vehicleType).durationSeconds;

/**
 * The promise: the pickup window's end (rides: scheduledAt) and the drop-off window's end. Missing
 * ends come from the other one and the trip; an ASAP job's from its quote's ETA plus ASAP_SLACK
 * (the quote's pickup ETA is not kept with the job, so it counts from the job's creation).
 */
export function promiseOf(
  job: SlaFacts,
  rules: Pick<SlaRules, 'asapSlackMs'>,
): { pickupBy: number; dropoffBy: number } {
  const trip = tripSeconds(job) * 1000;
  const pickupEnd = job.jobType === 'RIDE' ? job.scheduledAtMs : job.pickupWindowEndMs;
  const pickupBy =
    pickupEnd ??
    (job.dropoffWindowEndMs !== null ? job.dropoffWindowEndMs - trip : job.createdAtMs + rules.asapSlackMs);
  const dropoffBy = job.dropoffWindowEndMs ?? pickupBy + trip;
  return { pickupBy, dropoffBy };
}

/** Straight-line ETAs at the pickup (null once its step is done) and at the drop-off. */
export function etasOf(job: SlaFacts, nowMs: number): { pickupEta: number | null; dropoffEta: number } {
  const leg = (from: Point, to: Point) => straightLeg(from, to, job.vehicleType).durationSeconds * 1000;
  if (pickupPending(job.status)) {
    // No driver yet (or no position): the earliest the pickup can be, now or the window's start.
    const start = job.jobType === 'RIDE' ? job.scheduledAtMs : job.pickupWindowStartMs;
    const pickupEta = job.driverId && job.driver ? nowMs + leg(job.driver, job.pickup) : Math.max(nowMs, start ?? 0);
    return { pickupEta, dropoffEta: pickupEta + leg(job.pickup, job.dropoff) };
  }
  return { pickupEta: null, dropoffEta: job.driver ? nowMs + leg(job.driver, job.dropoff) : nowMs };
}

export interface Assessment {
  risk: Risk;
  pickupBy: number;
  dropoffBy: number;
  pickupEta: number | null;
  dropoffEta: number;
  /** The step whose promise is late or at risk. */
  step: 'PICKUP' | 'DROPOFF' | null;
}

/** LATE: a promise's end passed with its step not done; AT_RISK: an ETA passes its end less AT_RISK_MARGIN. */
export function assess(job: SlaFacts, nowMs: number, rules: SlaRules): Assessment {
  const { pickupBy, dropoffBy } = promiseOf(job, rules);
  const { pickupEta, dropoffEta } = etasOf(job, nowMs);
  const base = { pickupBy, dropoffBy, pickupEta, dropoffEta };
  const pending = pickupPending(job.status);
  if (pending && nowMs > pickupBy) return { ...base, risk: 'LATE', step: 'PICKUP' };
  if (nowMs > dropoffBy) return { ...base, risk: 'LATE', step: 'DROPOFF' };
  if (pickupEta !== null && pickupEta > pickupBy - rules.atRiskMarginMs)
    return { ...base, risk: 'AT_RISK', step: 'PICKUP' };
  if (dropoffEta > dropoffBy - rules.atRiskMarginMs) return { ...base, risk: 'AT_RISK', step: 'DROPOFF' };
  return { ...base, risk: 'OK', step: null };
}

/** The `sla` field of a job: null once it is no longer active. */
export function slaOf(job: SlaFacts, nowMs: number, rules: SlaRules): Sla | null {
  if (!isActive(job.status)) return null;
  const a = assess(job, nowMs, rules);
  return { pickupBy: new Date(a.pickupBy).toISOString(), dropoffBy: new Date(a.dropoffBy).toISOString(), risk: a.risk };
}

/** What the monitor also knows of a job: dispatch, offers, and its own memory of the driver (alert_watch). */
export interface MonitoredJob extends SlaFacts {
  jobId: string;
  businessId: string | null;
  driverCompanyId: string | null;
  /** SCHEDULED: not yet in dispatch. */
  dispatchState: string | null;
  /** When the job entered dispatch (scheduled jobs), else null (ASAP: its creation). */
  enteredAtMs: number | null;
  offers: number;
  watch: Watch | null;
  /** The kinds already raised for it. */
  raised: readonly string[];
}

export interface Watch {
  driverId: string;
  anchor: Point | null;
  anchorAtMs: number;
  arrivedAtMs: number | null;
}

export interface MonitorRules extends SlaRules {
  unansweredAfterMs: number;
  stalledAfterMs: number;
}

export interface Raised {
  kind: AlertKind;
  details: Record<string, unknown>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One turn for one job: the alerts whose condition holds now (already raised ones left out) and the
 * watch it keeps (null: nothing to keep; unchanged: the same object).
 */
export function evaluate(
  job: MonitoredJob,
  nowMs: number,
  rules: MonitorRules,
): { raise: Raised[]; watch: Watch | null } {
  const raise: Raised[] = [];
  const add = (kind: AlertKind, details: Record<string, unknown>) => {
    if (!job.raised.includes(kind)) raise.push({ kind, details });
  };
  if (!isActive(job.status)) return { raise, watch: null };
  const a = assess(job, nowMs, rules);
  const pending = pickupPending(job.status);
  if (a.risk === 'LATE') add('job.late', { step: a.step, by: iso(a.step === 'PICKUP' ? a.pickupBy : a.dropoffBy) });
  else if (a.risk === 'AT_RISK') {
    const eta = a.step === 'PICKUP' ? a.pickupEta! : a.dropoffEta;
    const by = a.step === 'PICKUP' ? a.pickupBy : a.dropoffBy;
    add('job.at_risk', { step: a.step, by: iso(by), eta: iso(eta), marginSeconds: rules.atRiskMarginMs / 1000 });
  }

  if (UNASSIGNED.has(job.status) && job.dispatchState !== 'SCHEDULED') {
    const since = job.enteredAtMs ?? job.createdAtMs;
    if (nowMs - since >= rules.unansweredAfterMs || job.offers >= UNANSWERED_OFFERS)
      add('offer.unanswered', { since: iso(since), offers: job.offers });
  }

  // The driver's memory: where it last moved 200 m from, and whether it has been at the pickup.
  let watch = job.watch;
  const here = job.driver;
  if (job.driverId && !UNASSIGNED.has(job.status)) {
    if (!watch || watch.driverId !== job.driverId)
      watch = { driverId: job.driverId, anchor: here, anchorAtMs: nowMs, arrivedAtMs: null };
    else if (here && (!watch.anchor || distance(here, watch.anchor) >= STALLED_METERS))
      watch = { ...watch, anchor: here, anchorAtMs: nowMs };
    const atPickup = here !== null && distance(here, job.pickup) <= AT_PICKUP_METERS;
    if (atPickup && watch.arrivedAtMs === null && pending) watch = { ...watch, arrivedAtMs: nowMs };

    const start = job.jobType === 'RIDE' ? job.scheduledAtMs : job.pickupWindowStartMs;
    // Rides: arrived is ARRIVED; packages: a position within 100 m of the pickup, now or at an earlier turn.
    const arrived = job.jobType === 'RIDE' ? !pending : !pending || atPickup || watch.arrivedAtMs !== null;
    if (start !== null && nowMs >= start + NOT_AT_PICKUP_AFTER_MS && !arrived)
      add('driver.not_at_pickup', {
        windowStart: iso(start),
        distanceMeters: here ? Math.round(distance(here, job.pickup)) : null,
      });

    // Waiting is the job at the pickup (a ride ARRIVED, a package's driver there before the pickup).
    const waiting = job.status === 'ARRIVED' || (pending && atPickup);
    if (!waiting && here && watch.anchor && nowMs - watch.anchorAtMs >= rules.stalledAfterMs)
      add('driver.stalled', {
        since: iso(watch.anchorAtMs),
        movedMeters: Math.round(distance(here, watch.anchor)),
      });
  } else watch = null;
  return { raise, watch };
}

const distance = (a: Point, b: Point) => distanceMeters(a.lat, a.lng, b.lat, b.lng);
