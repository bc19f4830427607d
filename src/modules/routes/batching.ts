// Batching (contract section 24): whether a new package fits a driver's running route. Its two stops
// go at their cheapest places (route-plan.ts) on the straight estimate (dispatch's hot path keeps it,
// section 25); the route takes it when that adds at most BATCH_MAX_DETOUR, breaks no promised window
// that held, stays within the vehicle's capacity and the driver is under maxActiveJobs.
import type { DB } from '../../db/database.js';
import type { VehicleType } from '../../db/schema.js';
import { json } from '../../db/json.js';
import type { StopJson } from '../../db/tables/jobs.js';
import { routeStops, straightDurations, type RouteStop } from './route-model.js';
import { cheapestInsertion, stopId, type PlanStop, type Point } from './route-plan.js';
import type { RoutesRepository } from './routes.repository.js';

export type BatchReason = 'BATCH_FULL' | 'BATCH_CAPACITY' | 'BATCH_WINDOW' | 'BATCH_DETOUR';

export type BatchEval =
  { ok: true; addedSeconds: number; stopsBefore: number } | { ok: false; reason: BatchReason; addedSeconds?: number };

/** What a route is to batching: its pending stops in order and what it holds. */
export interface RouteSnapshot {
  vehicleType: VehicleType;
  start: Point | null;
  pending: readonly PlanStop[];
  activeJobs: number;
  maxActiveJobs: number;
  parcels: number;
  kg: number;
  capacityParcels: number;
  capacityKg: number;
}

export interface BatchJob {
  id: string;
  pickup: Point;
  dropoff: Point;
  pickupWindow: [number | null, number | null];
  dropoffWindow: [number | null, number | null];
  kg: number;
}

/** Pure: the job's cheapest insertion into the route, or why the route cannot take it. */
export function evaluateInsertion(
  route: RouteSnapshot,
  job: BatchJob,
  nowMs: number,
  maxDetourSeconds: number,
): BatchEval {
  if (route.activeJobs >= route.maxActiveJobs) return { ok: false, reason: 'BATCH_FULL' };
  if (route.parcels + 1 > route.capacityParcels || route.kg + job.kg > route.capacityKg + 1e-9)
    return { ok: false, reason: 'BATCH_CAPACITY' };
  const pickup: PlanStop = {
    id: stopId(job.id, 'PICKUP'),
    jobId: job.id,
    kind: 'PICKUP',
    location: job.pickup,
    windowStart: job.pickupWindow[0],
    windowEnd: job.pickupWindow[1],
  };
  const dropoff: PlanStop = {
    id: stopId(job.id, 'DROPOFF'),
    jobId: job.id,
    kind: 'DROPOFF',
    location: job.dropoff,
    windowStart: job.dropoffWindow[0],
    windowEnd: job.dropoffWindow[1],
  };
  const start = route.start ?? route.pending[0]?.location ?? job.pickup;
  const d = straightDurations(
    start,
    [...route.pending.map((s) => s.location), job.pickup, job.dropoff],
    route.vehicleType,
  );
  const best = cheapestInsertion(nowMs, route.pending, pickup, dropoff, d);
  if (!best) return { ok: false, reason: 'BATCH_WINDOW' };
  if (best.addedSeconds > maxDetourSeconds)
    return { ok: false, reason: 'BATCH_DETOUR', addedSeconds: best.addedSeconds };
  return { ok: true, addedSeconds: best.addedSeconds, stopsBefore: best.stopsBefore };
}

const ms = (d: Date | null) => (d ? new Date(d).getTime() : null);

/** Reads the routes of the candidate drivers on a route (three queries for them all) and evaluates the job for each. */
export class RouteBatcher {
  constructor(private readonly deps: { db: DB; repo: RoutesRepository; maxDetourMs: number }) {}

  async evaluate(
    jobId: string,
    drivers: readonly { id: string; position: Point | null }[],
    nowMs: number,
  ): Promise<Map<string, BatchEval>> {
    const out = new Map<string, BatchEval>();
    if (drivers.length === 0) return out;
    const { db, repo } = this.deps;
    const ids = drivers.map((d) => d.id);
    const [job, routes] = await Promise.all([repo.packageForBatch(db, jobId), repo.routesOf(db, ids)]);
    if (!job) return out;
    const pickup = json<StopJson>(job.pickup);
    const dropoff = json<StopJson>(job.dropoff);
    const batchJob: BatchJob = {
      id: job.id,
      pickup: pickup.location,
      dropoff: dropoff.location,
      pickupWindow: [ms(job.pickup_window_start), ms(job.pickup_window_end)],
      dropoffWindow: [ms(job.dropoff_window_start), ms(job.dropoff_window_end)],
      kg: job.kg,
    };
    for (const d of drivers) {
      const r = routes.get(d.id);
      if (!r) continue;
      const stops = routeStops(r.packages, r.stopOrder, d.position, nowMs, r.driver.vehicle_type);
      const snapshot: RouteSnapshot = {
        vehicleType: r.driver.vehicle_type,
        start: d.position,
        pending: stops.pending as RouteStop[],
        activeJobs: Math.max(r.driver.active_jobs, r.packages.length),
        maxActiveJobs: r.driver.max_active_jobs,
        parcels: r.packages.length,
        kg: r.packages.reduce((sum, p) => sum + Number(p.kg), 0),
        capacityParcels: r.driver.capacity_parcels,
        capacityKg: Number(r.driver.capacity_kg),
      };
      out.set(d.id, evaluateInsertion(snapshot, batchJob, nowMs, Math.floor(this.deps.maxDetourMs / 1000)));
    }
    return out;
  }
}
