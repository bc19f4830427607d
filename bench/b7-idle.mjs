// B7's idle figure alone, for A/B runs of two checkouts: RSS of the compiled server on a PostgreSQL
// server 10 s (and 30 s) after ready, the way bench/b7-footprint.ts reads it (same environment, no
// traffic, the second start after the first migrated), with the 1-minute load average at the start.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/fp_idle node bench/b7-idle.mjs [checkout ...]
//
// Each checkout (default: this one) must have been built (dist/server.js). With several, they run in
// turn, BENCH_ROUNDS times (default 3), each line one JSON object.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/fp_idle';
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const checkouts = process.argv.slice(2).length ? process.argv.slice(2) : [path.resolve(import.meta.dirname, '..')];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssMB = (pid) =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 102.4) / 10;
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'MALLOC_MMAP_THRESHOLD_')),
  MALLOC_MMAP_THRESHOLD_: '131072',
  DATABASE_URL: url,
  JWT_SECRET: 'b7-bench-key-0123456789-abcdefghijklmnopqrstuvwxyz',
  NODE_ENV: 'production',
  SMS_TRANSPORT: 'file',
  SMS_ALLOW_FILE_IN_PRODUCTION: 'true',
  RATE_LIMIT_GLOBAL: 'off',
  LOG_LEVEL: 'warn',
  PORT: '3792',
};
delete env.REDIS_URL;

async function start(cwd) {
  const child = spawn('node', ['dist/server.js'], { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const t0 = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server in ${cwd} exited with ${child.exitCode}`);
    try {
      if ((await fetch('http://127.0.0.1:3792/health/ready')).status === 200)
        return { child, readyMs: Math.round(performance.now() - t0) };
    } catch {
      /* not listening yet */
    }
    await sleep(20);
  }
}

async function stop(child) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

for (let round = 1; round <= rounds; round++) {
  for (const cwd of checkouts) {
    await stop((await start(cwd)).child); // migrates on a first start
    const load = os.loadavg()[0];
    const { child, readyMs } = await start(cwd);
    await sleep(10_000);
    const idle10sMB = rssMB(child.pid);
    await sleep(20_000);
    const idle30sMB = rssMB(child.pid);
    await stop(child);
    console.log(JSON.stringify({ round, checkout: cwd, load1m: load, readyMs, idle10sMB, idle30sMB }));
  }
}
