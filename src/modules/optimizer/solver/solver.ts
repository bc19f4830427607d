// The route optimizer: ruin and recreate (SISR-style string removal, random removal, greedy
// insertion with blinks) under simulated annealing, with slack-based O(1) time-window checks.
// Pure code on arrays: no I/O, no clock (the caller passes now()), randomness only from the seed.
//
// Times: a route leaves its start at the vehicle's window start; a task's service starts at the
// earliest instant of one of its windows at or after the arrival (waiting allowed), lasts
// setup + service (setup only when the previous location differs), and the route must reach its end
// by the vehicle's window end. A break is a step at the previous location (no travel into it).
// Loads: a job's delivery is on board from the start to the job, its pickup from the job to the end;
// a shipment's amount from its pickup to its delivery (same vehicle, pickup first).
import type { Plan, Problem, SolveOptions } from './model.js';
import { INF, type Solution } from './routes.js';
import { Insertion } from './insertion.js';

export function solve(problem: Problem, options: SolveOptions): Plan {
  // The time limit covers the whole solve, the preparation (neighbour lists) and construction included.
  const startedAt = options.now ? options.now() : 0;
  return new Solver(problem, options).run(startedAt);
}

class Solver extends Insertion {
  // ---- ruin ----

  private ruin(s: Solution): void {
    const assigned: number[] = [];
    for (let t = 0; t < this.T; t++) if (s.where[t] >= 0) assigned.push(t);
    if (assigned.length === 0) return;
    if (this.rand() < 0.1) {
      // Random removal.
      const count = 1 + Math.floor(this.rand() * Math.min(assigned.length, 15));
      const picked: number[] = [];
      for (let c = 0; c < count; c++) picked.push(assigned[Math.floor(this.rand() * assigned.length)]);
      this.remove(s, picked);
      return;
    }
    // SISR string removal (Christiaens & Vanden Berghe, 2020): c̄ = 10, L_max = 10.
    const used = s.routes.filter((r) => r.tasks > 0).length;
    const avgTasks = assigned.length / Math.max(1, used);
    const lsMax = Math.min(10, avgTasks);
    const ksMax = (4 * 10) / (1 + lsMax) - 1;
    const ks = Math.floor(this.rand() * ksMax) + 1;
    const seed = assigned[Math.floor(this.rand() * assigned.length)];
    const ruined = new Set<number>();
    const toRemove: number[] = [];
    const visit = (c: number) => {
      const v = s.where[c];
      if (v < 0 || ruined.has(v)) return;
      ruined.add(v);
      const r = s.routes[v];
      const taskPos: number[] = [];
      r.seq.forEach((x, k) => {
        if (x < this.T) taskPos.push(k);
      });
      const lMax = Math.min(taskPos.length, lsMax);
      const l = Math.floor(this.rand() * lMax) + 1;
      const at = taskPos.findIndex((k) => r.seq[k] === c);
      // A window of l tasks containing c, placed at random.
      const lo = Math.max(0, at - l + 1);
      const hi = Math.min(at, taskPos.length - l);
      const from = lo + Math.floor(this.rand() * (hi - lo + 1));
      if (l >= 3 && this.rand() < 0.5) {
        // Split string: keep m tasks in the middle of a longer string.
        let m = 1;
        while (l + m < taskPos.length && this.rand() < 0.5) m++;
        const span = Math.min(taskPos.length - from, l + m);
        const keepAt = from + Math.floor(this.rand() * Math.max(1, span - m));
        for (let q = from; q < from + span; q++) if (q < keepAt || q >= keepAt + m) toRemove.push(r.seq[taskPos[q]]);
      } else for (let q = from; q < from + l; q++) toRemove.push(r.seq[taskPos[q]]);
    };
    visit(seed);
    const nb = this.neighbors[seed];
    for (let q = 0; q < nb.length && ruined.size < ks; q++) visit(nb[q]);
    this.remove(s, toRemove);
  }

  private order(reqs: number[]): number[] {
    const pick = this.rand();
    const key = new Map<number, number>();
    const first = (k: number) => this.p.tasks[this.requests[k][0]];
    const depot = this.p.vehicles[0]?.start ?? -1;
    if (pick < 0.4) for (const k of reqs) key.set(k, this.rand());
    else if (pick < 0.7) {
      for (const k of reqs) {
        let demand = 0;
        for (const t of this.requests[k])
          for (let d = 0; d < this.D; d++)
            demand += this.deliv[t * this.D + d] + this.pick[t * this.D + d] + this.amt[t * this.D + d];
        key.set(k, -demand);
      }
    } else if (pick < 0.9) for (const k of reqs) key.set(k, -this.tt(depot, first(k).loc));
    else if (pick < 0.95) for (const k of reqs) key.set(k, this.tt(depot, first(k).loc));
    else for (const k of reqs) key.set(k, first(k).windows.length ? first(k).windows[0][1] : INF);
    return reqs.slice().sort((a, b) => {
      const pa = first(a).priority;
      const pb = first(b).priority;
      return pb - pa || key.get(a)! - key.get(b)! || a - b;
    });
  }

  // ---- the run ----

  run(t0: number): Plan {
    const { maxIterations, timeLimitMs, now } = this.options;
    const byIterations = maxIterations !== undefined || !now || timeLimitMs === undefined;
    const iterLimit = maxIterations ?? (byIterations ? 1000 : INF);
    let current = this.emptySolution();
    // Construction: tightest windows first, then by distance from the depot.
    const all = this.unassignedRequests(current);
    all.sort((a, b) => {
      const pa = this.p.tasks[this.requests[a][0]];
      const pb = this.p.tasks[this.requests[b][0]];
      return pb.priority - pa.priority || (pa.windows[0]?.[1] ?? INF) - (pb.windows[0]?.[1] ?? INF) || a - b;
    });
    this.recreate(current, all, 0);
    let best = this.clone(current);
    const perTask = current.cost / Math.max(1, this.T);
    const temp0 = Math.max(1e-9, 5 * perTask);
    const tempF = Math.max(1e-10, 0.02 * perTask);
    let it = 0;
    if (this.T > 0 && this.enabled.some((e) => e)) {
      for (;;) {
        let progress: number;
        if (byIterations) {
          if (it >= iterLimit) break;
          progress = it / iterLimit;
        } else {
          const elapsed = now!() - t0;
          if (elapsed >= timeLimitMs!) break;
          progress = elapsed / timeLimitMs!;
        }
        it++;
        const temp = temp0 * Math.pow(tempF / temp0, progress);
        const cand = this.clone(current);
        this.ruin(cand);
        this.recreate(cand, this.order(this.unassignedRequests(cand)), 0.01);
        const threshold = current.cost - temp * Math.log(this.rand());
        if (cand.penalty < current.penalty || (cand.penalty === current.penalty && cand.cost < threshold)) {
          current = cand;
          if (current.penalty < best.penalty || (current.penalty === best.penalty && current.cost < best.cost))
            best = this.clone(current);
        }
      }
    }
    return {
      routes: best.routes.map((r) => r.seq.slice()),
      unassigned: Array.from({ length: this.T }, (_, t) => t).filter((t) => best.where[t] < 0),
      cost: best.cost,
      iterations: it,
    };
  }
}
