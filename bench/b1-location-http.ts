// B1: position updates over HTTP (validated, authenticated, into the live index), 100k drivers.
// Usage: npx tsx bench/b1-location-http.ts   (BENCH_DURATION=10, BENCH_RATE=20000 (0: no open-loop run), BENCH_DATABASE_URL=...)
import { baseline, durationArg, load, machine, randomPoint, startServer } from './lib/harness.js';
import { measureRoute, ratioTo } from './lib/route-run.js';

const duration = durationArg();
const rate = Number(process.env.BENCH_RATE ?? 20_000);
const base = await baseline(duration);
const server = await startServer('app');
const auth = server.info.auth as { token: string }[];
const headers = auth.map((a) => ({ 'content-type': 'application/json', authorization: `Bearer ${a.token}` }));

const requests = [
  {
    method: 'POST' as const,
    path: '/api/drivers/me/location',
    setupRequest: (req: any) => {
      const i = Math.floor(Math.random() * headers.length);
      const p = randomPoint();
      req.headers = headers[i];
      req.body = `{"lat":${p.lat},"lng":${p.lng},"heading":${Math.floor(Math.random() * 360)},"speed":8.5}`;
      return req;
    },
  },
];
const url = `http://127.0.0.1:${server.port}`;
// Warm-up: every session once (the auth guard caches a session for 30 s, as in steady state).
let next = 0;
await load({
  url,
  amount: headers.length,
  requests: [
    {
      ...requests[0],
      setupRequest: (req: any) => ({ ...requests[0].setupRequest(req), headers: headers[next++ % headers.length] }),
    },
  ],
});
const { max, atRate, stats } = await measureRoute({
  server,
  url,
  requests,
  duration,
  rate,
  request: () => requests[0].setupRequest({ method: 'POST', path: requests[0].path }),
});

console.log(
  JSON.stringify({
    bench: 'B1 location updates over HTTP',
    drivers: server.info.indexSize,
    tokensInUse: auth.length,
    database: server.info.database,
    max,
    [`at${rate}PerSec`]: atRate,
    baseline: base,
    ratioToBaseline: ratioTo(base, max),
    targets: { updatesPerSec: 20_000, p99Ms: 10, ratio: 0.6 },
    serverRssMB: stats.rssMB,
    serverMemoryMB: stats.memoryMB,
    // During the open-loop run (its warm-up included): the server's event-loop delay and the write-behind batches.
    serverEventLoopDelayMsAtRate: atRate ? stats.eventLoopDelayMs : undefined,
    writeBehindAtRate: atRate
      ? {
          batches: stats.flushes.length,
          rows: stats.flushes.map((f: { rows: number }) => f.rows),
          ms: stats.flushes.map((f: { durationMs: number }) => Math.round(f.durationMs)),
          endedAt: stats.flushes.map((f: { endedAt: number }) => f.endedAt),
        }
      : undefined,
    machine: machine(),
  }),
);
