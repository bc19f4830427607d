// B15: offers as Web Push. 10,000 online drivers, each with a push subscription (rows) at a local
// push service in this process (test/helpers/push-receiver.ts: it checks the VAPID JWT and decrypts
// every payload, as a real one would check and a browser decrypt), 50 new packages a second: the
// time from the offer's creation (its deadline minus DISPATCH_OFFER_TTL, the server's clock) to the
// push arriving at the receiver (this machine's clock: the same one). Target p99 ≤ 200 ms.
// Usage: npx tsx bench/b15-offer-push.ts   (BENCH_DRIVERS=10000, BENCH_RATE=50, BENCH_DURATION=10)
import { generateVapidKeys } from '../src/modules/push/vapid-keys.js';
import { startPushReceiver, type ReceivedPush } from '../test/helpers/push-receiver.js';
import { durationArg, machine, startServer } from './lib/harness.js';
import { createPackagesAtRate } from './lib/packages.js';

const duration = durationArg();
const drivers = Number(process.env.BENCH_DRIVERS ?? 10_000);
const rate = Number(process.env.BENCH_RATE ?? 50);
const OFFER_TTL_MS = 20_000;

const pct = (values: number[], p: number) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
};

const vapid = generateVapidKeys();
const receiver = await startPushReceiver(vapid.publicKey, { anyId: true });
const pushes: ReceivedPush[] = [];
receiver.onPush = (push) => pushes.push(push);

const server = await startServer('app', {
  BENCH_DRIVERS: String(drivers),
  BENCH_SESSIONS: '1',
  DISPATCH_MODE: 'offer',
  DISPATCH_OFFER_TTL: `${OFFER_TTL_MS / 1000}s`,
  VAPID_PUBLIC_KEY: vapid.publicKey,
  VAPID_PRIVATE_KEY: vapid.privateKey,
  VAPID_SUBJECT: 'mailto:bench@example.com',
  PUSH_ALLOW_HTTP: 'true',
  PUSH_ALLOW_PRIVATE_TARGETS: 'true',
  BENCH_PUSH_ORIGIN: receiver.origin,
  BENCH_PUSH_P256DH: receiver.sharedKeys.p256dh,
  BENCH_PUSH_AUTH: receiver.sharedKeys.auth,
});
const base = `http://127.0.0.1:${server.port}/api`;
const created = new Set<string>();
const errors = await createPackagesAtRate({
  base,
  token: server.info.businessToken,
  countryId: server.info.countryId,
  rate,
  duration,
  onCreated: (id) => created.add(id),
});
await new Promise((r) => setTimeout(r, 2000));
const stats = await server.ask('stats');
await server.stop();
await receiver.close();

const offers = pushes.filter((p) => p.payload.type === 'offer' && created.has(p.payload.jobId));
const latencies = offers.map((p) => p.receivedWallMs - (Date.parse(p.payload.deadline) - OFFER_TTL_MS));
const offeredJobs = new Set(offers.map((p) => p.payload.jobId));
console.log(
  JSON.stringify({
    bench: 'B15 offer push',
    machine: machine(),
    drivers,
    subscriptions: drivers,
    jobsPerSecond: rate,
    durationSeconds: duration,
    created: created.size,
    createErrors: errors,
    pushesReceived: offers.length,
    distinctOffers: new Set(offers.map((p) => p.payload.offerId)).size,
    jobsWithoutPush: created.size - offeredJobs.size,
    rejectedByReceiver: receiver.rejected.length,
    offerToPushMs: {
      p50: pct(latencies, 50),
      p95: pct(latencies, 95),
      p99: pct(latencies, 99),
      max: pct(latencies, 100),
    },
    serverEventLoopDelayMs: stats.eventLoopDelayMs,
    note: 'clock resolution 1 ms; offer creation = deadline - DISPATCH_OFFER_TTL (the server stamps the deadline just before inserting the offer)',
  }),
);
