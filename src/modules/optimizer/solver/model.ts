// The solver's problem, on plain arrays: no VROOM field names, no I/O. vroom.ts builds it from a
// VROOM problem and turns the solver's plan back into a VROOM solution.

/** A task: a job, or one half (pickup or delivery) of a shipment. */
export interface Task {
  /** 0: job, 1: shipment pickup, 2: shipment delivery. */
  kind: 0 | 1 | 2;
  /** Row/column in the matrix. */
  loc: number;
  setup: number;
  service: number;
  /** Service-start windows [start, end] (inclusive), sorted by start and disjoint; empty = any time. */
  windows: [number, number][];
  /** Jobs: amount brought from the start and dropped here. Shipments: 0 (see `amount`). */
  delivery: number[];
  /** Jobs: amount picked up here and carried to the end. */
  pickup: number[];
  /** Shipments: the amount carried from the pickup to the delivery. */
  amount: number[];
  skills: number[];
  priority: number;
  /** Shipments: the index of the other half; -1 for jobs. */
  partner: number;
}

export interface Break {
  windows: [number, number][];
  service: number;
}

export interface Vehicle {
  /** -1: no start (the route begins at its first task). */
  start: number;
  /** -1: no end (the route ends at its last task). */
  end: number;
  /** undefined: no capacity limit. */
  capacity: number[] | undefined;
  skills: number[];
  /** Working hours [start, end]. */
  window: [number, number];
  breaks: Break[];
  maxTasks: number;
  maxTravelTime: number;
}

export interface Problem {
  /** n × n travel durations, row-major: durations[from * n + to]. */
  durations: Float64Array;
  n: number;
  /** Number of capacity dimensions (0 when nothing carries an amount). */
  dims: number;
  tasks: Task[];
  vehicles: Vehicle[];
}

/** A plan: each vehicle's sequence; task i is node i, break k of vehicle v is node breakNode(v, k). */
export interface Plan {
  routes: number[][];
  unassigned: number[];
  cost: number;
  iterations: number;
}

export interface SolveOptions {
  seed: number;
  /** Stop after this many iterations (no time limit then). */
  maxIterations?: number;
  /** Stop when now() passes this many milliseconds after the start (ignored with maxIterations). */
  timeLimitMs?: number;
  /** The caller's clock in milliseconds (performance.now in the worker). */
  now?: () => number;
}

/** Breaks are numbered after the tasks: vehicle v's k-th break is node breakBase[v] + k. */
export function breakBases(problem: Problem): number[] {
  const bases: number[] = [];
  let next = problem.tasks.length;
  for (const v of problem.vehicles) {
    bases.push(next);
    next += v.breaks.length;
  }
  return bases;
}
