// To the solver and back: a VROOM problem (with matrices) as the solver's array problem, and a plan as a VROOM solution.
import type { Break, Plan, Problem, Task, Vehicle } from './solver/model.js';
import { breakBases } from './solver/model.js';
import type { TimeWindow, VroomProblem, VroomRoute, VroomSolution, VroomStep } from './vroom-types.js';
import { MAX_TIME } from './vroom-types.js';

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
