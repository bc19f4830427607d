// B3: POST /matching/find-drivers with 100k online drivers: maximum throughput, then p99 at a fixed rate.
// Usage: npx tsx bench/b3-find-drivers.ts   (BENCH_DURATION=10, BENCH_RATE=2000, BENCH_DATABASE_URL=...)
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
const rate = Number(process.env.BENCH_RATE ?? 2000);
const base = await baseline(duration);
const server = await startServer('app', { BENCH_SESSIONS: process.env.BENCH_SESSIONS ?? '200' });
const auth = server.info.auth as { token: string }[];
const headers = auth.map((a) => ({ 'content-type': 'application/json', authorization: `Bearer ${a.token}` }));
const VEHICLES = ['BIKE', 'CAR', 'VAN', 'TRUCK'];

export const findRequest = {
  method: 'POST' as const,
  path: '/api/matching/find-drivers',
  setupRequest: (req: any) => {
    const p = randomPoint();
    req.headers = headers[Math.floor(Math.random() * headers.length)];
    req.body = JSON.stringify({
      pickupLocation: p,
      vehicleType: VEHICLES[Math.floor(Math.random() * 4)],
      orderType: Math.random() < 0.5 ? 'RIDE' : 'PACKAGE_DELIVERY',
    });
    return req;
  },
};
const url = `http://127.0.0.1:${server.port}`;
let next = 0;
await load({
  url,
  amount: headers.length,
  requests: [
    {
      ...findRequest,
      setupRequest: (r: any) => ({ ...findRequest.setupRequest(r), headers: headers[next++ % headers.length] }),
    },
  ],
});
await load({ url, requests: [findRequest], duration: 2 });
const max = await withServerCpu(server.child.pid!, () => load({ url, requests: [findRequest], duration }));
await server.ask('stats');
// Open loop at a fixed arrival rate: latencies include any queueing.
const atRate = await openLoop({
  url,
  rate,
  duration,
  connections: 50,
  serverPid: server.child.pid!,
  request: () => findRequest.setupRequest({ method: 'POST', path: findRequest.path }),
});
const stats = await server.ask('stats');
await server.stop();

console.log(
  JSON.stringify({
    bench: 'B3 POST /matching/find-drivers',
    onlineDrivers: stats.online,
    database: server.info.database,
    max,
    [`at${rate}PerSec`]: atRate,
    baseline: base,
    ratioToBaseline: Math.round((max.requestsPerSec / base.requestsPerSec) * 100) / 100,
    targets: { requestsPerSec: 10_000, p99MsAt2000: 10 },
    serverRssMB: stats.rssMB,
    serverMemoryMB: stats.memoryMB,
    serverEventLoopDelayMsAtRate: stats.eventLoopDelayMs,
    machine: machine(),
  }),
);
