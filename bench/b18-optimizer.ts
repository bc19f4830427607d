// B18: the route optimizer through the HTTP API (POST /api/optimizations on a listening app, over a
// socket), every answer checked by the independent checker (test/support/vrp-checker.ts).
//
//   npx tsx bench/b18-optimizer.ts [--only=solomon,lilim,s200,s1000] [--reference]
//
// - Solomon's 56 VRPTW instances at timeLimitMs 2000: every job served; gap = summary.duration / 1000
//   against the `<name>_distance` best known cost (average, worst, per class).
// - Li & Lim's 56 PDPTW instances (100 tasks), fleet capped at the best known vehicle count + 1, 2 s:
//   requests served, vehicles used against the best known, cost gap where the count matches.
// - 200 stops / 20 vehicles with capacities and 2-hour windows (timeLimitMs 1800: the request ≤ 2 s); 1,000 stops / 50 vehicles at
//   25 s (and the same seed + maxIterations twice: the same plan). --reference also runs the 1,000-stop
//   problem directly in the solver for 120 s and compares the costs.
// The load average (os.loadavg) is printed beside the figures: the machine is shared.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { buildTestApp } from '../test/helpers/app.js';
import { createUser } from '../test/helpers/factories.js';
import { checkSolution } from '../test/support/vrp-checker.js';
import { mulberry32 } from '../src/modules/optimizer/solver/rng.js';
import { solve } from '../src/modules/optimizer/solver/solver.js';
import { toSolution, toSolverProblem, type VroomProblem, type VroomSolution } from '../src/modules/optimizer/vroom.js';
import { bks, liLim, liLimNames, solomon, solomonNames } from './b18-data.js';

const args = process.argv.slice(2);
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const wants = (part: string) => !only || only.includes(part);
const reference = args.includes('--reference');

const t = await buildTestApp({ env: { LOG_LEVEL: 'warn', OPTIMIZATION_MAX_ITERATIONS: '100000000' } });
const admin = await createUser(t, { role: 'ADMIN' });
await t.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}/api`;
const load = () => loadavg().map((x) => Number(x.toFixed(2)));

async function optimize(
  problem: VroomProblem,
  options: object,
): Promise<{ solution: VroomSolution; ms: number; bytes: number }> {
  const body = JSON.stringify({ ...problem, options });
  const t0 = performance.now();
  const res = await fetch(`${base}/optimizations`, {
    method: 'POST',
    headers: { ...admin.headers, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 300)}`);
  return { solution: JSON.parse(text) as VroomSolution, ms, bytes: body.length };
}

const round = (x: number, d = 2) => Number(x.toFixed(d));
const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const out: Record<string, unknown> = { loadBefore: load() };

// The first request starts the solver's thread (and, under tsx, compiles its sources): not measured.
await optimize(
  {
    vehicles: [{ id: 1, start_index: 0 }],
    jobs: [{ id: 1, location_index: 1 }],
    matrices: {
      car: {
        durations: [
          [0, 1],
          [1, 0],
        ],
      },
    },
  },
  { maxIterations: 1 },
);

if (wants('solomon')) {
  const best = bks('solomon');
  const rows: { name: string; gap: number; unassigned: number; violations: number; ms: number; routes: number }[] = [];
  for (const name of solomonNames()) {
    const problem = solomon(name);
    const { solution, ms } = await optimize(problem, { timeLimitMs: 2000, seed: 1 });
    const gap = (solution.summary.duration / 1000 / best[`${name}_distance`].best_known_cost - 1) * 100;
    const violations = checkSolution(problem, solution).length;
    rows.push({
      name,
      gap: round(gap),
      unassigned: solution.summary.unassigned,
      violations,
      ms: Math.round(ms),
      routes: solution.summary.routes,
    });
    console.error(
      `${name}: gap ${gap.toFixed(2)} %, unassigned ${solution.summary.unassigned}, violations ${violations}, ${Math.round(ms)} ms`,
    );
  }
  const classes = ['C1', 'C2', 'R1', 'R2', 'RC1', 'RC2'];
  out.solomon = {
    instances: rows.length,
    everyJobServed: rows.every((r) => r.unassigned === 0),
    violations: rows.reduce((s, r) => s + r.violations, 0),
    averageGapPct: round(avg(rows.map((r) => r.gap))),
    worstGapPct: Math.max(...rows.map((r) => r.gap)),
    worst: rows.reduce((a, b) => (b.gap > a.gap ? b : a)).name,
    perClassAverageGapPct: Object.fromEntries(
      classes.map((c) => [c, round(avg(rows.filter((r) => r.name.slice(0, -2) === c).map((r) => r.gap)))]),
    ),
    maxMs: Math.max(...rows.map((r) => r.ms)),
    rows,
    load: load(),
  };
}

if (wants('lilim')) {
  const best = bks('li_lim');
  const rows: {
    name: string;
    served: boolean;
    vehicles: number;
    bestVehicles: number;
    gap: number;
    violations: number;
  }[] = [];
  for (const name of liLimNames()) {
    const b = best[name];
    const problem = liLim(name, b.solved_with_vehicles + 1);
    const { solution } = await optimize(problem, { timeLimitMs: 2000, seed: 1 });
    const gap = (solution.summary.duration / 1000 / b.best_known_cost - 1) * 100;
    const violations = checkSolution(problem, solution).length;
    rows.push({
      name,
      served: solution.summary.unassigned === 0,
      vehicles: solution.summary.routes,
      bestVehicles: b.solved_with_vehicles,
      gap: round(gap),
      violations,
    });
    console.error(
      `${name}: unassigned ${solution.summary.unassigned}, vehicles ${solution.summary.routes}/${b.solved_with_vehicles}, gap ${gap.toFixed(2)} %, violations ${violations}`,
    );
  }
  const matching = rows.filter((r) => r.served && r.vehicles <= r.bestVehicles);
  out.liLim = {
    instances: rows.length,
    allServed: rows.filter((r) => r.served).length,
    vehicleCountMatches: matching.length,
    averageGapPctWhereMatching: round(avg(matching.map((r) => r.gap))),
    violations: rows.reduce((s, r) => s + r.violations, 0),
    rows,
    load: load(),
  };
}

/** n stops, v vehicles, capacities, 2-hour windows over a 10-hour day, a 30 km square at 30 km/h. */
function synthetic(n: number, v: number, seed: number): VroomProblem {
  const r = mulberry32(seed);
  const xy = Array.from({ length: n + 1 }, (_, i) => (i === 0 ? [15000, 15000] : [r() * 30000, r() * 30000]));
  const speed = 30 / 3.6;
  const durations = xy.map((a) => xy.map((b) => Math.round(Math.hypot(a[0] - b[0], a[1] - b[1]) / speed)));
  const day = 10 * 3600;
  return {
    vehicles: Array.from({ length: v }, (_, i) => ({
      id: i + 1,
      start_index: 0,
      end_index: 0,
      capacity: [Math.ceil((n / v) * 1.3) * 2],
      time_window: [0, day + 3600] as [number, number],
    })),
    jobs: Array.from({ length: n }, (_, i) => {
      const start = Math.floor(r() * (day - 2 * 3600));
      return {
        id: i + 1,
        location_index: i + 1,
        service: 120 + Math.floor(r() * 180),
        delivery: [1 + Math.floor(r() * 3)],
        time_windows: [[start, start + 2 * 3600] as [number, number]],
      };
    }),
    matrices: { car: { durations } },
  };
}

if (wants('s200')) {
  const problem = synthetic(200, 20, 200);
  // 1.8 s of solving, so that the whole request (body, checks, thread, answer) stays within 2 s.
  const { solution, ms } = await optimize(problem, { timeLimitMs: 1800, seed: 1 });
  out.stops200 = {
    ms: Math.round(ms),
    unassigned: solution.summary.unassigned,
    routes: solution.summary.routes,
    violations: checkSolution(problem, solution).length,
    duration: solution.summary.duration,
    load: load(),
  };
  console.error('200 stops:', JSON.stringify(out.stops200));
}

if (wants('s1000')) {
  const problem = synthetic(1000, 50, 1000);
  const { solution, ms, bytes } = await optimize(problem, { timeLimitMs: 25000, seed: 1 });
  const row: Record<string, unknown> = {
    bodyBytes: bytes,
    ms: Math.round(ms),
    unassigned: solution.summary.unassigned,
    routes: solution.summary.routes,
    violations: checkSolution(problem, solution).length,
    duration: solution.summary.duration,
    load: load(),
  };
  console.error('1000 stops:', JSON.stringify(row));
  // Same seed and maxIterations, twice: the same plan (no time limit applies then).
  const a = await optimize(problem, { maxIterations: 300, seed: 5 });
  const b = await optimize(problem, { maxIterations: 300, seed: 5 });
  row.sameSeedSamePlan = JSON.stringify(a.solution) === JSON.stringify(b.solution);
  row.maxIterations300Ms = [Math.round(a.ms), Math.round(b.ms)];
  if (reference) {
    const sp = toSolverProblem(problem);
    const plan = solve(sp, { seed: 1, timeLimitMs: 120_000, now: () => performance.now() });
    const ref = toSolution(problem, sp, plan);
    row.reference120s = {
      duration: ref.summary.duration,
      unassigned: ref.summary.unassigned,
      iterations: plan.iterations,
    };
    row.costRatioToReference = round(solution.summary.duration / ref.summary.duration, 4);
  }
  out.stops1000 = row;
  console.error('1000 stops:', JSON.stringify(row));
}

out.loadAfter = load();
console.log(JSON.stringify(out, null, 2));
await t.close();
