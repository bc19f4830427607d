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
import { breakBases, type Plan, type Problem, type SolveOptions } from './model.js';
import { mulberry32 } from './rng.js';

const INF = Number.POSITIVE_INFINITY;
type Windows = [number, number][];

/** The earliest service start at or after `t` inside one of `w` (Infinity: none). */
function earliestStart(w: Windows, t: number): number {
  if (w.length === 0) return t;
  for (let i = 0; i < w.length; i++) if (t <= w[i][1]) return t < w[i][0] ? w[i][0] : t;
  return INF;
}

/** The latest arrival whose earliest service start is at most `l` (-Infinity: none). */
function latestArrival(w: Windows, l: number): number {
  if (w.length === 0) return l;
  for (let i = w.length - 1; i >= 0; i--) if (w[i][0] <= l) return w[i][1] < l ? w[i][1] : l;
  return -INF;
}

/** One vehicle's route and the values computed along it. */
interface Route {
  v: number;
  seq: number[];
  /** Number of tasks (breaks excluded). */
  tasks: number;
  hasBreaks: boolean;
  cost: number;
  /** Per position: location, departure, latest departure keeping the rest feasible. */
  loc: number[];
  dep: number[];
  ld: number[];
  /** (seq.length + 1) × dims: load at the start (row 0) and after each position (row k + 1). */
  load: Float64Array;
  /** Running maxima of `load` from the front (fwd) and from the back (bwd). */
  fwd: Float64Array;
  bwd: Float64Array;
}

interface Solution {
  routes: Route[];
  /** Task → vehicle, -1 unassigned. */
  where: Int32Array;
  cost: number;
  penalty: number;
}

export function solve(problem: Problem, options: SolveOptions): Plan {
  // The time limit covers the whole solve, the preparation (neighbour lists) and construction included.
  const startedAt = options.now ? options.now() : 0;
  return new Solver(problem, options).run(startedAt);
}

class Solver {
  private readonly rand: () => number;
  private readonly n: number;
  private readonly dur: Float64Array;
  private readonly D: number;
  private readonly T: number;
  private readonly deliv: Float64Array;
  private readonly pick: Float64Array;
  private readonly amt: Float64Array;
  private readonly cap: Float64Array;
  private readonly compat: Uint8Array;
  private readonly bases: number[];
  private readonly breakOf: { v: number; k: number }[] = [];
  private readonly enabled: boolean[] = [];
  /** Requests: a job is [t], a shipment [pickup, delivery]. */
  private readonly requests: number[][] = [];
  private readonly reqOf: Int32Array;
  private readonly reqPenalty: number[] = [];
  private readonly neighbors: Int32Array[] = [];

  constructor(
    private readonly p: Problem,
    private readonly options: SolveOptions,
  ) {
    this.rand = mulberry32(options.seed);
    this.n = p.n;
    this.dur = p.durations;
    const D = (this.D = p.dims);
    const T = (this.T = p.tasks.length);
    this.deliv = new Float64Array(T * D);
    this.pick = new Float64Array(T * D);
    this.amt = new Float64Array(T * D);
    p.tasks.forEach((t, i) => {
      for (let d = 0; d < D; d++) {
        this.deliv[i * D + d] = t.delivery[d] ?? 0;
        this.pick[i * D + d] = t.pickup[d] ?? 0;
        this.amt[i * D + d] = t.amount[d] ?? 0;
      }
    });
    const V = p.vehicles.length;
    this.cap = new Float64Array(V * D);
    p.vehicles.forEach((v, i) => {
      for (let d = 0; d < D; d++) this.cap[i * D + d] = v.capacity ? (v.capacity[d] ?? 0) : INF;
    });
    this.bases = breakBases(p);
    p.vehicles.forEach((v, i) => v.breaks.forEach((_, k) => this.breakOf.push({ v: i, k })));
    this.reqOf = new Int32Array(T).fill(-1);
    for (let t = 0; t < T; t++) {
      const task = p.tasks[t];
      if (task.kind === 2) continue;
      const req = task.kind === 0 ? [t] : [t, task.partner];
      for (const x of req) this.reqOf[x] = this.requests.length;
      this.requests.push(req);
      this.reqPenalty.push(req.length * (task.priority * (T + 1) + 1));
    }
    this.compat = new Uint8Array(V * T);
    p.vehicles.forEach((v, vi) => {
      const skills = new Set(v.skills);
      for (let t = 0; t < T; t++) {
        const task = p.tasks[t];
        let ok = task.skills.every((s) => skills.has(s));
        for (let d = 0; d < D && ok; d++) {
          const need = Math.max(this.deliv[t * D + d], this.pick[t * D + d], this.amt[t * D + d]);
          if (need > this.cap[vi * D + d]) ok = false;
        }
        this.compat[vi * T + t] = ok ? 1 : 0;
      }
    });
    // Neighbours by travel both ways, nearest first (string removal walks them).
    const K = Math.min(T - 1, 100);
    const all = Array.from({ length: T }, (_, i) => i);
    for (let a = 0; a < T; a++) {
      const la = p.tasks[a].loc;
      const dist = (b: number) => this.tt(la, p.tasks[b].loc) + this.tt(p.tasks[b].loc, la);
      const others = all.filter((b) => b !== a);
      const keyed = others.map((b) => [dist(b), b] as const);
      keyed.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      this.neighbors.push(Int32Array.from(keyed.slice(0, K).map((x) => x[1])));
    }
  }

  private tt(a: number, b: number): number {
    return a < 0 || b < 0 ? 0 : this.dur[a * this.n + b];
  }

  private isBreak(node: number): boolean {
    return node >= this.T;
  }

  // ---- routes ----

  /** Computes a route from its sequence; undefined when it breaks a constraint. */
  private build(v: number, seq: number[]): Route | undefined {
    const veh = this.p.vehicles[v];
    const D = this.D;
    const m = seq.length;
    const loc: number[] = new Array<number>(m);
    const dep: number[] = new Array<number>(m);
    const ld: number[] = new Array<number>(m);
    let here = veh.start;
    let t = veh.window[0];
    let cost = 0;
    let tasks = 0;
    let hasBreaks = false;
    for (let k = 0; k < m; k++) {
      const node = seq[k];
      if (node >= this.T) {
        hasBreaks = true;
        const b = this.breakOf[node - this.T];
        const br = this.p.vehicles[b.v].breaks[b.k];
        const s = earliestStart(br.windows, t);
        if (s === INF) return undefined;
        t = s + br.service;
        loc[k] = here;
        dep[k] = t;
        continue;
      }
      const task = this.p.tasks[node];
      const tr = this.tt(here, task.loc);
      cost += tr;
      const s = earliestStart(task.windows, t + tr);
      if (s === INF) return undefined;
      t = s + task.service + (here === task.loc ? 0 : task.setup);
      here = task.loc;
      loc[k] = here;
      dep[k] = t;
      tasks++;
    }
    const back = this.tt(here, veh.end);
    cost += back;
    if (t + back > veh.window[1]) return undefined;
    if (tasks > veh.maxTasks || cost > veh.maxTravelTime) return undefined;
    // Loads.
    const load = new Float64Array((m + 1) * D);
    const fwd = new Float64Array((m + 1) * D);
    const bwd = new Float64Array((m + 1) * D);
    if (D > 0) {
      for (let k = 0; k < m; k++) {
        const node = seq[k];
        if (node < this.T && this.p.tasks[node].kind === 0)
          for (let d = 0; d < D; d++) load[d] += this.deliv[node * D + d];
      }
      for (let k = 0; k < m; k++) {
        const node = seq[k];
        for (let d = 0; d < D; d++) {
          let x = load[k * D + d];
          if (node < this.T) {
            const kind = this.p.tasks[node].kind;
            if (kind === 0) x += this.pick[node * D + d] - this.deliv[node * D + d];
            else if (kind === 1) x += this.amt[node * D + d];
            else x -= this.amt[node * D + d];
          }
          load[(k + 1) * D + d] = x;
        }
      }
      for (let k = 0; k <= m; k++)
        for (let d = 0; d < D; d++) {
          const x = load[k * D + d];
          if (x > this.cap[v * D + d]) return undefined;
          fwd[k * D + d] = k === 0 ? x : Math.max(fwd[(k - 1) * D + d], x);
        }
      for (let k = m; k >= 0; k--)
        for (let d = 0; d < D; d++) {
          const x = load[k * D + d];
          bwd[k * D + d] = k === m ? x : Math.max(bwd[(k + 1) * D + d], x);
        }
    }
    // Latest departures (used by the O(1) checks on routes without breaks).
    if (!hasBreaks) {
      let next = veh.window[1] - this.tt(m > 0 ? loc[m - 1] : veh.start, veh.end);
      for (let k = m - 1; k >= 0; k--) {
        ld[k] = next;
        const task = this.p.tasks[seq[k]];
        const prev = k > 0 ? loc[k - 1] : veh.start;
        const action = task.service + (prev === task.loc ? 0 : task.setup);
        next = latestArrival(task.windows, next - action) - this.tt(prev, task.loc);
      }
    }
    return { v, seq, tasks, hasBreaks, cost, loc, dep, ld, load, fwd, bwd };
  }

  /** Travel cost of a sequence if feasible, else Infinity (routes with breaks). */
  private costOf(v: number, seq: number[]): number {
    return this.build(v, seq)?.cost ?? INF;
  }

  // ---- insertion ----

  /** Best (cost delta, position) to insert job x in route r, or undefined. */
  private bestJob(r: Route, x: number, blink: number): { delta: number; i: number } | undefined {
    const veh = this.p.vehicles[r.v];
    if (r.tasks + 1 > veh.maxTasks) return undefined;
    const D = this.D;
    const v = r.v;
    const m = r.seq.length;
    const task = this.p.tasks[x];
    const xl = task.loc;
    let best: { delta: number; i: number } | undefined;
    for (let i = 0; i <= m; i++) {
      if (blink > 0 && this.rand() < blink) continue;
      // Capacity: the delivery rides from the start to x, the pickup from x to the end.
      let ok = true;
      for (let d = 0; d < D; d++) {
        if (r.fwd[i * D + d] + this.deliv[x * D + d] > this.cap[v * D + d]) {
          ok = false;
          break;
        }
        if (r.bwd[i * D + d] + this.pick[x * D + d] > this.cap[v * D + d]) {
          ok = false;
          break;
        }
      }
      if (!ok) {
        // The prefix maximum only grows: no later position fits the delivery either.
        let prefixFull = false;
        for (let d = 0; d < D; d++)
          if (r.fwd[i * D + d] + this.deliv[x * D + d] > this.cap[v * D + d]) prefixFull = true;
        if (prefixFull) break;
        continue;
      }
      if (r.hasBreaks) {
        const seq = r.seq.slice();
        seq.splice(i, 0, x);
        const c = this.costOf(v, seq);
        if (c < INF && (!best || c - r.cost < best.delta)) best = { delta: c - r.cost, i };
        continue;
      }
      const prevLoc = i > 0 ? r.loc[i - 1] : veh.start;
      const prevDep = i > 0 ? r.dep[i - 1] : veh.window[0];
      const t1 = this.tt(prevLoc, xl);
      const s = earliestStart(task.windows, prevDep + t1);
      if (s === INF) continue;
      const dx = s + task.service + (prevLoc === xl ? 0 : task.setup);
      let t2: number;
      let nextLoc: number;
      if (i < m) {
        nextLoc = r.loc[i];
        const q = this.p.tasks[r.seq[i]];
        t2 = this.tt(xl, nextLoc);
        const s2 = earliestStart(q.windows, dx + t2);
        if (s2 === INF || s2 + q.service + (xl === nextLoc ? 0 : q.setup) > r.ld[i]) continue;
      } else {
        nextLoc = veh.end;
        t2 = this.tt(xl, nextLoc);
        if (dx + t2 > veh.window[1]) continue;
      }
      const delta = t1 + t2 - this.tt(prevLoc, nextLoc);
      if (r.cost + delta > veh.maxTravelTime) continue;
      if (!best || delta < best.delta) best = { delta, i };
    }
    return best;
  }

  /** Best (delta, i, j) to insert shipment (p, q): p before position i, q before position j ≥ i. */
  private bestPair(
    r: Route,
    pu: number,
    de: number,
    blink: number,
  ): { delta: number; i: number; j: number } | undefined {
    const veh = this.p.vehicles[r.v];
    if (r.tasks + 2 > veh.maxTasks) return undefined;
    const D = this.D;
    const v = r.v;
    const m = r.seq.length;
    const P = this.p.tasks[pu];
    const Q = this.p.tasks[de];
    let best: { delta: number; i: number; j: number } | undefined;
    if (r.hasBreaks) {
      for (let i = 0; i <= m; i++)
        for (let j = i; j <= m; j++) {
          if (blink > 0 && this.rand() < blink) continue;
          const seq = r.seq.slice();
          seq.splice(j, 0, de);
          seq.splice(i, 0, pu);
          const c = this.costOf(v, seq);
          if (c < INF && (!best || c - r.cost < best.delta)) best = { delta: c - r.cost, i, j };
        }
      return best;
    }
    for (let i = 0; i <= m; i++) {
      if (blink > 0 && this.rand() < blink) continue;
      const prevLoc = i > 0 ? r.loc[i - 1] : veh.start;
      const prevDep = i > 0 ? r.dep[i - 1] : veh.window[0];
      const t1 = this.tt(prevLoc, P.loc);
      const s = earliestStart(P.windows, prevDep + t1);
      if (s === INF) continue;
      let curDep = s + P.service + (prevLoc === P.loc ? 0 : P.setup);
      let curLoc = P.loc;
      // Cost of the route with p inserted, before q goes in.
      const nextI = i < m ? r.loc[i] : veh.end;
      const baseP = t1 + this.tt(P.loc, nextI) - this.tt(prevLoc, nextI);
      for (let j = i; j <= m; j++) {
        // Capacity from p up to (and including) the step before q.
        let fits = true;
        for (let d = 0; d < D; d++) if (r.load[j * D + d] + this.amt[pu * D + d] > this.cap[v * D + d]) fits = false;
        if (!fits) break;
        // Try q right after curLoc.
        const nextLoc = j < m ? r.loc[j] : veh.end;
        const ta = this.tt(curLoc, Q.loc);
        const sq = earliestStart(Q.windows, curDep + ta);
        if (sq !== INF) {
          const dq = sq + Q.service + (curLoc === Q.loc ? 0 : Q.setup);
          const tb = this.tt(Q.loc, nextLoc);
          let ok: boolean;
          if (j < m) {
            const nx = this.p.tasks[r.seq[j]];
            const s2 = earliestStart(nx.windows, dq + tb);
            ok = s2 !== INF && s2 + nx.service + (Q.loc === nextLoc ? 0 : nx.setup) <= r.ld[j];
          } else ok = dq + tb <= veh.window[1];
          if (ok) {
            let delta: number;
            if (j === i) delta = t1 + ta + tb - this.tt(prevLoc, nextLoc);
            else delta = baseP + ta + tb - this.tt(curLoc, nextLoc);
            if (r.cost + delta <= veh.maxTravelTime && (!best || delta < best.delta)) best = { delta, i, j };
          }
        }
        if (j === m) break;
        // Move past the existing step j.
        const node = this.p.tasks[r.seq[j]];
        const a = curDep + this.tt(curLoc, node.loc);
        const sj = earliestStart(node.windows, a);
        if (sj === INF) break;
        const dj = sj + node.service + (curLoc === node.loc ? 0 : node.setup);
        if (dj > r.ld[j]) break;
        curDep = dj;
        curLoc = node.loc;
      }
    }
    return best;
  }

  // ---- solutions ----

  private emptySolution(): Solution {
    const routes: Route[] = [];
    this.p.vehicles.forEach((veh, v) => {
      const seq = veh.breaks
        .map((_, k) => this.bases[v] + k)
        .sort((a, b) => {
          const wa = veh.breaks[a - this.bases[v]].windows[0]?.[0] ?? 0;
          const wb = veh.breaks[b - this.bases[v]].windows[0]?.[0] ?? 0;
          return wa - wb || a - b;
        });
      const r = this.build(v, seq);
      this.enabled.push(r !== undefined);
      routes.push(r ?? this.blank(v, seq));
    });
    const where = new Int32Array(this.T).fill(-1);
    let penalty = 0;
    for (const pen of this.reqPenalty) penalty += pen;
    return { routes, where, cost: routes.reduce((s, r) => s + r.cost, 0), penalty };
  }

  /** A disabled vehicle's route (its breaks alone do not fit its hours): never used. */
  private blank(v: number, seq: number[]): Route {
    const z = new Float64Array(0);
    return { v, seq, tasks: 0, hasBreaks: true, cost: 0, loc: [], dep: [], ld: [], load: z, fwd: z, bwd: z };
  }

  private unassignedRequests(s: Solution): number[] {
    const out: number[] = [];
    this.requests.forEach((req, k) => {
      if (s.where[req[0]] < 0) out.push(k);
    });
    return out;
  }

  /** Inserts the given requests greedily, in the order given. */
  private recreate(s: Solution, reqs: number[], blink: number): void {
    for (const k of reqs) {
      const req = this.requests[k];
      let bestDelta = INF;
      let bestR = -1;
      let bi = 0;
      let bj = 0;
      for (let v = 0; v < s.routes.length; v++) {
        if (!this.enabled[v]) continue;
        if (!this.compat[v * this.T + req[0]] || (req.length > 1 && !this.compat[v * this.T + req[1]])) continue;
        const r = s.routes[v];
        if (req.length === 1) {
          const b = this.bestJob(r, req[0], blink);
          if (b && b.delta < bestDelta) {
            bestDelta = b.delta;
            bestR = v;
            bi = b.i;
          }
        } else {
          const b = this.bestPair(r, req[0], req[1], blink);
          if (b && b.delta < bestDelta) {
            bestDelta = b.delta;
            bestR = v;
            bi = b.i;
            bj = b.j;
          }
        }
      }
      if (bestR < 0) continue;
      const old = s.routes[bestR];
      const seq = old.seq.slice();
      if (req.length === 1) seq.splice(bi, 0, req[0]);
      else {
        seq.splice(bj, 0, req[1]);
        seq.splice(bi, 0, req[0]);
      }
      const built = this.build(bestR, seq);
      if (!built) continue; // cannot happen when the checks above are exact; kept safe
      s.routes[bestR] = built;
      s.cost += built.cost - old.cost;
      for (const t of req) s.where[t] = bestR;
      s.penalty -= this.reqPenalty[k];
    }
  }

  /** Removes requests from routes (both halves of a shipment); a route that would break is kept. */
  private remove(s: Solution, tasks: number[]): number[] {
    const byRoute = new Map<number, Set<number>>();
    for (const t of tasks) {
      const v = s.where[t];
      if (v < 0) continue;
      const set = byRoute.get(v) ?? new Set<number>();
      for (const x of this.requests[this.reqOf[t]]) set.add(x);
      byRoute.set(v, set);
    }
    const removed: number[] = [];
    for (const [v, set] of byRoute) {
      const old = s.routes[v];
      const seq = old.seq.filter((x) => !set.has(x));
      const built = this.build(v, seq);
      if (!built) continue; // a matrix without the triangle inequality can make a shorter route late
      s.routes[v] = built;
      s.cost += built.cost - old.cost;
      for (const x of set) {
        s.where[x] = -1;
        if (this.p.tasks[x].kind !== 2) {
          removed.push(this.reqOf[x]);
          s.penalty += this.reqPenalty[this.reqOf[x]];
        }
      }
    }
    return removed;
  }

  private clone(s: Solution): Solution {
    return { routes: s.routes.slice(), where: s.where.slice(), cost: s.cost, penalty: s.penalty };
  }

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
