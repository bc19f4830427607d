// The solver against an independent checker (test/support/vrp-checker.ts): random instances with
// every constraint VROOM's API has here (windows, vehicle windows, capacities in two dimensions,
// shipments, skills, priorities, breaks, max_tasks, max_travel_time, setup, optional start/end,
// matrices without the triangle inequality), solved with an iteration budget; every answer must pass
// the checker, and the same seed and budget must give the same plan.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { solve } from '../src/modules/optimizer/solver/solver.js';
import { mulberry32 } from '../src/modules/optimizer/solver/rng.js';
import { toSolution, toSolverProblem, type VroomProblem, type VroomSolution } from '../src/modules/optimizer/vroom.js';
import { checkSolution } from './support/vrp-checker.js';

function run(p: VroomProblem, seed: number, maxIterations: number): VroomSolution {
  const sp = toSolverProblem(p);
  return toSolution(p, sp, solve(sp, { seed, maxIterations }));
}

/** A random instance of at most 30 tasks, from a seed. */
function instance(seed: number): { problem: VroomProblem; iterations: number } {
  const r = mulberry32(seed);
  const int = (a: number, b: number) => a + Math.floor(r() * (b - a + 1));
  const chance = (p: number) => r() < p;
  const nLoc = int(2, 16);
  const xy = Array.from({ length: nLoc }, () => [int(0, 100), int(0, 100)]);
  const skewed = chance(0.25);
  const durations = xy.map((a, i) =>
    xy.map((b, j) =>
      i === j ? 0 : Math.round(10 * Math.hypot(a[0] - b[0], a[1] - b[1])) + (skewed ? int(0, 300) : 0),
    ),
  );
  const dims = int(0, 2);
  const amount = (max: number) => Array.from({ length: dims }, () => int(0, max));
  const skillsOf = () => [1, 2, 3].filter(() => chance(0.15));
  const windows = (): [number, number][] | undefined => {
    if (chance(0.3)) return undefined;
    return Array.from({ length: int(1, 3) }, () => {
      const a = int(0, 3000);
      return [a, a + int(0, 1200)] as [number, number];
    });
  };
  const nShip = int(0, 5);
  const nJobs = int(0, 30 - 2 * nShip);
  const problem: VroomProblem = {
    vehicles: Array.from({ length: int(1, 4) }, (_, i) => {
      const hasStart = chance(0.8);
      const a = chance(0.5) ? int(0, 500) : 0;
      return {
        id: 100 + i,
        ...(hasStart ? { start_index: int(0, nLoc - 1) } : {}),
        ...(!hasStart || chance(0.7) ? { end_index: int(0, nLoc - 1) } : {}),
        ...(dims > 0 ? { capacity: Array.from({ length: dims }, () => int(0, 40)) } : {}),
        ...(chance(0.5) ? { skills: [1, 2, 3].filter(() => chance(0.6)) } : {}),
        ...(chance(0.6) ? { time_window: [a, a + int(500, 5000)] as [number, number] } : {}),
        ...(chance(0.3)
          ? {
              breaks: Array.from({ length: int(1, 2) }, (_, k) => ({
                id: k + 1,
                service: int(0, 200),
                ...(chance(0.8) ? { time_windows: [[int(0, 2000), int(2000, 6000)] as [number, number]] } : {}),
              })),
            }
          : {}),
        ...(chance(0.3) ? { max_tasks: int(1, 10) } : {}),
        ...(chance(0.3) ? { max_travel_time: int(200, 4000) } : {}),
      };
    }),
    jobs: Array.from({ length: nJobs }, (_, i) => ({
      id: i + 1,
      location_index: int(0, nLoc - 1),
      ...(chance(0.3) ? { setup: int(0, 100) } : {}),
      ...(chance(0.7) ? { service: int(0, 300) } : {}),
      ...(dims > 0 && chance(0.7) ? { delivery: amount(15) } : {}),
      ...(dims > 0 && chance(0.5) ? { pickup: amount(15) } : {}),
      ...(chance(0.3) ? { skills: skillsOf() } : {}),
      ...(chance(0.3) ? { priority: int(0, 100) } : {}),
      ...(() => {
        const w = windows();
        return w ? { time_windows: w } : {};
      })(),
    })),
    shipments: Array.from({ length: nShip }, (_, i) => {
      const step = (id: number) => {
        const w = windows();
        return {
          id,
          location_index: int(0, nLoc - 1),
          ...(chance(0.7) ? { service: int(0, 300) } : {}),
          ...(chance(0.3) ? { setup: int(0, 100) } : {}),
          ...(w ? { time_windows: w } : {}),
        };
      };
      return {
        pickup: step(1000 + i),
        delivery: step(2000 + i),
        ...(dims > 0 ? { amount: amount(20) } : {}),
        ...(chance(0.3) ? { skills: skillsOf() } : {}),
        ...(chance(0.3) ? { priority: int(0, 100) } : {}),
      };
    }),
    matrices: { car: { durations } },
  };
  return { problem, iterations: int(5, 40) };
}

const RUNS = Number(process.env.OPTIMIZER_PROPERTY_RUNS ?? 2000);

test(`${RUNS} random instances: every solution passes the checker; the same seed gives the same plan`, () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.integer({ min: 0, max: 1000 }), (s, seed) => {
      const { problem, iterations } = instance(s);
      const a = run(problem, seed, iterations);
      assert.deepEqual(checkSolution(problem, a), [], `instance ${s}, seed ${seed}`);
      if (s % 4 === 0) assert.deepEqual(run(problem, seed, iterations), a, `instance ${s}: another plan`);
    }),
    { numRuns: RUNS, seed: 45 },
  );
});

test('the checker catches what it is for (a late arrival, an overload, a delivery before its pickup)', () => {
  const problem: VroomProblem = {
    vehicles: [{ id: 1, start_index: 0, end_index: 0, capacity: [5] }],
    jobs: [{ id: 1, location_index: 1, delivery: [3], time_windows: [[0, 100]] }],
    shipments: [{ pickup: { id: 7, location_index: 1 }, delivery: { id: 8, location_index: 2 }, amount: [2] }],
    matrices: {
      car: {
        durations: [
          [0, 50, 60],
          [50, 0, 20],
          [60, 20, 0],
        ],
      },
    },
  };
  const good = run(problem, 1, 50);
  assert.deepEqual(checkSolution(problem, good), []);
  assert.equal(good.summary.unassigned, 0);
  const late = structuredClone(good);
  const job = late.routes[0].steps.find((s) => s.type === 'job')!;
  job.waiting_time += 200;
  assert.ok(checkSolution(problem, late).some((m) => m.includes('outside its windows')));
  const heavy = structuredClone(problem);
  heavy.jobs![0].delivery = [4];
  assert.ok(checkSolution(heavy, good).some((m) => m.includes('over capacity')));
  const swapped = structuredClone(good);
  const steps = swapped.routes[0].steps;
  const pi = steps.findIndex((s) => s.type === 'pickup');
  const di = steps.findIndex((s) => s.type === 'delivery');
  [steps[pi], steps[di]] = [steps[di], steps[pi]];
  assert.ok(checkSolution(problem, swapped).some((m) => m.includes('before (or without) its pickup')));
});

test("VROOM's three examples: every task served, valid by the checker, cost within 5 % of VROOM's", () => {
  for (const n of [1, 2, 3]) {
    const dir = new URL('./fixtures/vroom/', import.meta.url);
    const problem = JSON.parse(readFileSync(new URL(`example_${n}.json`, dir), 'utf8')) as VroomProblem;
    const theirs = JSON.parse(readFileSync(new URL(`example_${n}_sol.json`, dir), 'utf8')) as VroomSolution;
    if (!problem.matrices) continue; // example without a matrix: the HTTP test covers it
    const ours = run(problem, 1, 500);
    assert.deepEqual(checkSolution(problem, ours), [], `example ${n}`);
    assert.equal(ours.summary.unassigned, theirs.summary.unassigned, `example ${n}`);
    assert.ok(
      ours.summary.cost <= theirs.summary.cost * 1.05,
      `example ${n}: ${ours.summary.cost} vs ${theirs.summary.cost}`,
    );
  }
});
