import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import type { SseSink } from '../../http/sse.js';
import { LocalBus } from '../../shared/bus.js';
import { parseBbox } from './live-map.js';
import { decodeCursor, encodeCursor, TrackingHub, type JobSnapshot } from './tracking-hub.js';
import { TrackingTokens } from './tracking-tokens.js';

const JOB = '6f3c94e2-b452-4c1b-96f1-7a7f35840395';

test('tracking tokens: 256 bits, one per nonce, only the hash to store', () => {
  const links = new TrackingTokens('k'.repeat(40), 'https://t.example.com');
  const a = links.token(JOB, 'n1');
  assert.ok(TrackingTokens.wellFormed(a));
  assert.equal(Buffer.from(a, 'base64url').length, 32);
  assert.equal(links.token(JOB, 'n1'), a);
  assert.notEqual(links.token(JOB, 'n2'), a);
  assert.notEqual(new TrackingTokens('o'.repeat(40), 'https://t.example.com').token(JOB, 'n1'), a);
  assert.equal(links.url(JOB, 'n1'), `https://t.example.com/t/${a}`);
  assert.equal(links.hashFor(JOB, 'n1'), TrackingTokens.hash(a));
  assert.match(TrackingTokens.hash(a), /^[0-9a-f]{64}$/);
  for (const bad of ['', 'short', `${a}x`, `${a.slice(0, 42)}!`])
    assert.equal(TrackingTokens.wellFormed(bad), false, bad);
});

test('status cursors are read back only when they are ours', () => {
  assert.deepEqual(decodeCursor(encodeCursor(JOB, 7)), { jobId: JOB, seq: 7 });
  for (const bad of [
    undefined,
    '',
    'garbage',
    Buffer.from(`${JOB}.x`).toString('base64url'),
    Buffer.from('a.1').toString('base64url'),
    'x'.repeat(101),
  ]) {
    assert.equal(decodeCursor(bad), undefined, String(bad));
  }
});

test('bbox: four numbers in range, minimums first, at most 30 degrees each way', () => {
  assert.deepEqual(parseBbox('36.7,-1.4,36.9,-1.2'), { minLng: 36.7, minLat: -1.4, maxLng: 36.9, maxLat: -1.2 });
  assert.deepEqual(parseBbox('-180,-90,-150,-60'), { minLng: -180, minLat: -90, maxLng: -150, maxLat: -60 });
  for (const [bad, code] of [
    ['', 'INVALID_BBOX'],
    ['1,2,3', 'INVALID_BBOX'],
    ['1,2,3,4,5', 'INVALID_BBOX'],
    ['0x1,2,3,4', 'INVALID_BBOX'],
    ['NaN,2,3,4', 'INVALID_BBOX'],
    ['181,0,182,1', 'INVALID_BBOX'],
    ['0,-91,1,0', 'INVALID_BBOX'],
    ['2,0,1,1', 'INVALID_BBOX'],
    ['0,0,0,1', 'INVALID_BBOX'],
    ['0,0,31,1', 'BBOX_TOO_LARGE'],
    ['0,0,1,30.5', 'BBOX_TOO_LARGE'],
  ]) {
    assert.throws(
      () => parseBbox(bad!),
      (err: { statusCode: number; code: string }) => err.statusCode === 400 && err.code === code,
      bad,
    );
  }
});

test('bbox: any finite decimal number, as JavaScript and map libraries print them', () => {
  // What a client computes (String(0.1 + 0.2) is "0.30000000000000004") and Leaflet's
  // getBounds().toBBoxString() sends: String() of each number, up to 17 significant digits.
  const lng = 36.7719 + 0.2;
  assert.equal(String(lng), '36.971900000000005');
  assert.deepEqual(parseBbox(`36.8219,${0.1 + 0.2},${lng},1.0000000000000002`), {
    minLng: 36.8219,
    minLat: 0.30000000000000004,
    maxLng: lng,
    maxLat: 1.0000000000000002,
  });
  assert.deepEqual(parseBbox('36.8219,-1.3,36.97190000000001,-1.2').maxLng, 36.97190000000001);
  const leaflet = [36.69277191162109, -1.3797220929689937, 36.95232391357422, -1.180498599456482].join(',');
  assert.deepEqual(
    Object.values(parseBbox(leaflet)),
    [36.69277191162109, -1.3797220929689937, 36.95232391357422, -1.180498599456482],
  );
  // Exponent forms (String(1e-7) is "1e-7"), either case, signed exponents, a leading sign or point.
  assert.deepEqual(parseBbox('1e-7,-3.5E+1,2.5e0,-3.4e1'), { minLng: 1e-7, minLat: -35, maxLng: 2.5, maxLat: -34 });
  assert.deepEqual(parseBbox('+1,.5,2.,5E-0'), { minLng: 1, minLat: 0.5, maxLng: 2, maxLat: 5 });
  assert.deepEqual(parseBbox(' 1 ,2,3,4\t'), { minLng: 1, minLat: 2, maxLng: 3, maxLat: 4 });
  assert.deepEqual(parseBbox('-180.000000000000000001,-90,-179.99999999999997,-89.99999999999999').minLng, -180);
  for (const bad of [
    'NaN,0,1,1',
    '0,0,Infinity,1',
    '-Infinity,0,1,1',
    '0,0,1e400,1',
    '0x10,0,20,1',
    '0,0,0b1,1',
    '0,0,1_0,1',
    ',0,1,1',
    '0,,1,1',
    '0,0,1,',
    '0,0,1,1,',
    '0,0,1,1,2',
    '.,0,1,1',
    '1e,0,2,1',
    'e5,0,1,1',
    '1e5.5,0,1,1',
    '1.2.3,0,4,1',
    '0,0,1 1,1',
    '0,0,- 1,1',
    '--1,0,1,1',
    '0,0,1e 2,1',
    '1e-7,0,1e-8,1',
    '180.00000000000003,0,181,1',
  ]) {
    assert.throws(
      () => parseBbox(bad),
      (err: { statusCode: number; code: string }) => err.statusCode === 400 && err.code === 'INVALID_BBOX',
      bad,
    );
  }
});

class Sink implements SseSink {
  closed = false;
  frames: string[] = [];
  send(frame: string) {
    this.frames.push(frame);
  }
  sendLatest(_key: string, frame: string) {
    this.frames.push(frame);
  }
  end(frame?: string) {
    if (frame) this.frames.push(frame);
    this.closed = true;
  }
  events(name: string) {
    return this.frames.filter((f) => f.includes(`event: ${name}\n`));
  }
}

function snapshot(overrides: Partial<JobSnapshot> = {}): JobSnapshot {
  return {
    promised: { pickupWindow: null, dropoffWindow: null, scheduledAt: null, timeZone: 'Africa/Nairobi' },
    jobType: 'PACKAGE',
    jobId: JOB,
    status: 'ASSIGNED',
    final: false,
    history: [
      { status: 'PENDING', at: '2026-11-25T09:00:00.000Z' },
      { status: 'ASSIGNED', at: '2026-11-25T09:01:00.000Z' },
    ],
    driverId: 'd1',
    driver: { firstName: 'Kamau', vehicleType: 'BIKE', vehiclePlate: 'K1' },
    position: null,
    pickup: { lat: -1.28, lng: 36.81 },
    dropoff: { lat: -1.3, lng: 36.8 },
    updatedAt: '2026-11-25T09:01:00.000Z',
    canSee: () => true,
    ...overrides,
  };
}

test('positions are throttled per job on their own times; every follower gets the same frames', async () => {
  const bus = new LocalBus();
  const hub = new TrackingHub({
    bus,
    logger: pino({ level: 'silent' }),
    load: async () => snapshot(),
    intervalMs: 50,
    positionTtlMs: 60_000,
    nowMs: () => Date.now(),
  });
  const a = new Sink();
  const b = new Sink();
  hub.follow(snapshot(), a, { mark: hub.mark(), viaToken: true });
  hub.follow(snapshot(), b, { mark: hub.mark(), viaToken: false });
  const t0 = 1_000_000;
  const at = (ms: number) => ({ lat: -1.28, lng: 36.81 + ms / 1e6, heading: null, speed: null, at: t0 + ms });
  hub.position('d1', at(0));
  hub.position('d1', at(10));
  hub.position('d1', at(20));
  assert.equal(a.events('location').length, 1);
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(a.events('location').length, 2);
  assert.ok(a.events('location')[1]!.includes(new Date(t0 + 20).toISOString()), 'the newest of the held positions');
  // A position an interval after the last one sent, by its own time, goes out at once.
  hub.position('d1', at(70));
  assert.equal(a.events('location').length, 3);
  assert.deepEqual(a.frames.slice(1), b.frames.slice(1));
  assert.ok(a.events('eta')[0]!.includes('"to":"PICKUP"'));
  hub.position('someone-else', at(500));
  assert.equal(a.events('location').length, 3);
  hub.close();
});

test('a change is read once and sent to every follower; a final status ends them; a token follower gets no reason', async () => {
  const bus = new LocalBus();
  let current = snapshot();
  let reads = 0;
  const hub = new TrackingHub({
    bus,
    logger: pino({ level: 'silent' }),
    load: async () => {
      reads += 1;
      return current;
    },
    intervalMs: 50,
    positionTtlMs: 60_000,
    nowMs: () => Date.now(),
  });
  const viaToken = new Sink();
  const viaBearer = new Sink();
  hub.follow(snapshot(), viaToken, { mark: hub.mark(), viaToken: true });
  hub.follow(snapshot(), viaBearer, {
    mark: hub.mark(),
    viaToken: false,
    auth: { userId: 'u', role: 'BUSINESS', sessionId: 's' },
  });
  current = snapshot({
    status: 'FAILED',
    final: true,
    history: [...current.history, { status: 'FAILED', at: '2026-11-25T09:02:00.000Z', reason: 'Call Otieno' }],
  });
  bus.publish('job.changed', {
    jobType: 'PACKAGE',
    jobId: JOB,
    status: 'FAILED',
    driverId: 'd1',
    actorId: 'd1',
    assigned: false,
    final: true,
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(reads, 1);
  assert.equal(viaToken.events('status').length, 2);
  assert.ok(!viaToken.frames.join('').includes('Otieno'));
  assert.ok(viaBearer.events('status')[1]!.includes('"reason":"Call Otieno"'));
  assert.ok(viaToken.closed && viaBearer.closed);
  assert.equal(hub.followers, 0);
  hub.close();
});

test('a change whose read fails is read again; account streams hear of what they may have missed', async () => {
  const bus = new LocalBus();
  let failures = 1;
  const changed = snapshot({
    status: 'PICKED_UP',
    history: [...snapshot().history, { status: 'PICKED_UP', at: '2026-11-25T09:03:00.000Z' }],
  });
  const hub = new TrackingHub({
    bus,
    logger: pino({ level: 'silent' }),
    load: async () => {
      if (failures-- > 0) throw new Error('database away');
      return changed;
    },
    intervalMs: 50,
    positionTtlMs: 60_000,
    nowMs: () => Date.now(),
  });
  const follower = new Sink();
  const account = new Sink();
  hub.follow(snapshot(), follower, { mark: hub.mark(), viaToken: true });
  hub.followAccount(account, { userId: 'u', role: 'ADMIN', sessionId: 's' });
  bus.publish('job.changed', {
    jobType: 'PACKAGE',
    jobId: JOB,
    status: 'PICKED_UP',
    driverId: 'd1',
    actorId: 'd1',
    assigned: false,
    final: false,
  });
  await new Promise((r) => setTimeout(r, 1300));
  assert.equal(follower.events('status').length, 2);
  assert.ok(follower.events('status')[1]!.includes('PICKED_UP'));
  bus.publish('bus.resync', {});
  assert.ok(account.events('resync').length >= 1);
  hub.close();
});
