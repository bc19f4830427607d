// B8 (../shared/guides/performance.md): dispatch. 10,000 online drivers with their WebSockets open,
// 50 new packages a second: the time from POST /packages returning to the offer arriving on the
// chosen driver's socket (p99 ≤ 100 ms), and the pick itself (the policy over the live index, p99 ≤ 2 ms)
// measured in this process over an index of the same size.
// Usage: npx tsx bench/b8-dispatch.ts   (BENCH_DRIVERS=10000, BENCH_RATE=50, BENCH_DURATION=10)
import WebSocket from 'ws';
import { DriverIndex } from '../src/modules/matching/driver-index.js';
import { pickDriver } from '../src/modules/dispatch/policy.js';
import { durationArg, machine, randomPoint, startServer } from './lib/harness.js';
import { createPackagesAtRate } from './lib/packages.js';

const duration = durationArg();
const drivers = Number(process.env.BENCH_DRIVERS ?? 10_000);
const rate = Number(process.env.BENCH_RATE ?? 50);
const VEHICLES = ['BIKE', 'CAR', 'VAN', 'TRUCK'] as const;

const pct = (values: number[], p: number) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 1000) / 1000;
};

// 1. The pick alone: the same policy over an index of `drivers`, a tenth of them holding offers.
const index = new DriverIndex();
const holding = new Set<string>();
for (let i = 0; i < drivers; i++) {
  index.upsert(
    {
      id: `d${i}`,
      firstName: 'D',
      vehicleType: VEHICLES[i % 4]!,
      vehiclePlate: 'P',
      rating: null,
      countryId: null,
      serviceTypes: ['RIDE', 'PACKAGE_DELIVERY'],
      active: true,
      online: true,
      busy: false,
    },
    { ...randomPoint(), heading: null, speed: null, at: Date.now() },
  );
  if (i % 10 === 0) holding.add(`d${i}`);
}
const picks: number[] = [];
for (let i = 0; i < 20_000; i++) {
  const p = randomPoint();
  const started = performance.now();
  pickDriver(index, {
    ...p,
    vehicleType: 'BIKE',
    orderType: 'PACKAGE_DELIVERY',
    staleBefore: 0,
    radiusMeters: 5000,
    maxRadiusMeters: 15_000,
    excluded: new Map(),
    holding,
  });
  picks.push(performance.now() - started);
}

// 2. The app: drivers' sockets open, packages created at `rate`, each offer timed from the 201.
const server = await startServer('app', { BENCH_DRIVERS: String(drivers), BENCH_SESSIONS: String(drivers) });
const auth = server.info.auth as { driverId: string; token: string }[];
const base = `http://127.0.0.1:${server.port}/api`;
const returned = new Map<string, number>();
const arrived = new Map<string, number>();
let opened = 0;
for (let i = 0; i < auth.length; i += 250) {
  await Promise.all(
    auth.slice(i, i + 250).map((a) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/drivers/me/stream`, {
        headers: { authorization: `Bearer ${a.token}` },
      });
      ws.on('message', (data) => {
        const m = JSON.parse(data.toString());
        if (m.type === 'offer') arrived.set(m.offer.jobId, performance.now());
      });
      ws.on('error', () => undefined);
      return new Promise((resolve) => ws.once('open', resolve).once('error', resolve)).then(
        () => ws.readyState === ws.OPEN && (opened += 1),
      );
    }),
  );
}
const errors = await createPackagesAtRate({
  base,
  token: server.info.businessToken,
  countryId: server.info.countryId,
  rate,
  duration,
  onCreated: (id) => returned.set(id, performance.now()),
});
await new Promise((r) => setTimeout(r, 1000));
const latencies: number[] = [];
let missing = 0;
for (const [jobId, at] of returned) {
  const got = arrived.get(jobId);
  if (got === undefined) missing += 1;
  else latencies.push(Math.max(0, got - at));
}
const stats = await server.ask('stats');
await server.stop();

console.log(
  JSON.stringify({
    bench: 'B8 dispatch',
    machine: machine(),
    drivers,
    socketsOpen: opened,
    jobsPerSecond: rate,
    durationSeconds: duration,
    created: returned.size,
    createErrors: errors,
    noOfferWithin1s: missing,
    returnToOfferMs: {
      p50: pct(latencies, 50),
      p95: pct(latencies, 95),
      p99: pct(latencies, 99),
      max: pct(latencies, 100),
    },
    pickMs: { p50: pct(picks, 50), p99: pct(picks, 99), max: pct(picks, 100) },
    serverEventLoopDelayMs: stats.eventLoopDelayMs,
  }),
);
