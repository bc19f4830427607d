// Route optimization (contract section 25): the body limit of POST /optimizations, the iteration
// cap, and an optional VROOM-compatible server to send problems to instead of the built-in solver.
import type { EnvReader } from './env-reader.js';

export interface OptimizerConfig {
  /** The body limit of POST /optimizations alone (a 1,000-stop matrix is about 7 MB). */
  maxBodyBytes: number;
  /** The most `options.maxIterations` a request may ask for. */
  maxIterations: number;
  /** A VROOM-compatible server (POST the problem, get the solution); undefined: the built-in solver. */
  url: string | undefined;
}

const MB = 1024 * 1024;

export function readOptimizer(r: EnvReader): OptimizerConfig {
  return {
    maxBodyBytes: r.size('OPTIMIZATION_MAX_BODY', '16MB', 1 * MB, 256 * MB),
    maxIterations: r.int('OPTIMIZATION_MAX_ITERATIONS', 5_000, 1, 100_000_000),
    url: r.url('OPTIMIZER_URL', ['http:', 'https:']),
  };
}
