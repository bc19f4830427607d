// B16: Traccar Client positions (GET /api/positions/osmand, OsmAnd query string) on one instance:
// device key lookup (cached), the per-key rate limit, the same position intake as the WebSocket.
// 100k drivers, 10k device keys. Target: 10,000 positions/s (B1's route is the bearer-token HTTP one).
// Usage: npx tsx bench/b16-osmand.ts   (BENCH_DURATION=10, BENCH_RATE=10000 (0: no open-loop run), BENCH_DATABASE_URL=...)
import { baseline, durationArg, load, machine, randomPoint, startServer } from './lib/harness.js';
import { measureRoute, ratioTo } from './lib/route-run.js';

const duration = durationArg();
const rate = Number(process.env.BENCH_RATE ?? 10_000);
const base = await baseline(duration);
// The default per-key limit (120/1m) stays on: 10k keys at 10k/s is 1 position per key per second.
const server = await startServer('app', { BENCH_DEVICE_KEYS: '1' });
const keys = (server.info.deviceKeys as string[]).map(encodeURIComponent);

const path = () => {
  const p = randomPoint();
  const key = keys[Math.floor(Math.random() * keys.length)];
  return `/api/positions/osmand?id=${key}&lat=${p.lat}&lon=${p.lng}&timestamp=${Math.floor(Date.now() / 1000)}&speed=16.5&bearing=${Math.floor(Math.random() * 360)}&accuracy=8&altitude=1650&batt=71.0`;
};
const requests = [
  { method: 'GET' as const, path: '/api/positions/osmand', setupRequest: (req: any) => ({ ...req, path: path() }) },
];
const url = `http://127.0.0.1:${server.port}`;
// Warm-up: every key once (its lookup is cached for a minute, as in steady state where a phone sends every few seconds).
let next = 0;
await load({
  url,
  amount: keys.length,
  requests: [
    {
      method: 'GET' as const,
      path: '/',
      setupRequest: (req: any) => ({ ...req, path: path().replace(/id=[^&]+/, `id=${keys[next++ % keys.length]}`) }),
    },
  ],
});
const { max, atRate, stats } = await measureRoute({
  server,
  url,
  requests,
  duration,
  rate,
  request: () => ({ method: 'GET', path: path() }),
});

console.log(
  JSON.stringify({
    bench: 'B16 Traccar Client positions (OsmAnd, GET with query string)',
    drivers: server.info.indexSize,
    deviceKeys: keys.length,
    database: server.info.database,
    max,
    [`at${rate}PerSec`]: atRate,
    baseline: base,
    ratioToBaseline: ratioTo(base, max),
    targets: { positionsPerSec: 10_000 },
    positionsApplied: stats.positionsApplied,
    serverRssMB: stats.rssMB,
    serverEventLoopDelayMsAtRate: atRate ? stats.eventLoopDelayMs : undefined,
    machine: machine(),
  }),
);
