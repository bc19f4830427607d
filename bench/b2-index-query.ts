// B2: the live index alone: 10 nearest of one vehicle type within 5 km among 100k drivers.
// Baseline: the same query answered by a linear scan of every driver (the bare alternative).
// Usage: npx tsx bench/b2-index-query.ts   (BENCH_DRIVERS=100000, BENCH_QUERIES=100000)
import { DriverIndex, distanceMeters, type NearestQuery } from '../src/modules/matching/driver-index.js';
import type { VehicleType } from '../src/db/schema.js';
import { machine, randomPoint } from './lib/harness.js';

const N = Number(process.env.BENCH_DRIVERS ?? 100_000);
const Q = Number(process.env.BENCH_QUERIES ?? 100_000);
const VEHICLES: VehicleType[] = ['BIKE', 'CAR', 'VAN', 'TRUCK'];
const now = Date.now();
const index = new DriverIndex();
let t = performance.now();
for (let i = 0; i < N; i++) {
  const p = randomPoint();
  index.upsert(
    {
      id: `d${i}`,
      firstName: 'D',
      vehicleType: VEHICLES[i % 4],
      vehiclePlate: 'P',
      rating: 4.5,
      countryId: 'ke',
      serviceTypes: ['RIDE', 'PACKAGE_DELIVERY'],
      active: true,
      online: true,
      busy: i % 10 === 0,
    },
    { ...p, heading: null, speed: null, at: now - Math.floor(Math.random() * 60_000) },
  );
}
const buildMs = performance.now() - t;

// Updates in place: random moves of up to ~1 km.
t = performance.now();
for (let i = 0; i < 200_000; i++) {
  const id = `d${Math.floor(Math.random() * N)}`;
  const p = index.get(id)!.position!;
  index.setPosition(id, {
    lat: p.lat + (Math.random() - 0.5) * 0.01,
    lng: p.lng + (Math.random() - 0.5) * 0.01,
    heading: 0,
    speed: 5,
    at: p.at + 1,
  });
}
const updateNs = ((performance.now() - t) * 1e6) / 200_000;

const queries: NearestQuery[] = [];
for (let i = 0; i < Q; i++) {
  const p = randomPoint();
  queries.push({
    ...p,
    radiusMeters: 5000,
    limit: 10,
    vehicleType: VEHICLES[i % 4],
    orderType: 'RIDE',
    staleBefore: now - 120_000,
  });
}
for (let i = 0; i < 5000; i++) index.nearest(queries[i]); // warm-up
const lat = new Float64Array(Q);
let found = 0;
for (let i = 0; i < Q; i++) {
  const s = process.hrtime.bigint();
  found += index.nearest(queries[i]).length;
  lat[i] = Number(process.hrtime.bigint() - s) / 1000;
}
lat.sort();
const pct = (p: number) => Math.round(lat[Math.min(Q - 1, Math.floor(Q * p))] * 10) / 10;

// Baseline: linear scan of all drivers for 500 queries.
const all = Array.from({ length: N }, (_, i) => index.get(`d${i}`)!);
const B = 500;
t = performance.now();
for (let i = 0; i < B; i++) {
  const q = queries[i];
  const hits: number[] = [];
  for (const d of all) {
    if (d.vehicleType !== q.vehicleType || d.busy || !d.position) continue;
    const dist = distanceMeters(q.lat, q.lng, d.position.lat, d.position.lng);
    if (dist <= q.radiusMeters) hits.push(dist);
  }
  hits.sort((a, b) => a - b).slice(0, 10);
}
const scanUs = ((performance.now() - t) * 1000) / B;

console.log(
  JSON.stringify({
    bench: 'B2 live index query (10 nearest, 5 km, one vehicle type)',
    drivers: N,
    queries: Q,
    avgFound: Math.round((found / Q) * 10) / 10,
    p50Us: pct(0.5),
    p99Us: pct(0.99),
    p999Us: pct(0.999),
    maxUs: Math.round(lat[Q - 1]),
    queriesPerSec: Math.round(Q / (lat.reduce((a, b) => a + b, 0) / 1e6)),
    positionUpdateNs: Math.round(updateNs),
    buildMs: Math.round(buildMs),
    baseline: { linearScanUs: Math.round(scanUs) },
    ratioScanToIndexP50: Math.round(scanUs / pct(0.5)),
    target: { p99Us: 100 },
    heapMB: Math.round(process.memoryUsage().heapUsed / 1048576),
    machine: machine(),
  }),
);
