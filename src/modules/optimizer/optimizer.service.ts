// POST /optimizations: reads a VROOM problem, fills its matrix from the MatrixProvider when it has
// none, and solves it on a worker thread (one problem at a time, the others queued: the event loop
// stays free) — or, with OPTIMIZER_URL, sends the same JSON to a VROOM-compatible server.
import { Worker } from 'node:worker_threads';
import { AppError, badRequest } from '../../shared/errors.js';
import type { SolveRequest } from './solve.worker.js';
import {
  collectLocations,
  indexLocations,
  ProblemError,
  readProblem,
  toSolverProblem,
  type MatrixProvider,
  type VroomProblem,
  type VroomSolution,
} from './vroom.js';

export interface OptimizeOptions {
  timeLimitMs?: number;
  maxIterations?: number;
  seed?: number;
}

export const DEFAULT_TIME_LIMIT_MS = 2000;
export const MAX_TIME_LIMIT_MS = 30_000;
/** The largest problem taken: tasks (jobs + 2 × shipments) and vehicles. */
export const LIMITS = { maxTasks: 2000, maxVehicles: 500 };
/** Problems waiting for the thread beyond this: 503 OPTIMIZER_BUSY. */
const MAX_QUEUE = 8;

interface Pending {
  resolve: (s: VroomSolution) => void;
  reject: (e: Error) => void;
}

export class OptimizerService {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private readonly queue: { req: SolveRequest; transfer: ArrayBuffer[]; pending: Pending }[] = [];
  private busy = false;
  private nextId = 1;
  private readonly fetch: typeof fetch;

  constructor(
    private readonly deps: {
      config: { maxIterations: number; url: string | undefined };
      matrix: MatrixProvider;
      fetch?: typeof fetch;
    },
  ) {
    this.fetch = deps.fetch ?? fetch;
  }

  async optimize(body: unknown): Promise<VroomSolution> {
    const { options, ...rest } = (body ?? {}) as { options?: OptimizeOptions };
    const opts = this.readOptions(options);
    let problem: VroomProblem;
    try {
      problem = readProblem(rest, LIMITS);
    } catch (err) {
      if (err instanceof ProblemError) throw badRequest(err.message, 'INVALID_PROBLEM');
      throw err;
    }
    if (this.deps.config.url) return this.remote(rest, opts);
    const withIndex = problem.matrices !== undefined;
    if (!problem.matrices) {
      const points = collectLocations(problem);
      problem = indexLocations(problem, points, await this.deps.matrix.durations(points));
    }
    const solverProblem = toSolverProblem(problem);
    const { matrices: _dropped, ...vroom } = problem;
    return this.inWorker(
      {
        id: this.nextId++,
        vroom,
        problem: solverProblem,
        withIndex,
        seed: opts.seed ?? 1,
        maxIterations: opts.maxIterations,
        timeLimitMs: opts.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS,
      },
      [solverProblem.durations.buffer as ArrayBuffer],
    );
  }

  private readOptions(o: OptimizeOptions | undefined): OptimizeOptions {
    if (!o) return {};
    if (o.timeLimitMs !== undefined && (o.timeLimitMs < 1 || o.timeLimitMs > MAX_TIME_LIMIT_MS))
      throw badRequest(`options.timeLimitMs must be from 1 to ${MAX_TIME_LIMIT_MS}`, 'INVALID_PROBLEM');
    if (o.maxIterations !== undefined && (o.maxIterations < 1 || o.maxIterations > this.deps.config.maxIterations))
      throw badRequest(
        `options.maxIterations must be from 1 to ${this.deps.config.maxIterations} (OPTIMIZATION_MAX_ITERATIONS)`,
        'INVALID_PROBLEM',
      );
    return o;
  }

  /** The same JSON to a VROOM server (our options stay here: VROOM has no such key). */
  private async remote(problem: object, opts: OptimizeOptions): Promise<VroomSolution> {
    const timeoutMs = (opts.timeLimitMs ?? MAX_TIME_LIMIT_MS) + 10_000;
    let res: Response;
    try {
      res = await this.fetch(this.deps.config.url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(problem),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      throw new AppError(
        timedOut ? 504 : 502,
        timedOut ? 'OPTIMIZER_TIMEOUT' : 'OPTIMIZER_FAILED',
        timedOut ? 'The optimizer did not answer in time' : 'The optimizer could not be reached',
      );
    }
    const text = await res.text();
    let json: { code?: number; error?: string } & Partial<VroomSolution>;
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      throw new AppError(502, 'OPTIMIZER_FAILED', `The optimizer answered ${res.status} without JSON`);
    }
    // VROOM: code 1 internal error, 2 input error, 3 routing error (answered with HTTP 400 or 500).
    if (json.code === 2)
      throw badRequest(`The optimizer refused the problem: ${json.error ?? 'input error'}`, 'INVALID_PROBLEM');
    if (!res.ok || json.code !== 0 || !json.summary || !json.routes)
      throw new AppError(
        502,
        'OPTIMIZER_FAILED',
        `The optimizer failed (HTTP ${res.status}, code ${json.code ?? '?'})`,
      );
    return json as VroomSolution;
  }

  private inWorker(req: SolveRequest, transfer: ArrayBuffer[]): Promise<VroomSolution> {
    if (this.queue.length >= MAX_QUEUE)
      return Promise.reject(new AppError(503, 'OPTIMIZER_BUSY', 'The optimizer is busy; try again shortly'));
    return new Promise((resolve, reject) => {
      this.queue.push({ req, transfer, pending: { resolve, reject } });
      this.pump();
    });
  }

  private pump(): void {
    if (this.busy) return;
    const next = this.queue.shift();
    if (!next) return;
    this.busy = true;
    this.pending.set(next.req.id, next.pending);
    this.thread().postMessage(next.req, next.transfer);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // Under tsx (development, tests) the sources are .ts; the build has .js beside this file.
    const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
    const entry = new URL(`./solve.worker.${ext}`, import.meta.url);
    // A worker thread does not inherit tsx's loader (development, tests): it registers it first.
    const worker =
      ext === 'ts'
        ? new Worker(
            `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`,
            { eval: true },
          )
        : new Worker(entry);
    worker.unref();
    worker.on('message', (msg: { id: number; solution?: VroomSolution; error?: string }) => {
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      this.busy = false;
      if (p) {
        if (msg.solution) p.resolve(msg.solution);
        else p.reject(new Error(`optimizer: ${msg.error}`));
      }
      this.pump();
    });
    const fail = (err: Error) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.worker = undefined;
      this.busy = false;
      this.pump();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.worker === worker) fail(new Error(`optimizer thread exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  close(): void {
    const w = this.worker;
    this.worker = undefined;
    void w?.terminate();
  }
}
