// The offer policy: which driver gets a job's next offer. Pure: the live driver index answers the
// nearest-first search, the caller says who is excluded (offered before, released) and who holds an
// open offer; no I/O, no clock.
import type { OrderType, VehicleType } from '../../db/schema.js';
import { distanceMeters, type DriverIndex } from '../matching/driver-index.js';
import { etaSeconds } from '../matching/found-drivers-json.js';

/** The one ETA model (distance at the vehicle's average speed): a routing engine replaces this function. */
export const estimateEtaSeconds = (distanceMeters: number, vehicleType: VehicleType): number =>
  etaSeconds(distanceMeters, vehicleType);

export type SkipReason =
  | 'DECLINED'
  | 'LAPSED'
  | 'OFFERED_BEFORE'
  | 'WITHDRAWN'
  | 'RELEASED'
  | 'HOLDING_OFFER'
  | 'BATCH_FULL'
  | 'BATCH_CAPACITY'
  | 'BATCH_WINDOW'
  | 'BATCH_DETOUR';

/** A driver on a route (section 24): the job's cheapest insertion into it, or why it does not fit. */
export type BatchFit =
  | { ok: true; addedSeconds: number; stopsBefore: number }
  | { ok: false; reason: Extract<SkipReason, `BATCH_${string}`>; addedSeconds?: number };

export interface Choice {
  driverId: string;
  distanceMeters: number;
  etaSeconds: number;
  radiusMeters: number;
  /** Eligible drivers the search looked at (nearest first) before choosing. */
  candidates: number;
  skipped: { driverId: string; reason: SkipReason }[];
  /**
   * Chosen on its route (section 24): the seconds the job's stops add, the stops before its drop-off,
   * and the ETA of the best free driver (not on a route) it was ranked against (null: none).
   */
  batch?: { addedSeconds: number; stopsBefore: number; bestFreeEtaSeconds: number | null };
}

export interface PickRequest {
  lat: number;
  lng: number;
  vehicleType: VehicleType;
  orderType: OrderType;
  staleBefore: number;
  radiusMeters: number;
  maxRadiusMeters: number;
  /** Drivers this job must not go to, and why (offered before, released it). */
  excluded: ReadonlyMap<string, SkipReason>;
  /** Drivers holding another open offer. */
  holding: ReadonlySet<string>;
  /**
   * Offered first, wherever it is, when eligible (online, free, fresh position, that vehicle and
   * service) and neither excluded nor holding an offer: the driver holding a failed job's parcel.
   */
  preferred?: string | null;
  /** The job's fit into the routes of candidates already on one (none given: they are skipped as BATCH_FULL). */
  batch?: ReadonlyMap<string, BatchFit>;
}

export interface PickResult {
  choice: Choice | null;
  /** The widest radius searched. */
  radiusMeters: number;
  /** Nearest eligible drivers not excluded (when nothing was chosen, those whose offer-holding stopped it). */
  candidates: number;
}

const NO_FIT: BatchFit = { ok: false, reason: 'BATCH_FULL' };

/** Candidates looked at beyond the excluded ones: enough to step over drivers holding offers. */
const SEARCH_SLACK = 20;

/** Radii tried in turn: the base, doubled until the maximum (which is always tried). */
export function radiusSteps(base: number, max: number): number[] {
  const steps: number[] = [];
  for (let r = base; r < max; r *= 2) steps.push(r);
  steps.push(max);
  return steps;
}

/** The preferred driver as a choice when it may take the job now, else null. */
function preferredChoice(index: DriverIndex, req: PickRequest): Choice | null {
  if (!req.preferred || req.excluded.has(req.preferred) || req.holding.has(req.preferred)) return null;
  const d = index.get(req.preferred);
  const p = d?.position;
  if (!d || !p || !d.active || !d.online || d.busy || d.vehicleType !== req.vehicleType) return null;
  if (!d.serviceTypes.includes(req.orderType) || p.at < req.staleBefore) return null;
  // On a route already: only when the job fits it as batching requires (detour, windows, capacity).
  const fit = d.activeJobs > 0 ? (req.batch?.get(d.id) ?? NO_FIT) : undefined;
  if (fit && !fit.ok) return null;
  const meters = distanceMeters(p.lat, p.lng, req.lat, req.lng);
  const choice: Choice = {
    driverId: d.id,
    distanceMeters: Math.round(meters),
    etaSeconds: estimateEtaSeconds(meters, d.vehicleType),
    radiusMeters: req.radiusMeters,
    candidates: 1,
    skipped: [],
  };
  if (fit?.ok)
    choice.batch = { addedSeconds: fit.addedSeconds, stopsBefore: fit.stopsBefore, bestFreeEtaSeconds: null };
  return choice;
}

/**
 * The eligible driver with the smallest ETA to the pickup, widening the radius when nobody is found;
 * the preferred driver first when it may take the job.
 */
export function pickDriver(index: DriverIndex, req: PickRequest): PickResult {
  const first = preferredChoice(index, req);
  if (first) return { choice: first, radiusMeters: req.radiusMeters, candidates: 1 };
  let candidates = 0;
  let radius = req.radiusMeters;
  for (radius of radiusSteps(req.radiusMeters, req.maxRadiusMeters)) {
    const found = index.nearest({
      lat: req.lat,
      lng: req.lng,
      radiusMeters: radius,
      limit: req.excluded.size + req.holding.size + SEARCH_SLACK,
      vehicleType: req.vehicleType,
      orderType: req.orderType,
      staleBefore: req.staleBefore,
    });
    // A driver on a route is ranked by the time the job adds to its route, a free one by its ETA to the
    // pickup (docs/routes.md); with one job at a time nobody is on a route and this is the ETA order.
    const ranked = found
      .map((f) => {
        const etaSeconds = estimateEtaSeconds(f.distanceMeters, f.driver.vehicleType);
        const fit = f.driver.activeJobs > 0 ? (req.batch?.get(f.driver.id) ?? NO_FIT) : undefined;
        return {
          driverId: f.driver.id,
          distanceMeters: f.distanceMeters,
          etaSeconds,
          fit,
          rank: fit?.ok ? fit.addedSeconds : etaSeconds,
        };
      })
      .sort((a, b) => a.rank - b.rank || a.distanceMeters - b.distanceMeters);
    candidates = ranked.length;
    const skipped: Choice['skipped'] = [];
    for (const c of ranked) {
      const reason =
        req.excluded.get(c.driverId) ??
        (req.holding.has(c.driverId) ? 'HOLDING_OFFER' : c.fit && !c.fit.ok ? c.fit.reason : undefined);
      if (reason) {
        skipped.push({ driverId: c.driverId, reason });
        continue;
      }
      const choice: Choice = {
        driverId: c.driverId,
        distanceMeters: Math.round(c.distanceMeters),
        etaSeconds: c.etaSeconds,
        radiusMeters: radius,
        candidates,
        skipped,
      };
      if (c.fit?.ok) {
        const free = ranked.find((o) => !o.fit && !req.excluded.has(o.driverId) && !req.holding.has(o.driverId));
        choice.batch = {
          addedSeconds: c.fit.addedSeconds,
          stopsBefore: c.fit.stopsBefore,
          bestFreeEtaSeconds: free ? free.etaSeconds : null,
        };
      }
      return { choice, radiusMeters: radius, candidates };
    }
  }
  return { choice: null, radiusMeters: radius, candidates };
}

/** The drivers the nearest-first search would consider, for the caller to ask who holds an offer. */
export function candidateIds(
  index: DriverIndex,
  req: Omit<PickRequest, 'holding' | 'radiusMeters'>,
  limit: number,
): string[] {
  return index
    .nearest({
      lat: req.lat,
      lng: req.lng,
      radiusMeters: req.maxRadiusMeters,
      limit: req.excluded.size + limit,
      vehicleType: req.vehicleType,
      orderType: req.orderType,
      staleBefore: req.staleBefore,
    })
    .map((f) => f.driver.id);
}
