// B9 (../shared/guides/performance.md): tracking. BENCH_SUBSCRIBERS SSE subscribers (5 per package,
// on the public tracking stream) and BENCH_DRIVERS drivers on a job posting a position every 3 s:
// the time from a position's POST to its location event at each subscriber (p99 ≤ 200 ms), the RSS
// an idle subscriber costs the server (≤ 10 KB), and positions lost for subscribers that keep up (0).
// Usage: BENCH_DATABASE_URL=postgres://... npx tsx bench/b9-sse.ts
//   (BENCH_DRIVERS=2000, BENCH_SUBSCRIBERS=10000, BENCH_DURATION=30 seconds of positions)
import net from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { machine, randomPoint, startServer } from './lib/harness.js';

const drivers = Number(process.env.BENCH_DRIVERS ?? 2000);
const subscribers = Number(process.env.BENCH_SUBSCRIBERS ?? 10_000);
const duration = Number(process.env.BENCH_DURATION ?? 30);
const PERIOD_MS = 3000;

const pct = (values: number[], p: number) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
};
const rssKB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

const server = await startServer('app', {
  BENCH_DRIVERS: String(drivers),
  BENCH_SESSIONS: String(drivers),
  DISPATCH_MODE: 'off',
  TRACKING_INTERVAL: process.env.BENCH_TRACKING_INTERVAL ?? '3s',
  BENCH_SERVER_FLAGS: `${process.env.BENCH_SERVER_FLAGS ?? ''} --expose-gc`,
});
const pid = server.child.pid!;
const pool = new Pool(`http://127.0.0.1:${server.port}`, { connections: 64 });
const call = async (method: 'GET' | 'POST', path: string, token: string, body?: unknown) => {
  const res = await pool.request({
    method,
    path: `/api${path}`,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
};
const inBatches = async <T>(items: T[], size: number, fn: (item: T, i: number) => Promise<void>) => {
  for (let i = 0; i < items.length; i += size)
    await Promise.all(items.slice(i, i + size).map((item, j) => fn(item, i + j)));
};

// 1. Every driver on a job: a package of its vehicle type, accepted.
const auth = server.info.auth as { driverId: string; token: string }[];
const jobs: { driverId: string; token: string; trackingToken: string }[] = [];
let setupErrors = 0;
const stop = (p: { lat: number; lng: number }) => ({
  location: p,
  address: 'Bench St 1',
  contactName: 'Bench',
  contactPhone: '+254712345678',
});
await inBatches(auth, 50, async (a) => {
  const me = await call('GET', '/drivers/me', a.token);
  const created = await call('POST', '/packages', server.info.businessToken, {
    pickup: stop(randomPoint()),
    dropoff: stop(randomPoint()),
    vehicleType: me.body.vehicleType,
    countryId: server.info.countryId,
    parcel: { description: 'Bench' },
  });
  const accepted = await call('POST', `/packages/${created.body.id}/accept`, a.token);
  if (created.status !== 201 || accepted.status !== 200) setupErrors += 1;
  else
    jobs.push({
      driverId: a.driverId,
      token: a.token,
      trackingToken: (created.body.trackingUrl as string).split('/t/')[1]!,
    });
});

// 2. The subscribers: raw sockets speaking HTTP/1.0 (no chunked framing), as light as a client can be.
interface Subscriber {
  job: number;
  socket: net.Socket;
  received: Set<string>;
  statusCode: number;
}
const latencies: number[] = [];
let measuring = false;
let ended = 0;
const subs: Subscriber[] = [];
function subscribe(job: number): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1');
    const sub: Subscriber = { job, socket, received: new Set(), statusCode: 0 };
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('close', () => (ended += 1));
    socket.write(`GET /api/tracking/${jobs[job]!.trackingToken}/stream HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n`);
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (!sub.statusCode) {
        const head = buffer.indexOf('\r\n\r\n');
        if (head < 0) return;
        sub.statusCode = Number(buffer.slice(9, 12));
        buffer = buffer.slice(head + 4);
        resolve(sub);
      }
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!block.startsWith('event: location')) continue;
        const at = /"at":"([^"]+)"/.exec(block)![1]!;
        sub.received.add(at);
        if (measuring) latencies.push(Date.now() - Date.parse(at));
      }
    });
  });
}

const gcBefore = await server.ask('gc');
const rssBefore = rssKB(pid);
const connectStarted = performance.now();
await inBatches(
  Array.from({ length: subscribers }, (_, i) => i % jobs.length),
  500,
  async (job) => {
    subs.push(await subscribe(job));
  },
);
const connectSeconds = (performance.now() - connectStarted) / 1000;
const okSubs = subs.filter((s) => s.statusCode === 200).length;
// Idle: what the connections themselves cost, after the garbage of opening them is collected.
await new Promise((r) => setTimeout(r, 2000));
const gc = await server.ask('gc');
const rssIdle = rssKB(pid);

// 3. Positions: every driver every 3 s (spread evenly), each stamped with its send time (recordedAt),
// which the location event carries back as `at`.
const posted = new Map<number, string[]>();
let postErrors = 0;
measuring = true;
// This process's own event-loop delay: a late read here counts as latency too.
const ownLoop = monitorEventLoopDelay({ resolution: 1 });
ownLoop.enable();
const start = performance.now();
const rate = jobs.length / (PERIOD_MS / 1000);
const total = Math.floor(rate * duration);
const inflight: Promise<void>[] = [];
for (let n = 0; n < total; n += 1) {
  const due = start + (n * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  const job = n % jobs.length;
  const at = new Date().toISOString();
  const p = randomPoint();
  (posted.get(job) ?? posted.set(job, []).get(job)!).push(at);
  inflight.push(
    call('POST', '/drivers/me/location', jobs[job]!.token, { ...p, recordedAt: at }).then(
      (r) => void (r.status !== 204 && (postErrors += 1)),
      () => void (postErrors += 1),
    ),
  );
}
await Promise.all(inflight);
const postSeconds = (performance.now() - start) / 1000;
await new Promise((r) => setTimeout(r, PERIOD_MS + 1000));
measuring = false;
const stats = await server.ask('stats');

let expected = 0;
let lost = 0;
for (const s of subs) {
  for (const at of posted.get(s.job) ?? []) {
    expected += 1;
    if (!s.received.has(at)) lost += 1;
  }
}
const closedEarly = ended;
for (const s of subs) s.socket.destroy();
await pool.close();
await server.stop();

console.log(
  JSON.stringify(
    {
      scenario: 'B9 tracking SSE',
      machine: machine(),
      database: server.info.database,
      drivers,
      jobs: jobs.length,
      setupErrors,
      subscribers: {
        asked: subscribers,
        connected: okSubs,
        connectSeconds: Math.round(connectSeconds * 10) / 10,
        closedEarly,
      },
      memory: {
        rssBeforeMB: Math.round(rssBefore / 1024),
        rssIdleMB: Math.round(rssIdle / 1024),
        perIdleSubscriberKB: Math.round(((rssIdle - rssBefore) / okSubs) * 100) / 100,
        heapPerIdleSubscriberKB: Math.round(((gc.heapUsedKB - gcBefore.heapUsedKB) / okSubs) * 100) / 100,
        externalPerIdleSubscriberKB: Math.round(((gc.externalKB - gcBefore.externalKB) / okSubs) * 100) / 100,
        followersSeenByServer: gc.followers,
      },
      positions: { posted: total, perSecond: Math.round(total / postSeconds), errors: postErrors },
      locationEvents: {
        received: latencies.length,
        expected,
        lost,
        latencyMs: { p50: pct(latencies, 50), p99: pct(latencies, 99), max: pct(latencies, 100) },
      },
      serverEventLoopDelayMs: stats.eventLoopDelayMs,
      generatorEventLoopDelayMs: {
        p99: Math.round(ownLoop.percentile(99) / 1e4) / 100,
        max: Math.round(ownLoop.max / 1e4) / 100,
      },
      serverRssMB: stats.rssMB,
    },
    null,
    2,
  ),
);
process.exit(0);
