// Construction and repair: greedy insertion with blinks of jobs and shipment pairs, and the solution
// bookkeeping (empty solution, removal, clone) the ruin-and-recreate loop in solver.ts works on.
import { INF, RouteModel, earliestStart, type Route, type Solution } from './routes.js';

/** Insertion (recreate) and the solution operations on top of RouteModel's routes. */
export class Insertion extends RouteModel {
  // ---- insertion ----

  /** Best (cost delta, position) to insert job x in route r, or undefined. */
  protected bestJob(r: Route, x: number, blink: number): { delta: number; i: number } | undefined {
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
  protected bestPair(
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

  protected emptySolution(): Solution {
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
  protected blank(v: number, seq: number[]): Route {
    const z = new Float64Array(0);
    return { v, seq, tasks: 0, hasBreaks: true, cost: 0, loc: [], dep: [], ld: [], load: z, fwd: z, bwd: z };
  }

  protected unassignedRequests(s: Solution): number[] {
    const out: number[] = [];
    this.requests.forEach((req, k) => {
      if (s.where[req[0]] < 0) out.push(k);
    });
    return out;
  }

  /** Inserts the given requests greedily, in the order given. */
  protected recreate(s: Solution, reqs: number[], blink: number): void {
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
  protected remove(s: Solution, tasks: number[]): number[] {
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

  protected clone(s: Solution): Solution {
    return { routes: s.routes.slice(), where: s.where.slice(), cost: s.cost, penalty: s.penalty };
  }
}
