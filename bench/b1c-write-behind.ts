// B1c: the durable copy of positions in PostgreSQL: batched write-behind lag while B1 runs at a
// fixed rate (default 20k/s offered). Lag = time from a position's report to the commit of its batch.
// Usage: BENCH_DATABASE_URL=postgres://... npx tsx bench/b1c-write-behind.ts   (BENCH_RATE=20000)
import { durationArg, load, locationUpdate, machine, startServer } from './lib/harness.js';
import { DB_BATCH_ROWS } from '../src/modules/matching/live-drivers.js';

const duration = durationArg();
const rate = Number(process.env.BENCH_RATE ?? 20_000);
const server = await startServer('app', { BENCH_SESSIONS: process.env.BENCH_SESSIONS ?? '5000' });
const headers = (server.info.auth as { token: string }[]).map((a) => ({
  'content-type': 'application/json',
  authorization: `Bearer ${a.token}`,
}));
const requests = [locationUpdate(headers)];
const url = `http://127.0.0.1:${server.port}`;
await load({ url, requests, amount: headers.length });
await server.ask('stats');
const run = await load({ url, requests, duration, overallRate: rate, connections: 100 });
await new Promise((r) => setTimeout(r, 2500));
const stats = await server.ask('stats');
await server.stop();
const flushes = stats.flushes as { rows: number; durationMs: number; maxLagMs: number }[];
const lags = flushes.map((f) => f.maxLagMs).sort((a, b) => a - b);
const rows = flushes.reduce((n, f) => n + f.rows, 0);

console.log(
  JSON.stringify({
    bench: 'B1c write-behind of positions to PostgreSQL',
    database: server.info.database,
    updates: run,
    batches: flushes.length,
    rowsWritten: rows,
    updatesPerRow: Math.round((run.requests / Math.max(1, rows)) * 100) / 100,
    statementsPerSecond:
      Math.round((flushes.reduce((n, f) => n + Math.ceil(f.rows / DB_BATCH_ROWS), 0) / duration) * 10) / 10,
    batchMs: {
      p50: Math.round(flushes.map((f) => f.durationMs).sort((a, b) => a - b)[Math.floor(flushes.length / 2)] ?? 0),
      max: Math.round(Math.max(0, ...flushes.map((f) => f.durationMs))),
    },
    lagMs: {
      p50: Math.round(lags[Math.floor(lags.length / 2)] ?? 0),
      p99: Math.round(lags[Math.floor(lags.length * 0.99)] ?? 0),
      max: Math.round(lags[lags.length - 1] ?? 0),
    },
    target: { lagP99Ms: 5000, oneUpdatePerPing: false },
    machine: machine(),
  }),
);
