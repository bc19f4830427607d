// B1b: positions over the driver WebSocket. Each connection may send at most 10 messages a second
// (contract), so the offered load is connections × 10/s; the script reports what the server applied.
// Also measures the in-process message path alone (parse, validate, index update) as the ceiling.
// Usage: npx tsx bench/b1b-location-ws.ts   (BENCH_CONNECTIONS=2000, BENCH_DURATION=10)
import WebSocket from 'ws';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { LocationMessage } from '../src/modules/drivers/drivers.schemas.js';
import { DriverIndex } from '../src/modules/matching/driver-index.js';
import { durationArg, machine, randomPoint, startServer } from './lib/harness.js';

const duration = durationArg();
const connections = Number(process.env.BENCH_CONNECTIONS ?? 2000);

// 1. The message path alone, in this process: what one core can ingest.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validate = addFormats(new Ajv({ strict: false })).compile(LocationMessage);
const index = new DriverIndex();
for (let i = 0; i < 100_000; i++) {
  index.upsert({ id: `d${i}`, firstName: 'D', vehicleType: 'BIKE', vehiclePlate: 'P', rating: null, countryId: null, serviceTypes: ['RIDE'], active: true, online: true, busy: false }, { ...randomPoint(), heading: null, speed: null, at: 1 });
}
const messages = Array.from({ length: 10_000 }, () => JSON.stringify({ type: 'location', ...randomPoint(), heading: 90, speed: 8 }));
const N = 300_000;
let t = performance.now();
for (let i = 0; i < N; i++) {
  const m = JSON.parse(messages[i % messages.length]) as { lat: number; lng: number; heading: number; speed: number };
  if (validate(m)) index.setPosition(`d${i % 100_000}`, { lat: m.lat, lng: m.lng, heading: m.heading, speed: m.speed, at: 2 + i });
}
const pathPerSec = Math.round(N / ((performance.now() - t) / 1000));

// 2. Real sockets against the app.
const server = await startServer('app', { BENCH_SESSIONS: String(connections) });
const auth = server.info.auth as { token: string }[];
const sockets: WebSocket[] = [];
let errors = 0;
let opened = 0;
for (const a of auth) {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/drivers/me/stream`, { headers: { authorization: `Bearer ${a.token}` } });
  ws.on('message', () => (errors += 1));
  ws.on('error', () => undefined);
  sockets.push(ws);
  await new Promise((r) => ws.once('open', r).once('error', r));
  if (ws.readyState === ws.OPEN) opened += 1;
}
const before = await server.ask('stats');
let sent = 0;
t = performance.now();
// About 9 messages a second per socket (just under the cap), spread over the second.
let tick = 0;
const timer = setInterval(() => {
  tick += 1;
  for (let i = 0; i < sockets.length; i += 1) {
    if ((tick + i) % 11 === 0 && sockets[i].readyState === WebSocket.OPEN) {
      sockets[i].send(`{"type":"location","lat":${-1.29 + Math.random() / 10},"lng":${36.82 + Math.random() / 10},"speed":7}`);
      sent += 1;
    }
  }
}, 10);
await new Promise((r) => setTimeout(r, duration * 1000));
clearInterval(timer);
const elapsed = (performance.now() - t) / 1000;
await new Promise((r) => setTimeout(r, 1500));
const after = await server.ask('stats');
for (const ws of sockets) ws.close();
await server.stop();
const written = after.flushes.reduce((n: number, f: { rows: number }) => n + f.rows, 0);

console.log(
  JSON.stringify({
    bench: 'B1b positions over the driver WebSocket',
    connections: opened,
    sentPerSec: Math.round(sent / elapsed),
    errorReplies: errors,
    acceptedPerSec: Math.round((sent - errors) / elapsed),
    writeBehindBatches: after.flushes.length + before.flushes.length,
    writeBehindRows: written + before.flushes.reduce((n: number, f: { rows: number }) => n + f.rows, 0),
    messagePathPerSecOneCore: pathPerSec,
    target: { positionsPerSec: 100_000 },
    note: 'offered load is capped by the generator (same 2 cores) and by the 10 msg/s/connection rule; messagePathPerSecOneCore is the server-side ceiling',
    serverRssMB: after.rssMB,
    machine: machine(),
  }),
);
