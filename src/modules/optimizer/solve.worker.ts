// The solver's thread (node:worker_threads): it takes one problem at a time from the service, solves it
// with the thread's own clock for the time limit, and answers the VROOM solution.
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { solve } from './solver/solver.js';
import type { Problem } from './solver/model.js';
import { toSolution, type VroomProblem } from './vroom.js';

export interface SolveRequest {
  id: number;
  vroom: VroomProblem;
  problem: Problem;
  withIndex: boolean;
  seed: number;
  maxIterations?: number;
  timeLimitMs: number;
}

parentPort!.on('message', (req: SolveRequest) => {
  try {
    const plan = solve(req.problem, {
      seed: req.seed,
      maxIterations: req.maxIterations,
      timeLimitMs: req.timeLimitMs,
      now: () => performance.now(),
    });
    const solution = toSolution(req.vroom, req.problem, plan, req.withIndex);
    parentPort!.postMessage({ id: req.id, solution, iterations: plan.iterations });
  } catch (err) {
    parentPort!.postMessage({ id: req.id, error: err instanceof Error ? err.message : String(err) });
  }
});
