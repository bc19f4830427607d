// ROUTER=osrm and ROUTER=valhalla (contract section 25) against stand-in servers that answer in the
// engines' documented JSON (OSRM's docs/http.md: /table and /route; Valhalla's matrix and route API
// references: /sources_to_targets and /route), with timeouts, errors and unroutable pairs falling back.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../src/config.js';
import { createRouter } from '../src/modules/routing/create-router.js';
import { straightLeg } from '../src/modules/routing/router.js';

const A = { lat: -1.2864, lng: 36.8172 };
const B = { lat: -1.2676, lng: 36.8108 };
const C = { lat: -1.3, lng: 36.9 };

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

async function standIn(
  handler: Handler,
): Promise<{ url: string; server: Server; seen: { url: string; body: string }[] }> {
  const seen: { url: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ url: req.url!, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server, seen };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** A route's figures from a stand-in: metres and seconds from the coordinates, so each pair differs. */
const fake = (from: { lat: number; lng: number }, to: { lat: number; lng: number }) => {
  const straight = straightLeg(from, to, 'CAR', 1);
  return { metres: straight.distanceMeters * 1.4 + 0.4, seconds: straight.durationSeconds * 1.1 + 0.3 };
};

async function fallbacks(registry: Registry) {
  const m = await registry.getSingleMetric('router_fallbacks_total')?.get();
  return Object.fromEntries((m?.values ?? []).map((v) => [`${v.labels.router}:${v.labels.reason}`, v.value]));
}

const build = (env: Record<string, string>) => {
  const registry = new Registry();
  const router = createRouter(loadConfig(env).routing, { registry, logger: pino({ level: 'silent' }) });
  return { router, registry };
};

describe('ROUTER=osrm', () => {
  let s: Awaited<ReturnType<typeof standIn>>;
  let mode: 'ok' | 'error' | 'slow' = 'ok';
  before(async () => {
    s = await standIn((req, _body, res) => {
      if (mode === 'error') return json(res, 500, { code: 'InternalError' });
      if (mode === 'slow') return void setTimeout(() => json(res, 200, { code: 'Ok' }), 1500);
      const url = new URL(req.url!, 'http://x');
      const m = /^\/(table|route)\/v1\/driving\/([^/]+)$/.exec(url.pathname);
      if (!m) return json(res, 400, { code: 'InvalidUrl' });
      const coords = m[2].split(';').map((c) => {
        const [lng, lat] = c.split(',').map(Number);
        return { lat, lng };
      });
      // C is on an island: no route to or from it.
      const isC = (p: { lat: number }) => p.lat === C.lat;
      if (m[1] === 'route') {
        if (coords.some(isC)) return json(res, 400, { code: 'NoRoute', message: 'Impossible route between points' });
        const f = fake(coords[0], coords[1]);
        return json(res, 200, {
          code: 'Ok',
          routes: [{ distance: f.metres, duration: f.seconds, legs: [] }],
          waypoints: [],
        });
      }
      assert.equal(url.searchParams.get('annotations'), 'duration,distance');
      const sources = url.searchParams.get('sources')!.split(';').map(Number);
      const destinations = url.searchParams.get('destinations')!.split(';').map(Number);
      const cell = (i: number, j: number, k: 'metres' | 'seconds') =>
        isC(coords[i]) || isC(coords[j]) ? null : fake(coords[i], coords[j])[k];
      json(res, 200, {
        code: 'Ok',
        durations: sources.map((i) => destinations.map((j) => cell(i, j, 'seconds'))),
        distances: sources.map((i) => destinations.map((j) => cell(i, j, 'metres'))),
        sources: sources.map(() => ({ location: [0, 0] })),
        destinations: destinations.map(() => ({ location: [0, 0] })),
      });
    });
  });
  after(() => s.server.close());

  test('route and matrix from /route and /table (annotations=duration,distance), whole numbers; unroutable pairs fall back', async () => {
    mode = 'ok';
    const { router, registry } = build({ ROUTER: 'osrm', ROUTER_URL: s.url });
    const leg = await router.route(A, B, 'CAR');
    const f = fake(A, B);
    assert.deepEqual(leg, {
      distanceMeters: Math.round(f.metres),
      durationSeconds: Math.round(f.seconds),
      routing: 'osrm',
    });
    assert.match(s.seen.at(-1)!.url, /^\/route\/v1\/driving\/36\.817200,-1\.286400;36\.810800,-1\.267600\?/);
    // A van takes the car's time × 1.2 (the ratio of the average town speeds).
    assert.equal((await router.route(A, B, 'VAN')).durationSeconds, Math.round(f.seconds * 1.2));
    const m = await router.matrix([A, B], [B, C, A], 'CAR');
    assert.equal(m.routing, 'osrm');
    assert.equal(m.fallbacks, 2);
    assert.deepEqual(m.distances[0], [
      Math.round(f.metres),
      straightLeg(A, C, 'CAR').distanceMeters,
      Math.round(fake(A, A).metres),
    ]);
    assert.equal(m.durations[1][0], Math.round(fake(B, B).seconds));
    assert.match(s.seen.at(-1)!.url, /\?sources=0;1&destinations=2;3;4&annotations=duration,distance$/);
    const noRoute = await router.route(A, C, 'CAR');
    assert.deepEqual(noRoute, { ...straightLeg(A, C, 'CAR'), routing: 'great-circle×1.3 (osrm fallback)' });
    assert.deepEqual(await fallbacks(registry), { 'osrm:unroutable': 3 });
  });

  test('a server error or a timeout: the straight estimate, counted by reason', async () => {
    const { router, registry } = build({ ROUTER: 'osrm', ROUTER_URL: s.url, ROUTER_TIMEOUT: '200ms' });
    mode = 'error';
    assert.equal((await router.route(A, B, 'CAR')).routing, 'great-circle×1.3 (osrm fallback)');
    const m = await router.matrix([A], [B, C], 'BIKE');
    assert.deepEqual(m.durations, [
      [straightLeg(A, B, 'BIKE').durationSeconds, straightLeg(A, C, 'BIKE').durationSeconds],
    ]);
    mode = 'slow';
    const started = Date.now();
    assert.equal((await router.route(A, B, 'CAR')).routing, 'great-circle×1.3 (osrm fallback)');
    assert.ok(Date.now() - started < 1200, 'the timeout answered, not the server');
    assert.deepEqual(await fallbacks(registry), { 'osrm:error': 3, 'osrm:timeout': 1 });
    mode = 'ok';
  });
});

describe('ROUTER=valhalla', () => {
  let s: Awaited<ReturnType<typeof standIn>>;
  let concise = false;
  before(async () => {
    s = await standIn((req, body, res) => {
      const q = JSON.parse(body);
      const isC = (p: { lat: number }) => p.lat === C.lat;
      const pt = (p: { lat: number; lon: number }) => ({ lat: p.lat, lng: p.lon });
      if (req.url === '/route') {
        if (q.locations.some(isC))
          return json(res, 400, { error_code: 442, error: 'No path could be found for input', status_code: 400 });
        const f = fake(pt(q.locations[0]), pt(q.locations[1]));
        return json(res, 200, {
          trip: { status: 0, units: 'kilometers', summary: { length: f.metres / 1000, time: f.seconds }, legs: [] },
        });
      }
      if (req.url !== '/sources_to_targets') return json(res, 404, { error_code: 106, error: 'Try any of...' });
      const cell = (i: number, j: number) => {
        const [from, to] = [q.sources[i], q.targets[j]];
        if (isC(from) || isC(to)) return { from_index: i, to_index: j, time: null, distance: null };
        const f = fake(pt(from), pt(to));
        return { from_index: i, to_index: j, time: f.seconds, distance: f.metres / 1000 };
      };
      const rows = q.sources.map((_: unknown, i: number) => q.targets.map((_t: unknown, j: number) => cell(i, j)));
      if (concise)
        return json(res, 200, {
          sources_to_targets: {
            durations: rows.map((r: { time: number }[]) => r.map((c) => c.time)),
            distances: rows.map((r: { distance: number }[]) => r.map((c) => c.distance)),
          },
          units: 'kilometers',
        });
      json(res, 200, { sources_to_targets: rows, sources: q.sources, targets: q.targets, units: 'kilometers' });
    });
  });
  after(() => s.server.close());

  test('route and matrix from /route and /sources_to_targets (kilometres to metres), costing by vehicle type', async () => {
    const { router, registry } = build({ ROUTER: 'valhalla', ROUTER_URL: s.url });
    const f = fake(A, B);
    assert.deepEqual(await router.route(A, B, 'TRUCK'), {
      distanceMeters: Math.round(f.metres),
      durationSeconds: Math.round(f.seconds),
      routing: 'valhalla',
    });
    assert.equal(JSON.parse(s.seen.at(-1)!.body).costing, 'truck');
    for (const shape of [false, true]) {
      concise = shape;
      const m = await router.matrix([A, C], [B, A], 'BIKE');
      assert.equal(JSON.parse(s.seen.at(-1)!.body).costing, 'motorcycle');
      assert.deepEqual(m.distances[0], [Math.round(f.metres), Math.round(fake(A, A).metres)]);
      assert.deepEqual(m.durations[1], [
        straightLeg(C, B, 'BIKE').durationSeconds,
        straightLeg(C, A, 'BIKE').durationSeconds,
      ]);
      assert.equal(m.fallbacks, 2);
    }
    assert.equal((await router.route(C, A, 'CAR')).routing, 'great-circle×1.3 (valhalla fallback)');
    assert.deepEqual(await fallbacks(registry), { 'valhalla:unroutable': 5 });
  });

  test('a server that is gone: every pair falls back, counted as errors', async () => {
    const gone = await standIn(() => undefined);
    const url = gone.url;
    await new Promise((resolve) => gone.server.close(resolve));
    const { router, registry } = build({ ROUTER: 'valhalla', ROUTER_URL: url });
    const m = await router.matrix([A, B], [C], 'CAR');
    assert.deepEqual(m.distances, [
      [straightLeg(A, C, 'CAR').distanceMeters],
      [straightLeg(B, C, 'CAR').distanceMeters],
    ]);
    assert.deepEqual(await fallbacks(registry), { 'valhalla:error': 2 });
  });
});

test('configuration: ROUTER=osrm and valhalla need ROUTER_URL, graph needs ROUTER_GRAPH; straight by default', () => {
  assert.equal(loadConfig({}).routing.kind, 'straight');
  assert.equal(loadConfig({}).routing.factor, 1.3);
  assert.throws(() => loadConfig({ ROUTER: 'osrm' }), /ROUTER=osrm needs ROUTER_URL/);
  assert.throws(() => loadConfig({ ROUTER: 'graph' }), /ROUTER=graph needs ROUTER_GRAPH/);
  assert.throws(() => loadConfig({ ROUTER_FACTOR: '0.5' }), /ROUTER_FACTOR must be a number from 1 to 3/);
  assert.equal(loadConfig({ ROUTER: 'valhalla', ROUTER_URL: 'http://v:8002/' }).routing.url, 'http://v:8002');
});
