// B3b: location updates (B1, offered at 20k/s) and find-drivers (B3, at 500/s) at the same time.
// Usage: npx tsx bench/b3b-mixed.ts   (BENCH_DURATION=10, BENCH_UPDATE_RATE=20000, BENCH_FIND_RATE=500)
import {
  baseline,
  durationArg,
  load,
  locationUpdate,
  machine,
  openLoop,
  randomPoint,
  startServer,
} from './lib/harness.js';

const duration = durationArg();
const updateRate = Number(process.env.BENCH_UPDATE_RATE ?? 20_000);
const findRate = Number(process.env.BENCH_FIND_RATE ?? 500);
const base = await baseline(duration);
const server = await startServer('app', { BENCH_SESSIONS: process.env.BENCH_SESSIONS ?? '5000' });
const headers = (server.info.auth as { token: string }[]).map((a) => ({
  'content-type': 'application/json',
  authorization: `Bearer ${a.token}`,
}));
const VEHICLES = ['BIKE', 'CAR', 'VAN', 'TRUCK'];
const update = locationUpdate(headers);
const find = {
  method: 'POST' as const,
  path: '/api/matching/find-drivers',
  setupRequest: (req: any) => {
    req.headers = headers[Math.floor(Math.random() * headers.length)];
    req.body = JSON.stringify({
      pickupLocation: randomPoint(),
      vehicleType: VEHICLES[Math.floor(Math.random() * 4)],
      orderType: 'RIDE',
    });
    return req;
  },
};
const url = `http://127.0.0.1:${server.port}`;
await load({ url, requests: [update], amount: headers.length });
const [updates, finds] = await Promise.all([
  openLoop({
    url,
    rate: updateRate,
    duration,
    connections: 100,
    request: () => update.setupRequest({ method: 'POST', path: update.path }),
  }),
  openLoop({
    url,
    rate: findRate,
    duration,
    connections: 20,
    request: () => find.setupRequest({ method: 'POST', path: find.path }),
  }),
]);
const stats = await server.ask('stats');
await server.stop();

console.log(
  JSON.stringify({
    bench: 'B3b location updates and find-drivers together',
    onlineDrivers: stats.online,
    database: server.info.database,
    updates,
    finds,
    baseline: base,
    ratioToBaseline: Math.round(((updates.requestsPerSec + finds.requestsPerSec) / base.requestsPerSec) * 100) / 100,
    target: { findP99Ms: 20 },
    serverRssMB: stats.rssMB,
    machine: machine(),
  }),
);
