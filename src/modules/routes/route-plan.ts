// A driver's route (contract section 24), pure: its stops, the timeline of an order (arrival at each
// stop, waiting for a window to open), the checks of a reorder (a pickup before its drop-off, no
// promised window broken that held before) and the cheapest insertion of a new job's two stops.
// Durations come from a matrix the caller builds (the router for the route's ETAs, the straight
// estimate for dispatch's insertion: a hot path). No I/O, no clock.
import { createHash } from 'node:crypto';

export type StopKind = 'PICKUP' | 'DROPOFF';

export interface Point {
  lat: number;
  lng: number;
}

export interface PlanStop {
  id: string;
  jobId: string;
  kind: StopKind;
  location: Point;
  /** Epoch ms; null bound: open on that side. */
  windowStart: number | null;
  windowEnd: number | null;
}

/** Seconds spent at a stop (handing over a parcel): added after each arrival. */
export const STOP_SERVICE_SECONDS = 60;

/** A stop's id: stable for its job and kind (a UUID derived from both). */
export function stopId(jobId: string, kind: StopKind): string {
  const h = createHash('sha1').update(`${jobId}:${kind}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/**
 * Durations between the route's points, whole seconds: index 0 is the driver's start, 1.. the stops
 * in the order given to buildMatrix's caller.
 */
export type Durations = (from: number, to: number) => number;

export interface Timeline {
  /** Arrival at each stop of the order, epoch ms. */
  arrivals: number[];
  /** Seconds from the start to the end of the last stop (waiting and service included). */
  durationSeconds: number;
  /** The first stop (index in the order) reached after its window's end, or -1. */
  late: number;
}

/**
 * The timeline of an order: `order` are indices into the matrix (1-based: 0 is the driver), `stops` the
 * stops at those indices (stops[k] is at matrix index order[k]).
 */
export function timeline(
  startMs: number,
  order: readonly number[],
  stops: readonly PlanStop[],
  d: Durations,
): Timeline {
  const arrivals: number[] = [];
  let t = startMs;
  let at = 0;
  let late = -1;
  for (let k = 0; k < order.length; k++) {
    const to = order[k]!;
    t += d(at, to) * 1000;
    const stop = stops[k]!;
    if (stop.windowStart !== null && t < stop.windowStart) t = stop.windowStart;
    arrivals.push(t);
    if (late < 0 && stop.windowEnd !== null && t > stop.windowEnd) late = k;
    t += STOP_SERVICE_SECONDS * 1000;
    at = to;
  }
  return { arrivals, durationSeconds: Math.round((t - startMs) / 1000), late };
}

/** The first drop-off (index in `stops`) that comes before its own pending pickup, or -1. */
export function pickupAfterDropoff(stops: readonly PlanStop[]): number {
  const dropped = new Set<string>();
  for (let k = 0; k < stops.length; k++) {
    const s = stops[k]!;
    if (s.kind === 'DROPOFF') dropped.add(s.jobId);
    else if (dropped.has(s.jobId)) return stops.findIndex((x) => x.kind === 'DROPOFF' && x.jobId === s.jobId);
  }
  return -1;
}

export interface Insertion {
  /** Seconds the route gets longer (its end later) with the job's stops. */
  addedSeconds: number;
  /** The pickup's and the drop-off's positions in the new order (0-based, drop-off after pickup). */
  pickupAt: number;
  dropoffAt: number;
  /** Pending stops before the new drop-off in the new order. */
  stopsBefore: number;
}

/**
 * The cheapest places for a new job's pickup and drop-off in a route's pending stops (in order): every
 * pair i ≤ j is tried, and a pair is kept only when no window is broken that held before (the new
 * stops' windows included). `d` indexes the points as: 0 the driver, 1..n the route's stops in
 * order, n+1 the new pickup, n+2 the new drop-off. Undefined when no place keeps every window.
 */
export function cheapestInsertion(
  startMs: number,
  stops: readonly PlanStop[],
  pickup: PlanStop,
  dropoff: PlanStop,
  d: Durations,
): Insertion | undefined {
  const n = stops.length;
  const baseOrder = stops.map((_, k) => k + 1);
  const base = timeline(startMs, baseOrder, stops, d);
  const P = n + 1;
  const D = n + 2;
  const lateBefore = lateIds(base, stops);
  let best: Insertion | undefined;
  const order: number[] = new Array<number>(n + 2);
  const seq: PlanStop[] = new Array<PlanStop>(n + 2);
  for (let i = 0; i <= n; i++) {
    for (let j = i; j <= n; j++) {
      let w = 0;
      for (let k = 0; k <= n; k++) {
        if (k === i) {
          order[w] = P;
          seq[w++] = pickup;
        }
        if (k === j) {
          order[w] = D;
          seq[w++] = dropoff;
        }
        if (k < n) {
          order[w] = k + 1;
          seq[w++] = stops[k]!;
        }
      }
      const t = timeline(startMs, order, seq, d);
      const added = t.durationSeconds - base.durationSeconds;
      if (best && added >= best.addedSeconds) continue;
      if (firstNewlyLate(t, seq, lateBefore) >= 0) continue;
      best = { addedSeconds: added, pickupAt: i, dropoffAt: j + 1, stopsBefore: j + 1 };
    }
  }
  return best;
}

/** The stops already late in a timeline (a reorder or an insertion is not blamed for them). */
function lateIds(t: Timeline, stops: readonly PlanStop[]): Set<string> {
  const late = new Set<string>();
  if (t.late < 0) return late;
  for (let k = t.late; k < stops.length; k++) {
    const s = stops[k]!;
    if (s.windowEnd !== null && t.arrivals[k]! > s.windowEnd) late.add(s.id);
  }
  return late;
}

function firstNewlyLate(t: Timeline, stops: readonly PlanStop[], lateBefore: Set<string>): number {
  if (t.late < 0) return -1;
  for (let k = t.late; k < stops.length; k++) {
    const s = stops[k]!;
    if (s.windowEnd !== null && t.arrivals[k]! > s.windowEnd && !lateBefore.has(s.id)) return k;
  }
  return -1;
}

/** The first stop (index in `next`) late in the new order that was on time in the old, or -1. */
export function newlyLate(
  prev: Timeline,
  prevStops: readonly PlanStop[],
  next: Timeline,
  nextStops: readonly PlanStop[],
): number {
  return firstNewlyLate(next, nextStops, lateIds(prev, prevStops));
}
