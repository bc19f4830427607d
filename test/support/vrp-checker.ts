// An independent checker of VROOM solutions (it imports nothing from the solver): from the problem
// and its matrix it recomputes every route and lists every broken rule. Semantics (docs/optimization.md):
// service starts inside one of the task's windows (inclusive), at or after the arrival; setup applies
// when the previous location differs; a break is taken where the vehicle is (no travel into it);
// a job's delivery is on board from the start, its pickup from the job on; a shipment's amount from
// its pickup to its delivery, on one vehicle.
import type { VroomProblem, VroomSolution } from '../../src/modules/optimizer/vroom.js';

type Win = [number, number];

function inWindows(ws: Win[] | undefined, t: number): boolean {
  if (!ws || ws.length === 0) return true;
  return ws.some(([a, b]) => a <= t && t <= b);
}

/** Every violation found, as readable strings; empty when the solution is valid. */
export function checkSolution(problem: VroomProblem, solution: VroomSolution): string[] {
  const out: string[] = [];
  const m = problem.matrices!.car.durations;
  const jobs = new Map((problem.jobs ?? []).map((j) => [j.id, j]));
  const pickups = new Map((problem.shipments ?? []).map((s) => [s.pickup.id, s]));
  const deliveries = new Map((problem.shipments ?? []).map((s) => [s.delivery.id, s]));
  const vehicles = new Map(problem.vehicles.map((v) => [v.id, v]));
  const seen = new Set<string>();
  const mark = (key: string, where: string) => {
    if (seen.has(key)) out.push(`${key} served or listed twice (${where})`);
    seen.add(key);
  };
  const dims = problem.vehicles.find((v) => v.capacity)?.capacity?.length ?? 0;
  const usedVehicles = new Set<number>();
  let totals = { cost: 0, duration: 0, service: 0, waiting: 0 };

  for (const route of solution.routes) {
    const v = vehicles.get(route.vehicle);
    const where = `vehicle ${route.vehicle}`;
    if (!v) {
      out.push(`${where}: no such vehicle`);
      continue;
    }
    if (usedVehicles.has(v.id)) out.push(`${where}: two routes`);
    usedVehicles.add(v.id);
    const vskills = new Set(v.skills ?? []);
    const tw: Win = v.time_window ?? [0, Number.POSITIVE_INFINITY];
    const steps = route.steps;
    let k = 0;
    let loc: number | undefined = v.start_index;
    let t: number;
    if (v.start_index !== undefined) {
      if (steps[0]?.type !== 'start') {
        out.push(`${where}: the first step is not its start`);
        continue;
      }
      t = steps[0].arrival;
      if (t < tw[0]) out.push(`${where}: leaves at ${t}, before its window ${tw[0]}`);
      k = 1;
    } else t = Number.NEGATIVE_INFINITY;
    // Initial load: every job delivery in the route.
    const load = new Array<number>(dims).fill(0);
    for (const s of steps)
      if (s.type === 'job') {
        const j = jobs.get(s.id!);
        j?.delivery?.forEach((x, d) => (load[d] += x));
      }
    const checkLoad = (label: string) => {
      for (let d = 0; d < dims; d++) {
        const cap = v.capacity ? v.capacity[d] : Number.POSITIVE_INFINITY;
        if (load[d] > cap) out.push(`${where}: load ${load[d]} over capacity ${cap} (dimension ${d}) at ${label}`);
        if (load[d] < 0) out.push(`${where}: negative load at ${label}`);
      }
    };
    checkLoad('start');
    if (dims > 0 && steps[0]?.load && steps[0].type === 'start' && steps[0].load.join() !== load.join())
      out.push(`${where}: start load ${steps[0].load.join()} should be ${load.join()}`);
    let travel = 0;
    let service = 0;
    let waiting = 0;
    let tasks = 0;
    const picked = new Set<number>();
    const breaksSeen = new Set<number>();
    for (; k < steps.length; k++) {
      const s = steps[k];
      if (s.type === 'start') {
        out.push(`${where}: a start step in the middle`);
        continue;
      }
      if (s.type === 'end') {
        if (k !== steps.length - 1) out.push(`${where}: the end step is not last`);
        if (v.end_index === undefined) out.push(`${where}: an end step without an end`);
        const tr = loc === undefined || v.end_index === undefined ? 0 : m[loc][v.end_index];
        travel += tr;
        t += tr;
        if (s.arrival !== t) out.push(`${where}: end arrival ${s.arrival}, recomputed ${t}`);
        if (t > tw[1]) out.push(`${where}: arrives at its end at ${t}, after its window ${tw[1]}`);
        continue;
      }
      if (s.type === 'break') {
        const b = (v.breaks ?? []).find((x) => x.id === s.id);
        if (!b) {
          out.push(`${where}: unknown break ${s.id}`);
          continue;
        }
        if (breaksSeen.has(b.id)) out.push(`${where}: break ${b.id} twice`);
        breaksSeen.add(b.id);
        if (Number.isFinite(t) && s.arrival !== t)
          out.push(`${where}: break ${b.id} arrival ${s.arrival}, recomputed ${t}`);
        t = Number.isFinite(t) ? t : s.arrival;
        const start = t + s.waiting_time;
        if (s.waiting_time < 0) out.push(`${where}: negative waiting at break ${b.id}`);
        if (!inWindows(b.time_windows, start))
          out.push(`${where}: break ${b.id} starts at ${start}, outside its windows`);
        if (s.service !== (b.service ?? 0)) out.push(`${where}: break ${b.id} service ${s.service}`);
        waiting += s.waiting_time;
        service += b.service ?? 0;
        t = start + (b.service ?? 0);
        continue;
      }
      // A task.
      tasks++;
      let task: { location_index?: number; setup?: number; service?: number; time_windows?: Win[] } | undefined;
      let skills: number[] = [];
      if (s.type === 'job') {
        const j = jobs.get(s.id!);
        if (!j) {
          out.push(`${where}: unknown job ${s.id}`);
          continue;
        }
        mark(`job ${j.id}`, where);
        task = j;
        skills = j.skills ?? [];
        j.delivery?.forEach((x, d) => (load[d] -= x));
        j.pickup?.forEach((x, d) => (load[d] += x));
      } else if (s.type === 'pickup') {
        const sh = pickups.get(s.id!);
        if (!sh) {
          out.push(`${where}: unknown pickup ${s.id}`);
          continue;
        }
        mark(`pickup ${sh.pickup.id}`, where);
        picked.add(sh.pickup.id);
        task = sh.pickup;
        skills = sh.skills ?? [];
        sh.amount?.forEach((x, d) => (load[d] += x));
      } else {
        const sh = deliveries.get(s.id!);
        if (!sh) {
          out.push(`${where}: unknown delivery ${s.id}`);
          continue;
        }
        mark(`delivery ${sh.delivery.id}`, where);
        if (!picked.has(sh.pickup.id))
          out.push(
            `${where}: delivery ${sh.delivery.id} before (or without) its pickup ${sh.pickup.id} on this vehicle`,
          );
        task = sh.delivery;
        skills = sh.skills ?? [];
        sh.amount?.forEach((x, d) => (load[d] -= x));
      }
      for (const sk of skills) if (!vskills.has(sk)) out.push(`${where}: lacks skill ${sk} for ${s.type} ${s.id}`);
      const tl = task.location_index!;
      const tr = loc === undefined ? 0 : m[loc][tl];
      travel += tr;
      const arrival = Number.isFinite(t) ? t + tr : s.arrival;
      if (arrival !== s.arrival) out.push(`${where}: ${s.type} ${s.id} arrival ${s.arrival}, recomputed ${arrival}`);
      if (!Number.isFinite(t) && arrival < tw[0]) out.push(`${where}: first arrival ${arrival} before its window`);
      if (s.waiting_time < 0) out.push(`${where}: negative waiting at ${s.type} ${s.id}`);
      const start = arrival + s.waiting_time;
      if (!inWindows(task.time_windows, start))
        out.push(
          `${where}: ${s.type} ${s.id} starts at ${start}, outside its windows ${JSON.stringify(task.time_windows)}`,
        );
      const setup = loc === tl ? 0 : (task.setup ?? 0);
      if (s.setup !== setup) out.push(`${where}: ${s.type} ${s.id} setup ${s.setup}, expected ${setup}`);
      if (s.service !== (task.service ?? 0)) out.push(`${where}: ${s.type} ${s.id} service ${s.service}`);
      if (s.duration !== travel) out.push(`${where}: ${s.type} ${s.id} duration ${s.duration}, recomputed ${travel}`);
      if (dims > 0 && s.load && s.load.join() !== load.join())
        out.push(`${where}: ${s.type} ${s.id} load ${s.load.join()}, recomputed ${load.join()}`);
      checkLoad(`${s.type} ${s.id}`);
      waiting += s.waiting_time;
      service += task.service ?? 0;
      t = start + setup + (task.service ?? 0);
      loc = tl;
    }
    if (v.end_index !== undefined && steps[steps.length - 1]?.type !== 'end') out.push(`${where}: no end step`);
    if (v.end_index === undefined && Number.isFinite(t) && t > tw[1])
      out.push(`${where}: finishes at ${t}, after its window ${tw[1]}`);
    for (const b of v.breaks ?? []) if (!breaksSeen.has(b.id)) out.push(`${where}: break ${b.id} missing`);
    if (v.max_tasks !== undefined && tasks > v.max_tasks)
      out.push(`${where}: ${tasks} tasks over max_tasks ${v.max_tasks}`);
    if (v.max_travel_time !== undefined && travel > v.max_travel_time)
      out.push(`${where}: travel ${travel} over max_travel_time ${v.max_travel_time}`);
    if (route.duration !== travel) out.push(`${where}: duration ${route.duration}, recomputed ${travel}`);
    if (route.cost !== travel) out.push(`${where}: cost ${route.cost}, recomputed ${travel}`);
    if (route.service !== service) out.push(`${where}: service ${route.service}, recomputed ${service}`);
    if (route.waiting_time !== waiting) out.push(`${where}: waiting ${route.waiting_time}, recomputed ${waiting}`);
    totals = {
      cost: totals.cost + route.cost,
      duration: totals.duration + route.duration,
      service: totals.service + route.service,
      waiting: totals.waiting + route.waiting_time,
    };
  }
  // Pickups whose delivery is elsewhere (or missing).
  for (const sh of problem.shipments ?? []) {
    const p = seen.has(`pickup ${sh.pickup.id}`);
    const d = seen.has(`delivery ${sh.delivery.id}`);
    if (p !== d) out.push(`shipment ${sh.pickup.id}/${sh.delivery.id}: only one half served`);
  }
  for (const u of solution.unassigned) mark(`${u.type} ${u.id}`, 'unassigned');
  const expected = (problem.jobs?.length ?? 0) + 2 * (problem.shipments?.length ?? 0);
  if (seen.size !== expected) out.push(`${seen.size} tasks served or unassigned, the problem has ${expected}`);
  const s = solution.summary;
  if (s.routes !== solution.routes.length) out.push(`summary.routes ${s.routes} ≠ ${solution.routes.length}`);
  if (s.unassigned !== solution.unassigned.length) out.push(`summary.unassigned ${s.unassigned}`);
  if (s.cost !== totals.cost) out.push(`summary.cost ${s.cost} ≠ ${totals.cost}`);
  if (s.duration !== totals.duration) out.push(`summary.duration ${s.duration} ≠ ${totals.duration}`);
  if (s.service !== totals.service) out.push(`summary.service ${s.service} ≠ ${totals.service}`);
  if (s.waiting_time !== totals.waiting) out.push(`summary.waiting_time ${s.waiting_time} ≠ ${totals.waiting}`);
  return out;
}
