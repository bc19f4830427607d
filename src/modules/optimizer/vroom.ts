// VROOM's problem and solution shapes (VROOM's docs/API.md): reading a problem (every fault named by
// its field), building the solver's array problem from it, and writing the solver's plan back as a
// VROOM solution. No I/O: the matrix for problems without `matrices` comes from a MatrixProvider.
import type { Break, Plan, Problem, Task, Vehicle } from './solver/model.js';
import { breakBases } from './solver/model.js';

export type Location = [number, number];
export type TimeWindow = [number, number];

export interface VroomJob {
  id: number;
  description?: string;
  location?: Location;
  location_index?: number;
  setup?: number;
  service?: number;
  delivery?: number[];
  pickup?: number[];
  skills?: number[];
  priority?: number;
  time_windows?: TimeWindow[];
}

export interface VroomShipmentStep {
  id: number;
  description?: string;
  location?: Location;
  location_index?: number;
  setup?: number;
  service?: number;
  time_windows?: TimeWindow[];
}

export interface VroomShipment {
  pickup: VroomShipmentStep;
  delivery: VroomShipmentStep;
  amount?: number[];
  skills?: number[];
  priority?: number;
}

export interface VroomBreak {
  id: number;
  description?: string;
  time_windows?: TimeWindow[];
  service?: number;
}

export interface VroomVehicle {
  id: number;
  description?: string;
  profile?: string;
  start?: Location;
  start_index?: number;
  end?: Location;
  end_index?: number;
  capacity?: number[];
  skills?: number[];
  time_window?: TimeWindow;
  breaks?: VroomBreak[];
  max_tasks?: number;
  max_travel_time?: number;
}

export interface VroomProblem {
  jobs?: VroomJob[];
  shipments?: VroomShipment[];
  vehicles: VroomVehicle[];
  matrices?: Record<string, { durations: number[][]; distances?: number[][] }>;
}

export interface VroomStep {
  type: 'start' | 'job' | 'pickup' | 'delivery' | 'break' | 'end';
  id?: number;
  description?: string;
  location?: Location;
  location_index?: number;
  setup: number;
  service: number;
  waiting_time: number;
  arrival: number;
  duration: number;
  load?: number[];
  distance?: number;
}

export interface VroomRoute {
  vehicle: number;
  description?: string;
  cost: number;
  setup: number;
  service: number;
  duration: number;
  waiting_time: number;
  priority: number;
  distance?: number;
  steps: VroomStep[];
}

export interface VroomSolution {
  code: number;
  summary: {
    cost: number;
    routes: number;
    unassigned: number;
    setup: number;
    service: number;
    duration: number;
    waiting_time: number;
    priority: number;
    distance?: number;
  };
  unassigned: { id: number; type: 'job' | 'pickup' | 'delivery'; description?: string; location?: Location }[];
  routes: VroomRoute[];
}

/** A fault in a problem, named by its field (a 400 at the HTTP edge). */
export class ProblemError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

// ---- reading ----

const MAX_TIME = 2 ** 40;

type Obj = Record<string, unknown>;

function isObj(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function only(o: Obj, field: string, keys: string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new ProblemError(`${field}.${k}`, 'unknown property');
}

function int(o: Obj, key: string, field: string, min = 0, max = MAX_TIME): number | undefined {
  const x = o[key];
  if (x === undefined) return undefined;
  if (typeof x !== 'number' || !Number.isInteger(x) || x < min || x > max)
    throw new ProblemError(`${field}.${key}`, `must be an integer from ${min} to ${max}`);
  return x;
}

function intArray(o: Obj, key: string, field: string): number[] | undefined {
  const x = o[key];
  if (x === undefined) return undefined;
  if (!Array.isArray(x) || x.length > 64) throw new ProblemError(`${field}.${key}`, 'must be an array of integers');
  x.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TIME)
      throw new ProblemError(`${field}.${key}[${i}]`, 'must be a non-negative integer');
  });
  return x as number[];
}

function str(o: Obj, key: string, field: string): string | undefined {
  const x = o[key];
  if (x === undefined) return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof x !== 'string' || x.length > 1000 || /[\u0000-\u001f\u007f]/.test(x))
    throw new ProblemError(`${field}.${key}`, 'must be a string of at most 1000 characters without control characters');
  return x;
}

function location(o: Obj, key: string, field: string): Location | undefined {
  const x = o[key];
  if (x === undefined) return undefined;
  if (
    !Array.isArray(x) ||
    x.length !== 2 ||
    typeof x[0] !== 'number' ||
    typeof x[1] !== 'number' ||
    !(Math.abs(x[0]) <= 180) ||
    !(Math.abs(x[1]) <= 90)
  )
    throw new ProblemError(`${field}.${key}`, 'must be [longitude, latitude]');
  return [x[0], x[1]];
}

function window(x: unknown, field: string): TimeWindow {
  if (!Array.isArray(x) || x.length !== 2) throw new ProblemError(field, 'must be [start, end]');
  for (const v of x)
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TIME)
      throw new ProblemError(field, `must hold two integers from 0 to ${MAX_TIME}`);
  if (x[0] > x[1]) throw new ProblemError(field, 'starts after it ends');
  return [x[0], x[1]];
}

function windows(o: Obj, key: string, field: string): TimeWindow[] | undefined {
  const x = o[key];
  if (x === undefined) return undefined;
  if (!Array.isArray(x) || x.length === 0 || x.length > 100)
    throw new ProblemError(`${field}.${key}`, 'must be a non-empty array of [start, end] (at most 100)');
  return x.map((w, i) => window(w, `${field}.${key}[${i}]`));
}

function array(o: Obj, key: string, field: string, max: number): unknown[] | undefined {
  const x = o[key];
  if (x === undefined) return undefined;
  if (!Array.isArray(x)) throw new ProblemError(field ? `${field}.${key}` : key, 'must be an array');
  if (x.length > max) throw new ProblemError(field ? `${field}.${key}` : key, `at most ${max} items`);
  return x;
}

function obj(x: unknown, field: string): Obj {
  if (!isObj(x)) throw new ProblemError(field, 'must be an object');
  return x;
}

const TASK_KEYS = ['id', 'description', 'location', 'location_index', 'setup', 'service', 'time_windows'];

function step(x: unknown, field: string): VroomShipmentStep {
  const o = obj(x, field);
  only(o, field, TASK_KEYS);
  const id = int(o, 'id', field, 0, Number.MAX_SAFE_INTEGER);
  if (id === undefined) throw new ProblemError(`${field}.id`, 'is required');
  return {
    id,
    description: str(o, 'description', field),
    location: location(o, 'location', field),
    location_index: int(o, 'location_index', field),
    setup: int(o, 'setup', field),
    service: int(o, 'service', field),
    time_windows: windows(o, 'time_windows', field),
  };
}

/** Reads and checks a VROOM problem; throws ProblemError naming the first bad field. */
export function readProblem(body: unknown, limits: { maxTasks: number; maxVehicles: number }): VroomProblem {
  const o = obj(body, 'body');
  const jobsIn = array(o, 'jobs', '', limits.maxTasks) ?? [];
  const shipmentsIn = array(o, 'shipments', '', limits.maxTasks) ?? [];
  const vehiclesIn = array(o, 'vehicles', '', limits.maxVehicles);
  if (!vehiclesIn || vehiclesIn.length === 0) throw new ProblemError('vehicles', 'at least one vehicle is required');
  if (jobsIn.length + 2 * shipmentsIn.length > limits.maxTasks)
    throw new ProblemError('jobs', `at most ${limits.maxTasks} tasks (jobs + 2 × shipments)`);
  const jobs = jobsIn.map((x, i): VroomJob => {
    const f = `jobs[${i}]`;
    const j = obj(x, f);
    only(j, f, [...TASK_KEYS, 'delivery', 'pickup', 'skills', 'priority', 'amount']);
    const base = step(Object.fromEntries(Object.entries(j).filter(([k]) => TASK_KEYS.includes(k))), f);
    if (j.amount !== undefined) throw new ProblemError(`${f}.amount`, 'is deprecated in VROOM: use delivery or pickup');
    return {
      ...base,
      delivery: intArray(j, 'delivery', f),
      pickup: intArray(j, 'pickup', f),
      skills: intArray(j, 'skills', f),
      priority: int(j, 'priority', f, 0, 100),
    };
  });
  const shipments = shipmentsIn.map((x, i): VroomShipment => {
    const f = `shipments[${i}]`;
    const s = obj(x, f);
    only(s, f, ['pickup', 'delivery', 'amount', 'skills', 'priority']);
    if (s.pickup === undefined) throw new ProblemError(`${f}.pickup`, 'is required');
    if (s.delivery === undefined) throw new ProblemError(`${f}.delivery`, 'is required');
    return {
      pickup: step(s.pickup, `${f}.pickup`),
      delivery: step(s.delivery, `${f}.delivery`),
      amount: intArray(s, 'amount', f),
      skills: intArray(s, 'skills', f),
      priority: int(s, 'priority', f, 0, 100),
    };
  });
  const vehicles = vehiclesIn.map((x, i): VroomVehicle => {
    const f = `vehicles[${i}]`;
    const v = obj(x, f);
    only(v, f, [
      'id',
      'description',
      'profile',
      'start',
      'start_index',
      'end',
      'end_index',
      'capacity',
      'skills',
      'time_window',
      'breaks',
      'max_tasks',
      'max_travel_time',
      'steps',
    ]);
    // VROOM's solving mode takes `steps` as a hint for a first solution; ours starts from scratch.
    array(v, 'steps', f, 10_000);
    const id = int(v, 'id', f, 0, Number.MAX_SAFE_INTEGER);
    if (id === undefined) throw new ProblemError(`${f}.id`, 'is required');
    const profile = str(v, 'profile', f);
    if (profile !== undefined && profile !== 'car') throw new ProblemError(`${f}.profile`, 'only "car" is supported');
    const breaks = (array(v, 'breaks', f, 100) ?? []).map((b, k): VroomBreak => {
      const bf = `${f}.breaks[${k}]`;
      const bo = obj(b, bf);
      only(bo, bf, ['id', 'description', 'time_windows', 'service']);
      const bid = int(bo, 'id', bf, 0, Number.MAX_SAFE_INTEGER);
      if (bid === undefined) throw new ProblemError(`${bf}.id`, 'is required');
      return {
        id: bid,
        description: str(bo, 'description', bf),
        time_windows: windows(bo, 'time_windows', bf),
        service: int(bo, 'service', bf),
      };
    });
    const seen = new Set<number>();
    breaks.forEach((b, k) => {
      if (seen.has(b.id)) throw new ProblemError(`${f}.breaks[${k}].id`, `duplicate break id ${b.id}`);
      seen.add(b.id);
    });
    return {
      id,
      description: str(v, 'description', f),
      profile,
      start: location(v, 'start', f),
      start_index: int(v, 'start_index', f),
      end: location(v, 'end', f),
      end_index: int(v, 'end_index', f),
      capacity: intArray(v, 'capacity', f),
      skills: intArray(v, 'skills', f),
      time_window: v.time_window === undefined ? undefined : window(v.time_window, `${f}.time_window`),
      breaks,
      max_tasks: int(v, 'max_tasks', f, 0, 1_000_000),
      max_travel_time: int(v, 'max_travel_time', f),
    };
  });
  let matrices: VroomProblem['matrices'];
  if (o.matrices !== undefined) {
    const m = obj(o.matrices, 'matrices');
    only(m, 'matrices', ['car']);
    const car = obj(m.car, 'matrices.car');
    only(car, 'matrices.car', ['durations', 'distances']);
    const durations = square(car.durations, 'matrices.car.durations');
    const distances =
      car.distances === undefined ? undefined : square(car.distances, 'matrices.car.distances', durations.length);
    matrices = { car: { durations, distances } };
  }
  only(o, 'body', ['jobs', 'shipments', 'vehicles', 'matrices', 'options']);
  const problem: VroomProblem = { jobs, shipments, vehicles, matrices };
  checkReferences(problem);
  return problem;
}

function square(x: unknown, field: string, size?: number): number[][] {
  if (!Array.isArray(x) || x.length === 0) throw new ProblemError(field, 'must be a non-empty square array of arrays');
  if (size !== undefined && x.length !== size)
    throw new ProblemError(field, `must be ${size} × ${size} like durations`);
  x.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== x.length)
      throw new ProblemError(`${field}[${i}]`, `must have ${x.length} entries (the matrix is square)`);
    for (let j = 0; j < row.length; j++) {
      const v: unknown = row[j];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TIME)
        throw new ProblemError(`${field}[${i}][${j}]`, 'must be a non-negative integer');
    }
  });
  return x as number[][];
}

/** Location rules, unique ids, amounts' dimensions. */
function checkReferences(p: VroomProblem): void {
  const size = p.matrices?.car.durations.length;
  const place = (o: { location?: Location; location_index?: number }, field: string, required: boolean) => {
    if (size !== undefined) {
      if (o.location_index === undefined) {
        if (required) throw new ProblemError(`${field}.location_index`, 'is required with matrices');
        return;
      }
      if (o.location_index >= size)
        throw new ProblemError(
          `${field}.location_index`,
          `${o.location_index} is outside the matrix (${size} locations)`,
        );
    } else if (o.location === undefined && required)
      throw new ProblemError(`${field}.location`, 'is required without matrices');
  };
  const jobIds = new Set<number>();
  p.jobs!.forEach((j, i) => {
    place(j, `jobs[${i}]`, true);
    if (jobIds.has(j.id)) throw new ProblemError(`jobs[${i}].id`, `duplicate job id ${j.id}`);
    jobIds.add(j.id);
  });
  const pickupIds = new Set<number>();
  const deliveryIds = new Set<number>();
  p.shipments!.forEach((s, i) => {
    place(s.pickup, `shipments[${i}].pickup`, true);
    place(s.delivery, `shipments[${i}].delivery`, true);
    if (pickupIds.has(s.pickup.id))
      throw new ProblemError(`shipments[${i}].pickup.id`, `duplicate pickup id ${s.pickup.id}`);
    if (deliveryIds.has(s.delivery.id))
      throw new ProblemError(`shipments[${i}].delivery.id`, `duplicate delivery id ${s.delivery.id}`);
    pickupIds.add(s.pickup.id);
    deliveryIds.add(s.delivery.id);
  });
  const vehicleIds = new Set<number>();
  p.vehicles.forEach((v, i) => {
    const f = `vehicles[${i}]`;
    if (vehicleIds.has(v.id)) throw new ProblemError(`${f}.id`, `duplicate vehicle id ${v.id}`);
    vehicleIds.add(v.id);
    if (size !== undefined) {
      if (v.start_index !== undefined && v.start_index >= size)
        throw new ProblemError(`${f}.start_index`, `${v.start_index} is outside the matrix (${size} locations)`);
      if (v.end_index !== undefined && v.end_index >= size)
        throw new ProblemError(`${f}.end_index`, `${v.end_index} is outside the matrix (${size} locations)`);
    } else {
      if (v.start_index !== undefined && v.start === undefined)
        throw new ProblemError(`${f}.start_index`, 'needs matrices (or give start as [lon, lat])');
      if (v.end_index !== undefined && v.end === undefined)
        throw new ProblemError(`${f}.end_index`, 'needs matrices (or give end as [lon, lat])');
    }
    const hasStart = size !== undefined ? v.start_index !== undefined : v.start !== undefined;
    const hasEnd = size !== undefined ? v.end_index !== undefined : v.end !== undefined;
    if (!hasStart && !hasEnd) throw new ProblemError(`${f}.start`, 'a vehicle needs a start or an end');
  });
  // Amounts: every amount has as many dimensions as the capacities.
  const dims = p.vehicles.find((v) => v.capacity)?.capacity?.length;
  const check = (a: number[] | undefined, field: string) => {
    if (a !== undefined && dims !== undefined && a.length !== dims)
      throw new ProblemError(field, `has ${a.length} dimensions, the capacities ${dims}`);
  };
  p.vehicles.forEach((v, i) => check(v.capacity, `vehicles[${i}].capacity`));
  p.jobs!.forEach((j, i) => {
    check(j.delivery, `jobs[${i}].delivery`);
    check(j.pickup, `jobs[${i}].pickup`);
  });
  p.shipments!.forEach((s, i) => check(s.amount, `shipments[${i}].amount`));
}

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

// ---- to the solver and back ----

const NO_LIMIT = Number.POSITIVE_INFINITY;

/** The solver's problem (the VROOM problem must have matrices, see indexLocations). */
export function toSolverProblem(p: VroomProblem): Problem {
  const m = p.matrices!.car.durations;
  const n = m.length;
  const durations = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) durations[i * n + j] = m[i][j];
  const dims =
    p.vehicles.find((v) => v.capacity)?.capacity?.length ??
    Math.max(
      0,
      ...(p.jobs ?? []).map((j) => Math.max(j.delivery?.length ?? 0, j.pickup?.length ?? 0)),
      ...(p.shipments ?? []).map((s) => s.amount?.length ?? 0),
    );
  const zeros = () => new Array<number>(dims).fill(0);
  const wins = (w: TimeWindow[] | undefined) => mergeWindows(w ?? []);
  const tasks: Task[] = [];
  for (const j of p.jobs ?? [])
    tasks.push({
      kind: 0,
      loc: j.location_index!,
      setup: j.setup ?? 0,
      service: j.service ?? 0,
      windows: wins(j.time_windows),
      delivery: j.delivery ?? zeros(),
      pickup: j.pickup ?? zeros(),
      amount: zeros(),
      skills: j.skills ?? [],
      priority: j.priority ?? 0,
      partner: -1,
    });
  for (const s of p.shipments ?? []) {
    const base = tasks.length;
    for (const [k, st] of [s.pickup, s.delivery].entries())
      tasks.push({
        kind: k === 0 ? 1 : 2,
        loc: st.location_index!,
        setup: st.setup ?? 0,
        service: st.service ?? 0,
        windows: wins(st.time_windows),
        delivery: zeros(),
        pickup: zeros(),
        amount: s.amount ?? zeros(),
        skills: s.skills ?? [],
        priority: s.priority ?? 0,
        partner: k === 0 ? base + 1 : base,
      });
  }
  const vehicles: Vehicle[] = p.vehicles.map((v) => ({
    start: v.start_index ?? -1,
    end: v.end_index ?? -1,
    capacity: v.capacity,
    skills: v.skills ?? [],
    window: v.time_window ?? [0, MAX_TIME * 4],
    breaks: (v.breaks ?? []).map((b): Break => ({ windows: wins(b.time_windows), service: b.service ?? 0 })),
    maxTasks: v.max_tasks ?? NO_LIMIT,
    maxTravelTime: v.max_travel_time ?? NO_LIMIT,
  }));
  return { durations, n, dims, tasks, vehicles };
}

/** Sorted, overlapping windows merged (VROOM allows them in any order). */
function mergeWindows(w: TimeWindow[]): [number, number][] {
  const sorted = w.map((x) => [x[0], x[1]] as [number, number]).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const x of sorted) {
    const last = out[out.length - 1];
    if (last && x[0] <= last[1]) last[1] = Math.max(last[1], x[1]);
    else out.push(x);
  }
  return out;
}

/** Writes a plan as a VROOM solution: arrival, waiting, service and load at every step. */
export function toSolution(
  vp: VroomProblem,
  problem: Problem,
  plan: Plan,
  withIndex = vp.matrices !== undefined,
): VroomSolution {
  const bases = breakBases(problem);
  const T = problem.tasks.length;
  const jobs = vp.jobs ?? [];
  const ships = vp.shipments ?? [];
  const D = problem.dims;
  const dur = problem.durations;
  const n = problem.n;
  const tt = (a: number, b: number) => (a < 0 || b < 0 ? 0 : dur[a * n + b]);
  const describe = (t: number) => {
    if (t < jobs.length) return { type: 'job' as const, src: jobs[t] };
    const s = ships[(t - jobs.length) >> 1];
    return (t - jobs.length) % 2 === 0
      ? { type: 'pickup' as const, src: s.pickup }
      : { type: 'delivery' as const, src: s.delivery };
  };
  const routes: VroomRoute[] = [];
  plan.routes.forEach((seq, v) => {
    if (!seq.some((x) => x < T)) return;
    const veh = problem.vehicles[v];
    const vv = vp.vehicles[v];
    // The load on board at the start: every job's delivery.
    const load = new Array<number>(D).fill(0);
    for (const x of seq)
      if (x < T && problem.tasks[x].kind === 0) for (let d = 0; d < D; d++) load[d] += problem.tasks[x].delivery[d];
    // Leave the start as late as possible without delaying the first service.
    let here = veh.start;
    let t = veh.window[0];
    {
      const first = seq[0];
      if (first !== undefined && first < T) {
        const task = problem.tasks[first];
        const arrive = t + tt(here, task.loc);
        const s = task.windows.length === 0 ? arrive : earliest(task.windows, arrive);
        t += s - arrive;
      }
    }
    const steps: VroomStep[] = [];
    let travel = 0;
    let service = 0;
    let setupSum = 0;
    let waiting = 0;
    let priority = 0;
    const startStep: VroomStep = {
      type: 'start',
      setup: 0,
      service: 0,
      waiting_time: 0,
      arrival: t,
      duration: 0,
      load: load.slice(),
    };
    if (vv.start !== undefined) startStep.location = vv.start;
    if (withIndex && veh.start >= 0) startStep.location_index = veh.start;
    if (veh.start >= 0) steps.push(startStep);
    for (const x of seq) {
      if (x >= T) {
        const br = problem.vehicles[v].breaks[x - bases[v]];
        const s = br.windows.length === 0 ? t : earliest(br.windows, t);
        steps.push({
          type: 'break',
          id: vv.breaks![x - bases[v]].id,
          setup: 0,
          service: br.service,
          waiting_time: s - t,
          arrival: t,
          duration: travel,
          load: load.slice(),
        });
        waiting += s - t;
        service += br.service;
        t = s + br.service;
        continue;
      }
      const task = problem.tasks[x];
      const tr = tt(here, task.loc);
      travel += tr;
      const arrival = t + tr;
      const s = task.windows.length === 0 ? arrival : earliest(task.windows, arrival);
      const setup = here === task.loc ? 0 : task.setup;
      for (let d = 0; d < D; d++) {
        if (task.kind === 0) load[d] += task.pickup[d] - task.delivery[d];
        else if (task.kind === 1) load[d] += task.amount[d];
        else load[d] -= task.amount[d];
      }
      const { type, src } = describe(x);
      const st: VroomStep = {
        type,
        id: src.id,
        setup,
        service: task.service,
        waiting_time: s - arrival,
        arrival,
        duration: travel,
        load: load.slice(),
      };
      if (src.description !== undefined) st.description = src.description;
      if (src.location !== undefined) st.location = src.location;
      if (withIndex) st.location_index = task.loc;
      steps.push(st);
      waiting += s - arrival;
      service += task.service;
      setupSum += setup;
      priority += task.priority;
      t = s + setup + task.service;
      here = task.loc;
    }
    if (veh.end >= 0) {
      const tr = tt(here, veh.end);
      travel += tr;
      const endStep: VroomStep = {
        type: 'end',
        setup: 0,
        service: 0,
        waiting_time: 0,
        arrival: t + tr,
        duration: travel,
        load: load.slice(),
      };
      if (vv.end !== undefined) endStep.location = vv.end;
      if (withIndex) endStep.location_index = veh.end;
      steps.push(endStep);
    }
    const route: VroomRoute = {
      vehicle: vv.id,
      cost: travel,
      setup: setupSum,
      service,
      duration: travel,
      waiting_time: waiting,
      priority,
      steps,
    };
    if (vv.description !== undefined) route.description = vv.description;
    routes.push(route);
  });
  const unassigned = plan.unassigned.map((t) => {
    const { type, src } = describe(t);
    const u: VroomSolution['unassigned'][number] = { id: src.id, type };
    if (src.description !== undefined) u.description = src.description;
    if (src.location !== undefined) u.location = src.location;
    return u;
  });
  const sum = (k: 'cost' | 'setup' | 'service' | 'duration' | 'waiting_time' | 'priority') =>
    routes.reduce((s, r) => s + r[k], 0);
  return {
    code: 0,
    summary: {
      cost: sum('cost'),
      routes: routes.length,
      unassigned: unassigned.length,
      setup: sum('setup'),
      service: sum('service'),
      duration: sum('duration'),
      waiting_time: sum('waiting_time'),
      priority: sum('priority'),
    },
    unassigned,
    routes,
  };
}

function earliest(w: [number, number][], t: number): number {
  for (const x of w) if (t <= x[1]) return Math.max(t, x[0]);
  return t; // unreachable for a feasible plan
}
