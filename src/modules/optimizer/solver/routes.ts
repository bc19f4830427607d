// The solver's state and its routes: the problem as flat arrays, neighbour lists, and a route built from
// its sequence with slack-based O(1) time-window and load checks (see solver.ts for the time and load rules).
import { breakBases, type Problem, type SolveOptions } from './model.js';
import { mulberry32 } from './rng.js';

export const INF = Number.POSITIVE_INFINITY;
type Windows = [number, number][];

/** The earliest service start at or after `t` inside one of `w` (Infinity: none). */
export function earliestStart(w: Windows, t: number): number {
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
export interface Route {
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

export interface Solution {
  routes: Route[];
  /** Task → vehicle, -1 unassigned. */
  where: Int32Array;
  cost: number;
  penalty: number;
}

/** The problem as flat arrays, and routes built and costed from their sequences. */
export class RouteModel {
  protected readonly rand: () => number;
  protected readonly n: number;
  protected readonly dur: Float64Array;
  protected readonly D: number;
  protected readonly T: number;
  protected readonly deliv: Float64Array;
  protected readonly pick: Float64Array;
  protected readonly amt: Float64Array;
  protected readonly cap: Float64Array;
  protected readonly compat: Uint8Array;
  protected readonly bases: number[];
  protected readonly breakOf: { v: number; k: number }[] = [];
  protected readonly enabled: boolean[] = [];
  /** Requests: a job is [t], a shipment [pickup, delivery]. */
  protected readonly requests: number[][] = [];
  protected readonly reqOf: Int32Array;
  protected readonly reqPenalty: number[] = [];
  protected readonly neighbors: Int32Array[] = [];

  constructor(
    protected readonly p: Problem,
    protected readonly options: SolveOptions,
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

  protected tt(a: number, b: number): number {
    return a < 0 || b < 0 ? 0 : this.dur[a * this.n + b];
  }

  protected isBreak(node: number): boolean {
    return node >= this.T;
  }

  // ---- routes ----

  /** Computes a route from its sequence; undefined when it breaks a constraint. */
  protected build(v: number, seq: number[]): Route | undefined {
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
  protected costOf(v: number, seq: number[]): number {
    return this.build(v, seq)?.cost ?? INF;
  }
}
