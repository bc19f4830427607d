// From a driver's active packages and the stored order to its route's stops (contract section 24):
// done stops first, then the pending ones in the driver's order; stops the stored order does not hold
// yet (a job taken since) are placed at their cheapest insertion, on the straight estimate. Pure.
import { json } from '../../db/json.js';
import type { StopJson } from '../../db/tables/jobs.js';
import type { VehicleType } from '../../db/schema.js';
import { straightLeg } from '../routing/router.js';
import { cheapestInsertion, stopId, type Durations, type PlanStop, type Point, type StopKind } from './route-plan.js';

export interface RoutePackage {
  id: string;
  status: string;
  pickup: StopJson | string;
  dropoff: StopJson | string;
  pickup_window_start: Date | null;
  pickup_window_end: Date | null;
  dropoff_window_start: Date | null;
  dropoff_window_end: Date | null;
}

export interface RouteStop extends PlanStop {
  address: string;
  status: 'PENDING' | 'DONE';
}

const ms = (d: Date | null) => (d ? new Date(d).getTime() : null);

function stopOf(p: RoutePackage, kind: StopKind, done: boolean): RouteStop {
  const stop = json<StopJson>(kind === 'PICKUP' ? p.pickup : p.dropoff);
  return {
    id: stopId(p.id, kind),
    jobId: p.id,
    kind,
    location: { lat: stop.location.lat, lng: stop.location.lng },
    address: stop.address,
    windowStart: ms(kind === 'PICKUP' ? p.pickup_window_start : p.dropoff_window_start),
    windowEnd: ms(kind === 'PICKUP' ? p.pickup_window_end : p.dropoff_window_end),
    status: done ? 'DONE' : 'PENDING',
  };
}

/** The straight estimate over [start, ...points] (index 0 the start), as Durations. */
export function straightDurations(start: Point, points: readonly Point[], vehicleType: VehicleType): Durations {
  const all = [start, ...points];
  const n = all.length;
  const cells = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++)
      if (i !== j) cells[i * n + j] = straightLeg(all[i]!, all[j]!, vehicleType).durationSeconds;
  return (from, to) => cells[from * n + to]!;
}

export interface RouteStops {
  done: RouteStop[];
  /** Pending stops in the route's order. */
  pending: RouteStop[];
  /** Whether the order differs from the stored one (new stops placed, gone ones dropped). */
  changed: boolean;
}

/** The route's stops from its packages (oldest assignment first) and the stored order of pending stop ids. */
export function routeStops(
  packages: readonly RoutePackage[],
  stored: readonly string[],
  start: Point | null,
  nowMs: number,
  vehicleType: VehicleType,
): RouteStops {
  const done: RouteStop[] = [];
  const byId = new Map<string, RouteStop>();
  for (const p of packages) {
    const picked = p.status !== 'ASSIGNED';
    const pickup = stopOf(p, 'PICKUP', picked);
    if (picked) done.push(pickup);
    else byId.set(pickup.id, pickup);
    const dropoff = stopOf(p, 'DROPOFF', false);
    byId.set(dropoff.id, dropoff);
  }
  let pending = stored.map((id) => byId.get(id)).filter((s): s is RouteStop => s !== undefined);
  let changed = pending.length !== stored.length;
  const placed = new Set(pending.map((s) => s.id));
  for (const p of packages) {
    const pickupId = stopId(p.id, 'PICKUP');
    const dropoffId = stopId(p.id, 'DROPOFF');
    if (placed.has(dropoffId)) continue;
    changed = true;
    const dropoff = byId.get(dropoffId)!;
    const pickup = byId.get(pickupId);
    if (!pickup || placed.has(pickupId)) {
      pending = [...pending, dropoff];
    } else {
      const from = start ?? pickup.location;
      const d = straightDurations(
        from,
        [...pending.map((s) => s.location), pickup.location, dropoff.location],
        vehicleType,
      );
      const at = cheapestInsertion(nowMs, pending, pickup, dropoff, d);
      // No place keeps every window: at the end (the driver may reorder).
      const i = at?.pickupAt ?? pending.length;
      const j = at ? at.dropoffAt : pending.length + 1;
      pending = [...pending.slice(0, i), pickup, ...pending.slice(i)];
      pending = [...pending.slice(0, j), dropoff, ...pending.slice(j)];
      placed.add(pickupId);
    }
    placed.add(dropoffId);
  }
  return { done, pending, changed };
}
