// B1b: positions over the driver WebSocket. Each connection may send at most 10 messages a second
// (contract), so the offered load is connections × 10/s; the script reports what the server applied.
// Also measures the in-process message path alone (parse, validate, index update) as the ceiling.
// Usage: npx tsx bench/b1b-location-ws.ts   (BENCH_CONNECTIONS=12000, BENCH_DURATION=10)
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { LocationMessage } from '../src/modules/drivers/drivers.schemas.js';
import { DriverIndex } from '../src/modules/matching/driver-index.js';
import { durationArg, machine, randomPoint, startServer, processCpuUs } from './lib/harness.js';

const duration = durationArg();
const connections = Number(process.env.BENCH_CONNECTIONS ?? 12_000);

// 1. The message path alone, in this process: what one core can ingest.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validate = addFormats(new Ajv({ strict: false })).compile(LocationMessage);
const index = new DriverIndex();
for (let i = 0; i < 100_000; i++) {
  index.upsert(
    {
      id: `d${i}`,
      firstName: 'D',
      vehicleType: 'BIKE',
      vehiclePlate: 'P',
      rating: null,
      countryId: null,
      serviceTypes: ['RIDE'],
      active: true,
      online: true,
      busy: false,
    },
    { ...randomPoint(), heading: null, speed: null, at: 1 },
  );
}
const messages = Array.from({ length: 10_000 }, () =>
  JSON.stringify({ type: 'location', ...randomPoint(), heading: 90, speed: 8 }),
);
const N = 300_000;
let t = performance.now();
for (let i = 0; i < N; i++) {
  const m = JSON.parse(messages[i % messages.length]) as { lat: number; lng: number; heading: number; speed: number };
  if (validate(m))
    index.setPosition(`d${i % 100_000}`, { lat: m.lat, lng: m.lng, heading: m.heading, speed: m.speed, at: 2 + i });
}
const pathPerSec = Math.round(N / ((performance.now() - t) / 1000));

// 2. Real sockets against the app. A driver app batches its GPS fixes (as Android's and iOS's
// location APIs do to save battery) and flushes them every PERIOD_MS: BURST messages in one TCP write,
// each a full position message that the server parses, validates and applies. BURST stays within
// the contract's 10 messages per second per connection, and PERIOD_MS above one second leaves slack
// for scheduling jitter. The server counts what it applied.
const BURST = 10;
const PERIOD_MS = 1200;
const TICK_MS = 10;
const server = await startServer('app', { BENCH_SESSIONS: String(connections) });
const auth = server.info.auth as { token: string }[];
const sockets: WebSocket[] = [];
let errors = 0;
let opened = 0;
for (let i = 0; i < auth.length; i += 200) {
  await Promise.all(
    auth.slice(i, i + 200).map((a) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/drivers/me/stream`, {
        headers: { authorization: `Bearer ${a.token}` },
      });
      ws.on('message', () => (errors += 1));
      ws.on('error', () => undefined);
      sockets.push(ws);
      return new Promise((resolve) => ws.once('open', resolve).once('error', resolve)).then(() => {
        if (ws.readyState === ws.OPEN) opened += 1;
      });
    }),
  );
}
// Each driver drives on: a fix every ~120 ms moves it up to ~15 m (about 45 km/h), so it changes
// grid cell now and then, as real drivers do (random jumps across town would make every fix a move).
// Its flushes are built up front, as masked WebSocket frames (RFC 6455 5.2, what `ws` would send), so
// the generator spends its share of the two cores on sending, not on formatting: FLUSHES of them
// per driver, driven round a loop (the last fix leads back to the first).
const FLUSHES = 8;
const STEP_DEG = 0.000135;
const frame = (text: string) => {
  const payload = Buffer.from(text);
  if (payload.length > 125) throw new Error('fix message too long for a short frame');
  const mask = randomBytes(4);
  const out = Buffer.alloc(6 + payload.length);
  out[0] = 0x81; // FIN, text
  out[1] = 0x80 | payload.length; // masked, length
  mask.copy(out, 2);
  for (let k = 0; k < payload.length; k++) out[6 + k] = payload[k] ^ mask[k & 3];
  return out;
};
const flushes = sockets.map(() => {
  const start = randomPoint();
  let heading = Math.floor(Math.random() * 360);
  const fixes: { lat: number; lng: number; heading: number }[] = [];
  let { lat, lng } = start;
  // Out for half the loop, then back along the same road.
  for (let n = 0; n < (FLUSHES * BURST) / 2; n++) {
    heading = (heading + Math.floor(Math.random() * 21) - 10 + 360) % 360;
    lat += STEP_DEG * Math.cos((heading * Math.PI) / 180);
    lng += STEP_DEG * Math.sin((heading * Math.PI) / 180);
    fixes.push({ lat, lng, heading });
  }
  const loop = [
    ...fixes,
    ...fixes
      .slice()
      .reverse()
      .map((f) => ({ ...f, heading: (f.heading + 180) % 360 })),
  ];
  return Array.from({ length: FLUSHES }, (_, b) =>
    Buffer.concat(
      loop
        .slice(b * BURST, (b + 1) * BURST)
        .map((f) => frame(`{"type":"location","lat":${f.lat},"lng":${f.lng},"heading":${f.heading},"speed":13.9}`)),
    ),
  );
});
const slots = PERIOD_MS / TICK_MS;
const before = await server.ask('stats');
const cpuBefore = processCpuUs(server.child.pid!);
let sent = 0;
t = performance.now();
// Slot k (every slots-th socket) is due at t + k × TICK_MS: a driver's flushes are due exactly
// PERIOD_MS apart, and a timer that runs late catches up on the slots due (open loop). Only a send
// delayed by more than PERIOD_MS - 1000 ms could meet the per-second cap.
let done = 0;
const timer = setInterval(() => {
  const due = Math.floor((performance.now() - t) / TICK_MS) + 1;
  for (; done < due; done++) {
    const slot = done % slots;
    const flush = Math.floor(done / slots) % FLUSHES;
    for (let i = slot; i < sockets.length; i += slots) {
      const ws = sockets[i];
      if (ws.readyState !== WebSocket.OPEN) continue;
      (ws as unknown as { _socket: Socket })._socket.write(flushes[i][flush]);
      sent += BURST;
    }
  }
}, TICK_MS / 2);
await new Promise((r) => setTimeout(r, duration * 1000));
clearInterval(timer);
const elapsed = (performance.now() - t) / 1000;
await new Promise((r) => setTimeout(r, 1500));
const cpuUsed = processCpuUs(server.child.pid!) - cpuBefore;
const after = await server.ask('stats');
for (const ws of sockets) ws.terminate();
await server.stop();
const applied = after.positionsApplied - before.positionsApplied;
const written = after.flushes.reduce((n: number, f: { rows: number }) => n + f.rows, 0);

console.log(
  JSON.stringify({
    bench: 'B1b positions over the driver WebSocket',
    connections: opened,
    messagesPerFlush: BURST,
    flushEveryMs: PERIOD_MS,
    sentPerSec: Math.round(sent / elapsed),
    errorReplies: errors,
    appliedPerSec: Math.round(applied / elapsed),
    appliedOfSent: sent ? Math.round((applied / sent) * 1000) / 1000 : 0,
    serverCpuUsPerPosition: applied ? Math.round((cpuUsed / applied) * 10) / 10 : 0,
    serverEventLoopDelayMs: after.eventLoopDelayMs,
    writeBehindBatches: after.flushes.length + before.flushes.length,
    writeBehindRows: written + before.flushes.reduce((n: number, f: { rows: number }) => n + f.rows, 0),
    messagePathPerSecOneCore: pathPerSec,
    target: { positionsPerSec: 100_000 },
    serverRssMB: after.rssMB,
    machine: machine(),
  }),
);
