// Shared benchmark plumbing: server processes, autocannon runs, the baseline and the result shape.
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { CENTRE, SPREAD_DEG } from './area.js';
import { RawPool } from './raw-client.js';

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
    // BENCH_PROFILE=dir writes a CPU profile of the app server there when it stops; BENCH_SERVER_FLAGS
    // are Node flags for the app server only (NODE_OPTIONS would reach the load generator too).
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.BENCH_TRACE_GC ? ['--trace-gc'] : []),
      ...(process.env.BENCH_PROFILE && kind === 'app'
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
        : []),
      ...(kind === 'app' ? (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean) : []),
    ],
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
  /** The server process's CPU time (user + system) per completed request, when measured. */
  serverCpuUsPerRequest?: number;
  /** Open loop only: how late the generator sent (p99, max) and the p99 counted from the actual send. */
  generator?: {
    cpuUsPerRequest: number;
    sendLateP99Ms: number;
    sendLateMaxMs: number;
    p99FromSendMs: number;
    eventLoopDelayMs: { p99: number; max: number };
  };
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

export interface OpenLoopRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * Open-loop load: requests are scheduled at a fixed arrival rate whatever the server does, and each
 * latency runs from the request's scheduled time (so time spent queued behind a slow answer counts:
 * no coordinated omission). autocannon's `overallRate` is not this: each connection sends its
 * per-second budget back to back and then waits, which measures bursts.
 */
export async function openLoop(options: {
  url: string;
  rate: number;
  duration: number;
  connections?: number;
  warmupSeconds?: number;
  /** The server's process: its CPU per request over the measured run is reported. */
  serverPid?: number;
  request: () => OpenLoopRequest;
}): Promise<LoadResult> {
  const pool = await openPool(options.url, options.connections ?? 100);
  try {
    // A warm-up on the same connections, not counted: a second at a quarter of the rate, then one at
    // the rate. Without it the generator's own start (opening its connections, compiling the client's
    // paths) made the first second's latencies 100-270 ms even against the bare baseline server,
    // which alone was the p99 of an 8-10 s run; starting at full rate left a queue that took the
    // server seconds to drain.
    const warmup = options.warmupSeconds ?? 1;
    if (warmup > 0) {
      await openLoopRun(pool, { ...options, rate: options.rate / 4, duration: warmup });
      await openLoopRun(pool, { ...options, duration: warmup });
    }
    const run = () => openLoopRun(pool, options);
    return options.serverPid === undefined ? await run() : await withServerCpu(options.serverPid, run);
  } finally {
    await pool.close();
  }
}

/** What the open loop sends through: the raw client by default, undici's Pool with BENCH_GENERATOR=undici (to compare). */
interface SendPool {
  send(r: OpenLoopRequest, done: (err: Error | undefined, status: number) => void): void;
  close(): Promise<void>;
}

async function openPool(url: string, connections: number): Promise<SendPool> {
  if (process.env.BENCH_GENERATOR === 'undici') {
    const pool = new Pool(url, { connections, pipelining: 1 });
    return {
      send: (r, done) => {
        // undici writes a content-length into the header objects it is given: never reuse it.
        const headers = Object.fromEntries(
          Object.entries(r.headers ?? {}).filter(([name]) => name.toLowerCase() !== 'content-length'),
        );
        pool
          .request({ method: r.method, path: r.path, headers, body: r.body })
          .then(async (res) => {
            await res.body.dump();
            done(undefined, res.statusCode);
          })
          .catch((err: Error) => done(err, 0));
      },
      close: () => pool.close(),
    };
  }
  const pool = await RawPool.open(url, connections);
  return { send: (r, done) => pool.request(r, done), close: () => pool.close() };
}

async function openLoopRun(
  pool: SendPool,
  options: { rate: number; duration: number; request: () => OpenLoopRequest },
): Promise<LoadResult> {
  const total = Math.round(options.rate * options.duration);
  const interval = 1000 / options.rate;
  const latencies: number[] = [];
  // How late the generator itself sent each request, and the latency counted from the actual send:
  // when the generator falls behind (its own event loop, the shared cores), the first figure shows it.
  const sendLateness: number[] = [];
  const fromSend: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  let finished = 0;
  // The generator's own event-loop delay: a response waiting behind a busy generator counts as latency.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  // BENCH_TIMELINE=1: when (ms into the run) the requests slower than 10 ms were scheduled, by 100 ms.
  const timeline: number[] | undefined = process.env.BENCH_TIMELINE ? [] : undefined;
  // An answer that never comes must not hang the run: 10 s after the last send, what is still
  // unanswered counts as timed out.
  let over = false;
  await new Promise<void>((resolve) => {
    const deadline = setTimeout(() => ((over = true), resolve()), (options.duration + 10) * 1000);
    const finish = () => {
      clearTimeout(deadline);
      over = true;
      resolve();
    };
    const fire = (scheduledAt: number) => {
      const r = options.request();
      const sentAt = performance.now();
      sendLateness.push(sentAt - scheduledAt);
      pool.send(r, (err, statusCode) => {
        if (over) return;
        if (err) {
          errors += 1;
          if (errors === 1) console.error(`open loop: first error: ${err.message}`);
        } else {
          if (statusCode >= 300) non2xx += 1;
          const doneAt = performance.now();
          latencies.push(doneAt - scheduledAt);
          fromSend.push(doneAt - sentAt);
          if (timeline && doneAt - scheduledAt > 10) timeline.push(Math.round(scheduledAt - start));
        }
        if (++finished === total) finish();
      });
    };
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
      while (sent < due) fire(start + sent++ * interval);
      if (sent < total && !over) setTimeout(tick, 1);
    };
    // A rate so low that the run holds no request would otherwise never resolve.
    if (total === 0) finish();
    else tick();
  });
  const elapsedSeconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  if (timeline?.length) {
    const byWindow = new Map<number, number>();
    for (const t of timeline) {
      const window = Math.floor(t / 100) * 100;
      byWindow.set(window, (byWindow.get(window) ?? 0) + 1);
    }
    console.error(
      `slower than 10 ms, by 100-ms window of scheduling from ${Date.now() - performance.now() + start}: ${[...byWindow].map(([w, n]) => `${w}:${n}`).join(' ')}`,
    );
  }
  loopDelay.disable();
  const quantile = (values: number[], q: number) => {
    values.sort((a, b) => a - b);
    return values.length ? Math.round(values[Math.min(values.length - 1, Math.floor(q * values.length))] * 10) / 10 : 0;
  };
  return {
    requestsPerSec: Math.round(latencies.length / elapsedSeconds),
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: quantile(latencies, 1),
    requests: latencies.length,
    non2xx,
    errors,
    timeouts: sent - finished,
    generator: {
      cpuUsPerRequest: latencies.length ? Math.round(((cpu.user + cpu.system) / latencies.length) * 10) / 10 : 0,
      sendLateP99Ms: quantile(sendLateness, 0.99),
      sendLateMaxMs: quantile(sendLateness, 1),
      p99FromSendMs: quantile(fromSend, 0.99),
      eventLoopDelayMs: {
        p99: Math.round(loopDelay.percentile(99) / 1e4) / 100,
        max: Math.round(loopDelay.max / 1e4) / 100,
      },
    },
  };
}

/** CPU time (user + system, µs, every thread) a process has used so far: /proc fields 14 and 15, in 10 ms ticks. */
export function processCpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Context switches of a process so far, all its threads: waits for work (voluntary) and preemptions (involuntary). */
export function processSwitches(pid: number): { voluntary: number; involuntary: number } {
  let voluntary = 0;
  let involuntary = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
      voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return { voluntary, involuntary };
}

/**
 * Runs a load and adds the server process's CPU time per request: a figure the machine's drift and
 * the load generator's share of the two cores disturb much less than requests/s. With it, the
 * server's context switches per request: how often it went to sleep for want of work, and how often
 * another process took its core (both cost CPU beyond the request's own work).
 */
export async function withServerCpu<R extends { requests: number }>(
  pid: number,
  run: () => Promise<R>,
): Promise<
  R & { serverCpuUsPerRequest: number; serverSwitchesPerRequest: { voluntary: number; involuntary: number } }
> {
  const before = processCpuUs(pid);
  const switchesBefore = processSwitches(pid);
  const result = await run();
  const used = processCpuUs(pid) - before;
  const switches = processSwitches(pid);
  const per = (n: number) => (result.requests ? Math.round((n / result.requests) * 1000) / 1000 : 0);
  return {
    ...result,
    serverCpuUsPerRequest: result.requests ? Math.round((used / result.requests) * 10) / 10 : 0,
    serverSwitchesPerRequest: {
      voluntary: per(switches.voluntary - switchesBefore.voluntary),
      involuntary: per(switches.involuntary - switchesBefore.involuntary),
    },
  };
}

/** The bare Fastify constant route, measured in the same run (the machine's HTTP JSON ceiling now). */
export async function baseline(duration = 8): Promise<LoadResult> {
  const server = await startServer('baseline');
  try {
    return await withServerCpu(server.child.pid!, () =>
      load({ url: `http://127.0.0.1:${server.port}/const`, duration }),
    );
  } finally {
    await server.stop();
  }
}

export function machine() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
  };
}

export { CENTRE, SPREAD_DEG } from './area.js';

export function randomPoint(r = Math.random) {
  return { lat: CENTRE.lat + (r() - 0.5) * 2 * SPREAD_DEG, lng: CENTRE.lng + (r() - 0.5) * 2 * SPREAD_DEG };
}

export const durationArg = () => Number(process.env.BENCH_DURATION ?? 10);

/** A position update from one of the given drivers in turn, to a random point (autocannon request). */
export function locationUpdate(headers: Record<string, string>[]) {
  let next = 0;
  return {
    method: 'POST' as const,
    path: '/api/drivers/me/location',
    setupRequest: (req: any) => {
      const p = randomPoint();
      req.headers = headers[next++ % headers.length];
      req.body = `{"lat":${p.lat},"lng":${p.lng}}`;
      return req;
    },
  };
}
