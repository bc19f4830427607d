// B10: POST /quotes with 100k online drivers: maximum throughput, then p99 at a fixed rate.
// Usage: npx tsx bench/b10-quotes.ts   (BENCH_DURATION=10, BENCH_RATE=5000, BENCH_DATABASE_URL=...,
// REDIS_URL and a REDIS_KEY_PREFIX of the run's own for the target's PostgreSQL + Redis)
// Each quote is priced from the tariff (cached), the routing function, the surge state and the live
// index (pickup ETA), and kept under its UUID where every instance finds it: a key in Redis with
// REDIS_URL, else a row in PostgreSQL (memory on the embedded database).
import {
  baseline,
  durationArg,
  load,
  machine,
  openLoop,
  randomPoint,
  startServer,
  withServerCpu,
} from './lib/harness.js';

const duration = durationArg();
const rate = Number(process.env.BENCH_RATE ?? 5000);
const base = await baseline(duration);
const server = await startServer('app', {
  BENCH_SESSIONS: '10',
  BENCH_CUSTOMERS: process.env.BENCH_CUSTOMERS ?? '200',
});
const customers = server.info.customers as { token: string }[];
const headers = customers.map((c) => ({ 'content-type': 'application/json', authorization: `Bearer ${c.token}` }));
const countryId = server.info.kenyaId as string;
const VEHICLES = ['BIKE', 'CAR', 'VAN', 'TRUCK'];

const quoteBody = () => {
  const pickup = randomPoint();
  const dropoff = randomPoint();
  return JSON.stringify({
    kind: Math.random() < 0.5 ? 'RIDE' : 'PACKAGE',
    pickup: { location: pickup },
    dropoff: { location: dropoff },
    vehicleType: VEHICLES[Math.floor(Math.random() * 4)],
    countryId,
  });
};
const quoteRequest = {
  method: 'POST' as const,
  path: '/api/quotes',
  setupRequest: (req: any) => {
    req.headers = headers[Math.floor(Math.random() * headers.length)];
    req.body = quoteBody();
    return req;
  },
};
const url = `http://127.0.0.1:${server.port}`;
let next = 0;
// Every session once (the guard caches sessions), then a short warm-up.
await load({
  url,
  amount: headers.length,
  requests: [
    {
      ...quoteRequest,
      setupRequest: (r: any) => ({ ...quoteRequest.setupRequest(r), headers: headers[next++ % headers.length] }),
    },
  ],
});
await load({ url, requests: [quoteRequest], duration: 2 });
const max = await withServerCpu(server.child.pid!, () => load({ url, requests: [quoteRequest], duration }));
await server.ask('stats');
const atRate = await openLoop({
  url,
  rate,
  duration,
  connections: 100,
  serverPid: server.child.pid!,
  request: () => ({
    method: 'POST',
    path: quoteRequest.path,
    headers: headers[Math.floor(Math.random() * headers.length)],
    body: quoteBody(),
  }),
});
const stats = await server.ask('stats');
await server.stop();

console.log(
  JSON.stringify({
    bench: 'B10 POST /quotes',
    onlineDrivers: stats.online,
    database: server.info.database,
    redis: Boolean(process.env.REDIS_URL),
    max,
    [`at${rate}PerSec`]: atRate,
    baseline: base,
    ratioToBaseline: Math.round((max.requestsPerSec / base.requestsPerSec) * 100) / 100,
    targets: { requestsPerSec: 5_000, p99Ms: 10 },
    serverRssMB: stats.rssMB,
    serverMemoryMB: stats.memoryMB,
    serverEventLoopDelayMsAtRate: stats.eventLoopDelayMs,
    machine: machine(),
  }),
);
