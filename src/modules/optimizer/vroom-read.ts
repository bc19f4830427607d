// Reading a VROOM problem: every fault named by its field (ProblemError), then ids, locations and amounts checked.
import type {
  Location,
  TimeWindow,
  VroomBreak,
  VroomJob,
  VroomProblem,
  VroomShipment,
  VroomShipmentStep,
  VroomVehicle,
} from './vroom-types.js';
import { MAX_TIME, ProblemError } from './vroom-types.js';

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
