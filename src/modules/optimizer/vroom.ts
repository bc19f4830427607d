// VROOM's problem and solution shapes (VROOM's docs/API.md): reading a problem (every fault named by
// its field), building the solver's array problem from it, and writing the solver's plan back as a
// VROOM solution. No I/O: the matrix for problems without `matrices` comes from a MatrixProvider.
import type { Location, VroomProblem } from './vroom-types.js';

export * from './vroom-types.js';
export { readProblem } from './vroom-read.js';
export { toSolution, toSolverProblem } from './vroom-solution.js';

// ---- the matrix ----

/** Where travel durations come from for a problem without `matrices` (R45's router plugs in here). */
export interface MatrixProvider {
  /** Seconds from each point to each point, [lon, lat] points, n × n. */
  durations(points: Location[]): Promise<number[][]>;
}

/** The locations a problem without matrices uses, and each task's and vehicle's index among them. */
export function collectLocations(p: VroomProblem): Location[] {
  const list: Location[] = [];
  const seen = new Map<string, number>();
  const add = (l: Location | undefined) => {
    if (!l) return;
    const key = `${l[0]},${l[1]}`;
    if (!seen.has(key)) {
      seen.set(key, list.length);
      list.push(l);
    }
  };
  for (const v of p.vehicles) {
    add(v.start);
    add(v.end);
  }
  for (const j of p.jobs ?? []) add(j.location);
  for (const s of p.shipments ?? []) {
    add(s.pickup.location);
    add(s.delivery.location);
  }
  return list;
}

/** Gives every task and vehicle a location_index into `points` (problems without matrices). */
export function indexLocations(p: VroomProblem, points: Location[], durations: number[][]): VroomProblem {
  const at = new Map(points.map((l, i) => [`${l[0]},${l[1]}`, i]));
  const idx = (l: Location | undefined) => (l ? at.get(`${l[0]},${l[1]}`) : undefined);
  return {
    jobs: (p.jobs ?? []).map((j) => ({ ...j, location_index: idx(j.location) })),
    shipments: (p.shipments ?? []).map((s) => ({
      ...s,
      pickup: { ...s.pickup, location_index: idx(s.pickup.location) },
      delivery: { ...s.delivery, location_index: idx(s.delivery.location) },
    })),
    vehicles: p.vehicles.map((v) => ({ ...v, start_index: idx(v.start), end_index: idx(v.end) })),
    matrices: { car: { durations } },
  };
}
