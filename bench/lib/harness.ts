// Shared benchmark plumbing: server processes, autocannon runs, the baseline and the result shape.
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Server {
  port: number;
  info: Record<string, any>;
  child: ChildProcess;
  ask(type: string): Promise<Record<string, any>>;
  stop(): Promise<void>;
}

export async function startServer(kind: 'baseline' | 'app', env: Record<string, string> = {}): Promise<Server> {
  const child = fork(path.join(here, 'server.ts'), [], {
    // BENCH_PROFILE=dir writes a CPU profile of the app server there when it stops.
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_PROFILE && kind === 'app' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [])],
    env: { ...process.env, BENCH_KIND: kind, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const info = await new Promise<Record<string, any>>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.on('message', (m: any) => m.type === 'ready' && resolve(m));
  });
  return {
    port: info.port,
    info,
    child,
    ask: (type) =>
      new Promise((resolve) => {
        const onMessage = (m: any) => {
          if (m.type === type) {
            child.off('message', onMessage);
            resolve(m);
          }
        };
        child.on('message', onMessage);
        child.send({ type });
      }),
    stop: async () => {
      child.removeAllListeners('exit');
      const exited = new Promise((r) => child.once('exit', r));
      if (kind === 'app') child.send({ type: 'stop' });
      else child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface LoadResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export async function load(options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ connections: 50, pipelining: 1, duration: 10, ...options });
  return {
    requestsPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** The bare Fastify constant route, measured in the same run (the machine's HTTP JSON ceiling now). */
export async function baseline(duration = 8): Promise<LoadResult> {
  const server = await startServer('baseline');
  try {
    return await load({ url: `http://127.0.0.1:${server.port}/const`, duration });
  } finally {
    await server.stop();
  }
}

export function machine() {
  return { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100), node: process.version };
}

export const CENTRE = { lat: -1.2921, lng: 36.8219 };
export const SPREAD_DEG = 0.27;

export function randomPoint(r = Math.random) {
  return { lat: CENTRE.lat + (r() - 0.5) * 2 * SPREAD_DEG, lng: CENTRE.lng + (r() - 0.5) * 2 * SPREAD_DEG };
}

export const durationArg = () => Number(process.env.BENCH_DURATION ?? 10);
